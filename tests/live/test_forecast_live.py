"""Live: the forecast against the real vLLM 0.32.0 serving Gemma 3 270M: exact through its
``/tokenize`` on the completions wire (to the token of each reply's ``usage.prompt_tokens``), an
estimate named as one on the chat wire, which has no tokenize route."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sieval.cost.forecast import CostOptions
from sieval.plan.config import parse_config
from sieval.runner import RunOptions, arun_eval
from sieval.store.records import read_records

pytestmark = pytest.mark.live

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


async def test_the_forecast_is_the_server_s_own_count(vllm_url: str, tmp_path: Path) -> None:
    config = parse_config(
        f"models: [{{name: g, endpoint: {vllm_url}, model: gemma-3-270m, concurrency_limit: 2,"
        " price: {input: 0.1, output: 0.4, currency: USD}}]\n"
        "tasks:\n"
        "  - {name: arc_easy_kshot_ppl, n: 2, num_fewshot: 1}\n"
        "  - {name: mmlu_kshot_clp, n: 2, num_fewshot: 1}\n"
        "  - {name: gsm8k_kshot_base_gen, n: 1, num_fewshot: 1, options: {max_tokens: 16}}\n"
    )
    result = await arun_eval(config, RunOptions(out=tmp_path, data_dir=DATA))
    assert result.exit_code == 0, result.report.results
    for entry in result.report.results:
        records = read_records(result.run_dir / "g" / entry.task / "records.jsonl").records
        usages = [r.usage for record in records.values() for r in record.requests.values()]
        forecast = entry.cost.forecast
        assert forecast.method == "exact: POST /tokenize" and forecast.exact
        assert forecast.prompt_tokens == sum(u["input_tokens"] for u in usages)
        assert sum(u["output_tokens"] for u in usages) <= forecast.max_output_tokens
        assert forecast.requests == len(usages)


async def test_the_chat_wire_is_estimated_and_says_so(vllm_url: str, tmp_path: Path) -> None:
    config = parse_config(
        f"models: [{{name: c, endpoint: {vllm_url}, model: gemma-3-270m, kind: chat}}]\n"
        "tasks: [{name: gsm8k_0shot_gen, n: 2, options: {max_tokens: 8}}]\n"
    )
    result = await arun_eval(
        config,
        RunOptions(
            out=tmp_path,
            data_dir=DATA,
            # no rate probe: its seconds on the suite's slow server buy nothing this test reads
            cost=CostOptions(forecast=True, rate_probe=False),
        ),
    )
    (entry,) = result.report.results
    forecast, actual = entry.cost.forecast, entry.cost.actual
    assert forecast.method == "estimate: bytes / 4" and not forecast.exact
    assert actual.input_tokens > 0 and actual.without_usage == 0
    assert actual.output_tokens <= forecast.max_output_tokens == 16
