"""``--budget-tokens`` / ``--budget-cost`` (``runner/budget.py``): a sample starts only when the
spent figure plus the most of what is in flight and of it stays within the budget; a budget stop
lets the samples in flight finish and be recorded, and a resume counts what was spent before."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options

from sieval.cost.budget import parse_budget_cost, parse_budget_tokens
from sieval.cost.forecast import CostOptions
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval
from sieval.setting_names import named_as
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

from .fakes import FakeTask, answer, write_data

TASKS = "[{name: arc_easy_kshot_ppl, n: 6, num_fewshot: 1}, {name: mmlu_kshot_clp, n: 6}]"


@pytest.mark.parametrize(("text", "value"), [("50000", 50000), ("50_000", 50000), ("5e4", 50000)])
def test_token_budgets_parsed(text: str, value: int) -> None:
    assert parse_budget_tokens(text) == value


@pytest.mark.parametrize("text", ["0", "-5", "1.5", "nan", "inf", "many", ""])
def test_token_budgets_that_mean_nothing_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--budget-tokens .*whole number of tokens >= 1"):
        parse_budget_tokens(text)


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "five"])
def test_cost_budgets_that_mean_nothing_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--budget-cost .*an amount > 0"):
        parse_budget_cost(text)
    assert parse_budget_cost("2.50") == 2.5


def config(url: str, extra: str = "", concurrency: int = 3) -> Any:
    return parse_config(
        f"models: [{{name: m, endpoint: '{url}', model: sieval-reference, "
        f"concurrency_limit: {concurrency}{extra}}}]\ntasks: {TASKS}"
    )


def lines(run_dir: Path, task: str) -> list[dict[str, Any]]:
    path = run_dir / "m" / task / "records.jsonl"
    return [msgspec.json.decode(x) for x in path.read_bytes().splitlines() if x]


def usage_of(line: dict[str, Any]) -> int:
    """A record line's prompt + output tokens, read from its usage columns or requests."""
    columns = line.get("requests_columns", {})
    total = 0
    for i, request in enumerate(line["requests"].values()):
        for key in ("input_tokens", "output_tokens"):
            column = columns.get(f"usage.{key}")
            value = request.get("usage", {}).get(key)
            if value is None:
                value = column[i] if isinstance(column, list) else column
            total += value
    return total


def spent(run_dir: Path) -> int:
    return sum(
        usage_of(x) for t in ("arc_easy_kshot_ppl", "mmlu_kshot_clp") for x in lines(run_dir, t)
    )


def wire_requests(run_dir: Path) -> int:
    log = (run_dir / "m" / "wire.jsonl").read_bytes().splitlines()
    urls = [msgspec.json.decode(x)["url"] for x in log if x]
    return sum(url.endswith("/v1/completions") for url in urls)


async def test_a_budget_stops_the_run_within_it_and_a_resume_goes_on(tmp_path: Path) -> None:
    async with ReferenceServer() as server:
        whole = await arun_eval(config(server.url), options(out=tmp_path / "whole"))
        total = spent(whole.run_dir)
        budget = total // 2
        opts = options(
            out=tmp_path / "out",
            wire_log=True,
            cost=CostOptions(budget_tokens=budget),
        )
        first = await arun_eval(config(server.url), opts)
        assert first.exit_code == 1
        assert first.stopped is not None and first.stopped.startswith("stopped: budget: spent ")
        figures = first.report.budget.tokens
        assert figures.budget == budget and figures.spent_before == 0
        assert figures.spent == spent(first.run_dir) <= budget  # exact counts: never over
        assert first.report.stopped == first.stopped == first.report.budget.stopped
        most = int(re.search(r"may take up to ([\d,]+) tokens", first.stopped)[1].replace(",", ""))
        assert figures.spent + most > budget  # the sample it did not start would not fit
        missing = sum(r.samples.missing for r in first.report.results)
        assert missing > 0
        # the samples in flight when it stopped finished: every request sent is recorded
        recorded = sum(
            len(x["requests"])
            for t in ("arc_easy_kshot_ppl", "mmlu_kshot_clp")
            for x in lines(first.run_dir, t)
        )
        assert wire_requests(first.run_dir) == recorded

        larger = await arun_eval(
            config(server.url),
            options(resume=first.run_dir, cost=CostOptions(budget_tokens=total)),
        )
    assert larger.exit_code == 0 and larger.stopped is None
    again = larger.report.budget.tokens
    assert again.spent_before == figures.spent  # the first session counts against it
    assert again.spent == spent(larger.run_dir) == total
    for a, b in zip(whole.report.results, larger.report.results, strict=True):
        assert a.metrics == b.metrics


async def test_a_budget_that_fits_nothing_stops_before_the_first_sample(tmp_path: Path) -> None:
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url),
            options(out=tmp_path, cost=CostOptions(budget_tokens=10)),
        )
    assert result.exit_code == 1 and "spent 0 tokens of 10 tokens" in (result.stopped or "")
    assert all(r.samples.missing == r.samples.total for r in result.report.results)


async def test_a_cost_budget_needs_every_model_s_price(tmp_path: Path) -> None:
    opts = options(out=tmp_path / "out", cost=CostOptions(budget_cost=1.0))
    with pytest.raises(
        ConfigError, match=r"model 'm' has none: set price: \{input: IN, output: OUT\}"
    ):
        await arun_eval(config("http://127.0.0.1:9"), opts)
    with named_as("flags"), pytest.raises(ConfigError, match=r"set --price IN,OUT\[,CURRENCY\]"):
        await arun_eval(config("http://127.0.0.1:9"), opts)
    entry = (
        "{name: %s, endpoint: 'http://x:9', model: x, price: {input: 1, output: 2, currency: %s}}"
    )
    two = parse_config(
        f"models:\n  - {entry % ('a', 'USD')}\n  - {entry % ('b', 'EUR')}\ntasks: {TASKS}"
    )
    with pytest.raises(ConfigError, match="prices are in 2 currencies"):
        await arun_eval(two, opts)
    assert not (tmp_path / "out").exists()


async def test_a_cost_budget_stops_at_the_price(tmp_path: Path) -> None:
    price = ", price: {input: 1000, output: 1000, currency: credits}"
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url, price),
            options(out=tmp_path, cost=CostOptions(budget_cost=5.0)),
        )
    figures = result.report.budget.cost
    assert figures.currency == "credits" and figures.budget == 5.0
    assert figures.spent == pytest.approx(spent(result.run_dir) * 1000 / 1e6)
    assert figures.spent <= 5.0 and result.exit_code == 1
    assert "(--budget-cost)" in (result.stopped or "") and "credits" in result.stopped


def _fake(prompt_tokens: int | None) -> FakeTransport:
    """The fake completions server, its replies' usage replaced (or left out: ``None``)."""

    def handler(request: HttpRequest) -> HttpReply:
        status, data = answer(request.url, request.body)
        if "usage" in data:
            if prompt_tokens is None:
                del data["usage"]
            else:
                data["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": 1}
        return json_reply(data, status=status)

    return FakeTransport(handler)


def _fake_config(concurrency: int) -> Any:
    return parse_config(
        f"models: [{{name: m, endpoint: 'http://fake.invalid', model: fake-model, "
        f"concurrency_limit: {concurrency}}}]\ntasks: [{{name: fake_qa}}]"
    )


async def test_a_reply_without_usage_counts_at_its_forecast(tmp_path: Path) -> None:
    write_data(tmp_path / "data", ["aa", "bb", "cc", "dd"])
    result = await arun_eval(
        _fake_config(4),
        options(
            out=tmp_path / "out", data_dir=tmp_path / "data", cost=CostOptions(budget_tokens=25)
        ),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: _fake(None),
    )
    # no /tokenize there: "Q: aa" is estimated at 5 bytes / 4 = 1 token, plus max_tokens 4, for
    # each of a sample's 2 requests: 10 tokens a sample; the third would pass 25
    figures = result.report.budget  # the whole summary
    assert figures.tokens.spent == 20 and figures.from_forecast == 4
    assert "the next sample may take up to 10 tokens" in (result.stopped or "")
    (entry,) = result.report.results
    assert entry.samples.scored == 2 and entry.cost.actual.without_usage == 4
    assert entry.cost.forecast.method == "estimate: bytes / 4"


async def test_an_estimate_below_the_server_s_count_is_caught_and_said(tmp_path: Path) -> None:
    write_data(tmp_path / "data", ["aa", "bb", "cc"])
    result = await arun_eval(
        _fake_config(1),
        options(
            out=tmp_path / "out", data_dir=tmp_path / "data", cost=CostOptions(budget_tokens=30)
        ),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: _fake(50),
    )
    # admitted on its estimate (10 tokens), the first sample reported 2 x (50 + 1)
    assert result.report.budget.tokens.spent == 102
    assert "over by 72 tokens: a prompt count the samples were admitted on was an estimate" in (
        result.stopped or ""
    )
    assert result.report.results[0].samples.scored == 1


async def test_a_budget_without_a_forecast_counts_as_it_goes(tmp_path: Path) -> None:
    """``--no-forecast``: no forecast.json, and each sample's prompts are counted (through the
    tokenize route) when it is admitted."""
    async with ReferenceServer() as server:
        result = await arun_eval(
            config(server.url),
            options(out=tmp_path, cost=CostOptions(forecast=False, budget_tokens=5000)),
        )
    assert result.forecast is None and not (result.run_dir / "forecast.json").exists()
    assert all(r.cost.forecast is None for r in result.report.results)
    assert result.report.budget.tokens.spent == spent(result.run_dir) <= 5000
    assert result.stopped is not None and "stopped: budget" in result.stopped


async def test_a_negative_usage_fails_its_sample_and_never_lowers_the_spent_figure(
    tmp_path: Path,
) -> None:
    """A server reporting -100000 prompt tokens (issue 33.4) made the report say it spent a
    negative number and the budget never stop: such a reply is refused, its usage never counted."""
    write_data(tmp_path / "data", ["aa", "bb", "cc"])

    def handler(request: HttpRequest) -> HttpReply:
        status, data = answer(request.url, request.body)
        if "usage" in data:
            data["usage"] = {"prompt_tokens": -100_000, "completion_tokens": 1}
        return json_reply(data, status=status)

    result = await arun_eval(
        _fake_config(1),
        options(
            out=tmp_path / "out", data_dir=tmp_path / "data", cost=CostOptions(budget_tokens=25)
        ),
        tasks={"fake_qa": FakeTask()},
        transport_factory=lambda cfg: FakeTransport(handler),
    )
    (entry,) = result.report.results
    assert entry.samples.scored == 0 and entry.samples.failed >= 1
    assert result.report.budget.tokens.spent >= 0
    assert entry.cost.actual.input_tokens >= 0
    for record in lines(result.run_dir, "fake_qa"):
        assert "usage.prompt_tokens is -100000, not a token count" in record["error"]["message"]
