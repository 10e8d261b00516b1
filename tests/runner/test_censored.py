"""Censored answers end to end (issue 33): counted and bounded in report.json and every view, said
by ``sieval compare``, and re-run at a larger budget by ``--rerun-censored`` as recorded re-runs.

The server here is a fake completions endpoint for ``gsm8k_kshot_base_gen`` whose answer depends
on the budget it is given: below 64 tokens it ends for length, having written ``#### 18`` only for
the ducks question (an answer before the cut: scored, not censored); at 64 or more it answers
``#### 18`` (right for the ducks, wrong for the others), but for the robe question, which it
never finishes. So with ``max_tokens: 16`` three of the four answers are censored, and a re-run at
x8 answers two of them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rich.console import Console

from sieval.cli.compare import render_comparison
from sieval.cli.formats import render_rows, result_rows
from sieval.cli.report import render_report, render_summary
from sieval.errors import ConfigError
from sieval.runner import RunOptions, arun_eval, parse_config
from sieval.store.records import expand_requests, read_records
from sieval.store.records.compact import Shared
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

from .fakes import answer

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
CONFIG = """
models: [{name: m, endpoint: 'http://fake.invalid', model: fake-model, concurrency_limit: 2}]
tasks: [{name: gsm8k_kshot_base_gen, n: 4, num_fewshot: 1, options: {max_tokens: 16}}]
"""


class BudgetServer:
    """The fake completions server; ``budgets`` holds each completion's max_tokens, in order."""

    def __init__(self) -> None:
        self.budgets: list[int] = []

    def transport(self) -> FakeTransport:
        return FakeTransport(self.handle)

    def handle(self, request: HttpRequest) -> HttpReply:
        if not request.url.endswith("/v1/completions"):
            status, data = answer(request.url, request.body)
            return json_reply(data, status=status)
        body = msgspec.json.decode(request.body or b"{}")
        if not body:  # the pre-flight's route probe: refused unread, as a server does
            return json_reply({"error": {"message": "prompt: Field required"}}, status=400)
        budget = int(body["max_tokens"])
        self.budgets.append(budget)
        question = str(body["prompt"]).rsplit("Question: ", 1)[1]
        if budget >= 64 and "robe" not in question:
            text, finish = " so it is\n#### 18", "stop"
        elif "ducks" in question:
            text, finish = " #### 18 and", "length"  # the answer came before the cut
        else:
            text, finish = " Let me see", "length"
        return json_reply(
            {
                "id": "cmpl-1",
                "object": "text_completion",
                "model": "fake-model",
                "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        )


async def run(tmp_path: Path, server: BudgetServer, **options: Any) -> Any:
    return await arun_eval(
        parse_config(CONFIG),
        RunOptions(out=tmp_path / "out", data_dir=DATA, preflight=False, **options),
        transport_factory=lambda cfg: server.transport(),
    )


def unit(result: Any) -> dict[str, Any]:
    """The run's one unit as report.json holds it (plain data: an absent key is absent)."""
    (entry,) = result.report.results
    return dict(msgspec.to_builtins(entry))


def shown(*items: Any, width: int = 80) -> str:
    buffer = io.StringIO()
    screen = Console(file=buffer, width=width, force_terminal=False, color_system=None)
    for item in items:
        screen.print(item)
    return buffer.getvalue()


@pytest.fixture(scope="module")
async def first(tmp_path_factory: Any) -> tuple[Any, BudgetServer]:
    server = BudgetServer()
    return await run(tmp_path_factory.mktemp("censored"), server), server


async def test_censored_answers_are_counted_with_the_headline_s_bounds(
    first: tuple[Any, BudgetServer],
) -> None:
    result, server = first
    assert server.budgets == [16] * 4
    entry = unit(result)
    assert entry["metrics"]["exact_match"] == 0.25  # the ducks, answered before the cut
    assert entry["metrics"]["censored_rate"] == 0.75
    censored = entry["censored"]
    assert (censored["count"], censored["of"], censored["share"]) == (3, 4, 0.75)
    assert censored["as_wrong"]["value"] == 0.25 and censored["as_wrong"]["n"] == 4
    assert censored["left_out"]["value"] == 1.0 and censored["left_out"]["n"] == 1
    low, high = censored["as_wrong"]["ci"]
    assert low < 0.25 < high
    assert "reruns" not in censored


async def test_every_view_shows_the_censored_share_and_the_bounds_at_80_columns(
    first: tuple[Any, BudgetServer],
) -> None:
    result, _ = first
    report = result.report
    summary = shown(render_summary(report))
    assert max(len(line) for line in summary.splitlines()) <= 80
    line = " ".join(summary.split())
    assert (
        "censored: gsm8k_kshot_base_gen 3/4 (75%); exact_match 0.2500 as wrong, 1.0000 left out"
        in line
    )
    full = shown(*render_report(report))
    assert max(len(row) for row in full.splitlines()) <= 80
    (wrong,) = [row for row in full.splitlines() if "censored as wrong" in row]
    (out,) = [row for row in full.splitlines() if "censored left out" in row]
    assert "0.2500" in wrong and "1.0000" in out
    rows = {r["metric"]: r for r in result_rows(report)}
    assert rows["censored.as_wrong.exact_match"]["value"] == 0.25
    assert rows["censored.left_out.exact_match"]["n"] == 1
    assert rows["censored_rate"]["value"] == 0.75
    md = render_rows(result_rows(report), "md")
    assert "| m | gsm8k_kshot_base_gen | censored.left_out.exact_match | 1.0000 |" in md
    csv = render_rows(result_rows(report), "csv")
    assert "m,gsm8k_kshot_base_gen,censored.as_wrong.exact_match,0.25," in csv


async def test_a_rerun_at_a_larger_budget_is_recorded_and_scored(
    tmp_path: Path, first: tuple[Any, BudgetServer]
) -> None:
    result, _ = first
    run_dir = tmp_path / "run"
    shutil.copytree(result.run_dir, run_dir)
    before = tmp_path / "before"
    shutil.copytree(run_dir, before)
    path = run_dir / "m" / "gsm8k_kshot_base_gen" / "records.jsonl"
    lines_before = path.read_bytes().splitlines()
    server = BudgetServer()
    again = await run(tmp_path, server, resume=run_dir, rerun_censored=8)
    assert server.budgets == [128] * 3  # only the three censored samples, at 16 x 8
    lines = path.read_bytes().splitlines()
    assert lines[:4] == lines_before  # the first answers are kept, earlier lines
    reruns = [json.loads(line) for line in lines[4:]]
    assert {r["sample_id"] for r in reruns} == {"test/1", "test/2", "test/3"}
    for record in reruns:
        assert record["rerun"] == {"of": "censored", "factor": 8.0, "max_tokens": {"gen": 128},
                                   "was": {"gen": 16}}  # fmt: skip
    latest = read_records(path).records
    shared = Shared.load(path.with_name("shared.jsonl"))
    sent = expand_requests(latest["test/2"].requests, shared)["gen"].body
    assert sent is not None and sent["max_tokens"] == 128  # the body as sent says it too
    assert latest["test/0"].rerun is None
    entry = unit(again)
    censored = entry["censored"]
    assert (censored["count"], censored["of"]) == (1, 4)  # the robe, still cut
    assert censored["as_wrong"]["value"] == 0.25
    assert censored["left_out"]["value"] == pytest.approx(1 / 3)
    assert censored["reruns"] == {"samples": 3, "answered": 2, "still_censored": 1, "failed": 0,
                                  "max_tokens": [128], "factors": [8.0]}  # fmt: skip
    text = " ".join(shown(render_summary(again.report)).split())
    assert "3 re-run at max_tokens 128: 2 answered, 1 still censored" in text
    # the same factor again runs nothing; a larger one only what is still censored
    server.budgets.clear()
    same = await run(tmp_path, server, resume=run_dir, rerun_censored=8)
    assert server.budgets == [] and unit(same)["censored"] == censored
    larger = await run(tmp_path, server, resume=run_dir, rerun_censored=16)
    assert server.budgets == [256] and unit(larger)["censored"]["reruns"]["samples"] == 3
    # compare says the shares differ
    from sieval.analysis.compare import compare_runs

    compared = compare_runs(before, run_dir)
    (task,) = compared["tasks"]
    assert task["censored"] == {"a": {"count": 3, "of": 4, "share": 0.75},
                                "b": {"count": 1, "of": 4, "share": 0.25},
                                "differ": True}  # fmt: skip
    said = [str(x) for x in render_comparison(compared, names=("before", "after"))]
    (line,) = [x for x in said if "censored answers differ" in x]
    assert "before 75.0% (3/4), after 25.0% (1/4)" in line
    same_runs = compare_runs(run_dir, run_dir)
    assert not any("censored answers" in str(x) for x in render_comparison(same_runs))


@pytest.mark.parametrize("factor", [1.0, 0.5, float("nan"), float("inf")])
async def test_a_rerun_factor_must_be_above_one(tmp_path: Path, factor: float) -> None:
    with pytest.raises(ConfigError, match="--rerun-censored .* a number above 1"):
        await run(tmp_path, BudgetServer(), rerun_censored=factor)
    assert not (tmp_path / "out").exists()  # refused before anything was made
