"""Live: the base suite's families on the real vLLM 0.32.0 serving Gemma 3 270M (small n): the
shapes the reference server does not show — Gemma's tokenizer at every context/continuation
boundary, the top-1 at each prompt position (LAMBADA), token prompts scored whole (WikiText's
windows) and vLLM's own max_model_len."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from sieval.dialects.registry import get_dialect
from sieval.plan.config import parse_config
from sieval.runner import RunOptions, run_eval
from sieval.runner.preflight import preflight
from sieval.store.records import read_records

pytestmark = pytest.mark.live

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


async def test_vllm_lists_its_max_model_len(vllm_url: str) -> None:
    found = await preflight(vllm_url, dialect=get_dialect("openai_completions"), api_key=None)
    assert found.max_model_len == {"gemma-3-270m": 4096}


def test_the_families_on_vllm(vllm_url: str, tmp_path: Path) -> None:
    config = parse_config(
        f"models: [{{name: g, endpoint: {vllm_url}, model: gemma-3-270m, concurrency_limit: 1}}]\n"
        "tasks:\n"
        "  - {name: winogrande, n: 2}\n"
        "  - {name: truthfulqa_mc2, n: 1}\n"
        "  - {name: lambada_openai, n: 2}\n"
        "  - {name: wikitext, n: 1, options: {max_length: 1024}}\n"
    )
    result = run_eval(config, RunOptions(out=tmp_path, data_dir=DATA))
    assert result.exit_code == 0, result.report.results
    by_task = {r.task: r for r in result.report.results}
    assert all(r.samples.scored == r.samples.total for r in by_task.values())
    assert 0.0 <= by_task["truthfulqa_mc2"].metrics["acc"] <= 1.0
    lambada = read_records(result.run_dir / "g" / "lambada_openai" / "records.jsonl").records
    for record in lambada.values():  # is_greedy read from the top-1 at each target position
        assert record.metrics["acc"] in (0.0, 1.0) and record.metrics["loglikelihood"] < 0
    assert math.isfinite(by_task["lambada_openai"].metrics["perplexity"])
    (doc,) = read_records(result.run_dir / "g" / "wikitext" / "records.jsonl").records.values()
    windows = doc.channels["windows"]
    assert len(windows) >= 2 and all(w["tokens"] <= 1023 for w in windows)
    assert windows[0]["tokens"] == windows[0]["predicted"] + 1  # the BOS, then 1022 tokens
    assert sum(w["logprob_sum"] for w in windows) == doc.metrics["loglikelihood"]
    assert by_task["wikitext"].metrics["bits_per_byte"] > 0
