"""The server's measured rate and the forecast's time (``cost/rate.py``): the arithmetic on
planted timings (a planted server clock, no sleeps), the probe's sizes, which models are probed,
the time column at 80 columns, and the probe end to end against the reference server."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from runs import options

from sieval.cli.costs import render_forecast, time_lines
from sieval.cost.forecast import CostOptions, Counting, Forecast, UnitForecast, read_forecast
from sieval.cost.rate import (
    LONG_MOST_S,
    MEDIUM_TOKENS,
    REUSE_S,
    Observed,
    ProbeFailed,
    ServerRate,
    _keep,
    _kept,
    duration,
    limits,
    local,
    probe,
    rate_from,
    typical_prompt,
)
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIEVAL_CACHE", str(tmp_path / "cache"))


def test_the_rates_come_out_of_planted_timings() -> None:
    # a server taking 0.1 s a request, 200 prompt tokens/s, 12 tokens/s after the first
    def took(prompt: int, output: int) -> Observed:
        return Observed(prompt, output, 0.1 + prompt / 200 + (output - 1) / 12)

    prefill, decode, latency = rate_from(took(32, 1), took(288, 1), took(40, 16))
    assert prefill == pytest.approx(200)
    assert latency == pytest.approx(0.1)
    assert decode == pytest.approx(12)


def test_noisy_timings_give_a_lower_figure_not_a_negative_one() -> None:
    # the longer prompt answered faster than the short one (another request was in the way)
    prefill, decode, latency = rate_from(
        Observed(32, 1, 2.0), Observed(288, 1, 1.44), Observed(40, 1, 0.5)
    )
    assert prefill == pytest.approx(288 / 1.44)  # its own tokens over its own seconds
    assert latency == pytest.approx(2.0 - 32 / 200)
    assert decode is None  # one token answered: no decode rate


def test_the_time_of_a_unit_at_a_rate() -> None:
    rate = ServerRate(model="m", prefill=100.0, decode=10.0, latency=0.5)
    assert rate.seconds_of(4, 8000, 200) == pytest.approx(4 * 0.5 + 80 + 20)
    assert ServerRate(model="m").seconds_of(1, 10, 1) is None
    no_decode = ServerRate(model="m", prefill=100.0)
    assert no_decode.seconds_of(1, 100, 50) == pytest.approx(1.0)
    assert [duration(s) for s in (0.2, 42, 450, 1500, 9000)] == [
        "<1 s", "42 s", "7.5 min", "25 min", "2.5 h"
    ]  # fmt: skip


class Planted:
    """A server whose prefill slows with length (150 tokens/s at 0, half that at 4,000 more),
    with the seconds on a planted clock: what the probe asked, and for what."""

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    async def __call__(
        self, tokens: int, max_tokens: int, timeout_s: float | None = None
    ) -> Observed:
        self.asked.append((tokens, max_tokens))
        prompt = tokens + 3  # the server counts a few tokens more than asked
        rate = 150 / (1 + prompt / 4000)
        return Observed(prompt, max_tokens, 0.05 + prompt / rate + (max_tokens - 1) / 10)


async def test_a_short_run_is_probed_short_and_said_a_lower_figure() -> None:
    server = Planted()
    rate, seen = await probe(server, typical=2000, run_tokens=4000)
    assert [m for _, m in server.asked] == [1, 1, 16]  # no long probe: the run is 4k tokens
    assert server.asked[1][0] == MEDIUM_TOKENS and rate.at_tokens == MEDIUM_TOKENS + 3
    assert sum(o.seconds for o in seen) < 4
    assert "about 2,000 tokens" in limits(rate, 2000) and "lower figure" in limits(rate, 2000)
    assert rate.decode == pytest.approx(10, rel=0.05)


async def test_a_long_run_pays_for_a_probe_near_its_prompts() -> None:
    server = Planted()
    rate, seen = await probe(server, typical=8000, run_tokens=2_000_000)
    assert len(server.asked) == 4 and seen[-1].seconds <= LONG_MOST_S * 1.01
    asked = server.asked[-1][0]
    assert 3000 < asked < 8000 and rate.at_tokens == asked + 3
    # the rate at that length, between the short probe and it: slower than at 256 tokens
    assert rate.prefill is not None and rate.prefill < 150 / (1 + 259 / 4000)
    true = (asked + 3 - 35) / (seen[-1].seconds - seen[0].seconds)
    assert rate.prefill == pytest.approx(true)


def test_a_token_weighted_typical_prompt() -> None:
    def unit(requests: int, prompt: int) -> UnitForecast:
        return UnitForecast(
            model="m", task="t", samples=1, requests=requests, prompt_tokens=prompt,
            exact_requests=requests, max_output_tokens=0,
        )  # fmt: skip

    # 100 requests of 10 tokens and 2 of 5,000: the typical token is in a long prompt
    assert typical_prompt([unit(100, 1000), unit(2, 10_000)]) == round(
        (1000 * 10 + 10_000 * 5000) / 11_000
    )
    assert typical_prompt([]) == 0


def test_only_local_servers_are_probed_by_default() -> None:
    assert local("http://127.0.0.1:8000") and local("http://localhost:1") and local("http://[::1]")
    assert local("http://10.1.2.3:8000/v1") and local("http://192.168.0.9")
    assert not local("https://api.openai.com/v1") and not local("http://8.8.8.8")


def test_the_time_column_reads_at_80_columns() -> None:
    units = [
        UnitForecast(
            model="gemma-3-270m",
            task=name,
            samples=25,
            requests=50,
            prompt_tokens=prompt,
            exact_requests=50,
            max_output_tokens=6400,
            seconds=seconds,
        )
        for name, prompt, seconds in (
            ("niah_multikey_1", 300_000, 1500.0),
            ("vt", 290_000, 1400.0),
        )
    ]
    rate = ServerRate(
        model="gemma-3-270m", prefill=95.0, decode=12.0, latency=0.12, at_tokens=4099,
        requests=4, seconds=31.0, measured=1000.0,
        note=limits(ServerRate(model="m", prefill=1.0, at_tokens=4099, decode=1.0), 6000),
    )  # fmt: skip
    counting = Counting(model="gemma-3-270m", method="exact: POST /tokenize", requests=100,
                        tokenized=100, seconds=1.0)  # fmt: skip
    forecast = Forecast(units=units, counting=[counting], created=1060.0, rates=[rate])
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, color_system=None)
    for part in render_forecast(forecast, {"gemma-3-270m": None}):
        console.print(part)
    out = buffer.getvalue()
    assert all(len(line) <= 80 for line in out.splitlines()), out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "│" in line}
    assert rows["niah_multikey_1"].rstrip("│ ").endswith("25 min")
    assert rows["total"].rstrip("│ ").endswith("48 min")
    flat = " ".join(out.split())
    assert "95 prompt tokens/s (at 4,099-token prompts) and 12.0 tokens/s generated" in flat
    assert "measured just now on this server (4 requests, 31.0 s)" in flat
    assert "one at a time" in flat and "the output at its maximum" in flat
    assert "about 6,000 tokens" in flat and "lower figure" in flat
    reused = ServerRate(model="m", prefill=1.0, measured=300.0, reused=True)
    assert reused.said(1020.0).startswith("measured 12 min ago on this server")


def _config(url: str, price: str = "") -> object:
    return parse_config(
        f"models: [{{name: m, endpoint: '{url}', model: sieval-reference, kind: completion"
        f"{price}}}]\ntasks: [{{name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}}]"
    )


async def test_the_probe_against_the_reference_server(tmp_path: Path) -> None:
    stages: list[str] = []
    async with ReferenceServer() as server:
        dry = CostOptions(dry_run=True)
        first = await arun_eval(
            _config(server.url),  # type: ignore[arg-type]
            options(out=tmp_path / "o", cost=dry, on_stage=stages.append),
        )
        again = await arun_eval(_config(server.url), options(out=tmp_path / "o", cost=dry))  # type: ignore[arg-type]
        off = await arun_eval(
            _config(server.url),  # type: ignore[arg-type]
            options(out=tmp_path / "o", cost=CostOptions(dry_run=True, rate_probe=False)),
        )
        priced = ", price: {input: 1, output: 2}"
        ran = await arun_eval(
            _config(server.url, priced),  # type: ignore[arg-type]
            options(out=tmp_path / "r", cost=CostOptions(rate_probe=True)),
        )
    assert first.forecast is not None and again.forecast is not None
    (rate,) = first.forecast.rates
    assert rate.known and rate.requests == 3 and not rate.reused and rate.decode
    assert rate.at_tokens > 200 and rate.seconds < 5
    (unit,) = first.forecast.units
    assert unit.seconds == pytest.approx(
        unit.requests * rate.latency
        + unit.prompt_tokens / (rate.prefill or 1)
        + unit.max_output_tokens / rate.decode
    )
    assert any(s.startswith("time for m: about ") for s in stages), stages
    (kept,) = again.forecast.rates  # the same server a moment later: measured once
    assert kept.reused and kept.requests == 0 and kept.prefill == rate.prefill
    assert off.forecast is not None and not off.forecast.rates[0].known
    assert off.forecast.units[0].seconds is None
    assert "--no-rate-probe" in off.forecast.rates[0].note
    # a priced model is probed when asked, and the run's forecast.json keeps the rate
    stored = read_forecast(ran.run_dir)
    assert stored is not None and stored.rates[0].known and stored.rates[0].requests == 3
    assert stored.units[0].seconds is not None
    # and the run's end says how long its requests took beside the forecast
    assert ran.report is not None and ran.report.timings.wall_s > 0
    (line,) = time_lines(ran.forecast, ran.report)
    ratio = ran.report.timings.wall_s / stored.units[0].seconds
    assert line.plain.startswith("m: the requests took ") and f"({ratio:.2f} of it)" in line.plain


async def test_a_long_probe_cut_at_its_budget_keeps_the_short_rate() -> None:
    server = Planted()

    async def ask(tokens: int, max_tokens: int, timeout_s: float | None = None) -> Observed:
        if timeout_s is not None:  # the long probe: it read slower than its budget allowed
            raise ProbeFailed("timed out")
        return await server(tokens, max_tokens)

    rate, seen = await probe(ask, typical=8000, run_tokens=2_000_000)
    assert len(seen) == 3 and rate.at_tokens == MEDIUM_TOKENS + 3
    assert "lower figure" in limits(rate, 8000)


def test_the_kept_rates_drop_the_stale_ones(tmp_path: Path) -> None:
    _keep("old", ServerRate(model="a", prefill=1.0, measured=1000.0))
    _keep("new", ServerRate(model="b", prefill=1.0, measured=1000.0 + REUSE_S - 1))
    assert set(_kept()) == {"old", "new"}
    _keep("newer", ServerRate(model="c", prefill=1.0, measured=1000.0 + REUSE_S + 1))
    assert set(_kept()) == {"new", "newer"}
    assert (tmp_path / "cache" / "rates.json").is_file()  # under $SIEVAL_CACHE


async def test_the_probe_sends_its_own_max_tokens_whatever_the_runs_overrides() -> None:
    """A run's ``--gen-kwargs max_tokens=64,temperature=0.7`` is not the probe's: a prefill probe
    that generated 64 tokens would read decoding as prefill."""
    from sieval.cost.rate import asker
    from sieval.model import Model

    overrides = {"sampling.max_tokens": 64, "sampling.temperature": 0.7}
    async with (
        ReferenceServer() as server,
        Model(
            dialect="openai_completions",
            base_url=server.url,
            model_id=server.model_name,
            request_overrides=overrides,
        ) as model,
    ):
        seen = await asker(model, chat=False)(32, 1)
    assert seen.output_tokens == 1 and seen.prompt_tokens > 16
