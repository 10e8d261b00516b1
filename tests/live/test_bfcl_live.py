"""Live: BFCL's Prompt column on the real vLLM 0.32.0 serving Gemma 3 270M through
``openai_completions`` (one entry, 16 tokens: the point is that the schemas reach the prompt, the
reply is read and graded, and the miss is classified; the FC column and the tool-call check
need the hermes tool parser, which the CI's server does not enable: docs/evidence/bfcl-live.md
has them on a server that does)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sieval.plan.config import parse_config
from sieval.runner import RunOptions, run_eval
from sieval.store.records import read_records
from sieval.tasks._bfcl import _oracle_data

pytestmark = pytest.mark.live

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


def test_the_prompt_column_through_completions(vllm_url: str, tmp_path: Path) -> None:
    if _oracle_data() is None:
        pytest.skip("bfcl-eval 2026.3.23 is not installed: run scripts/bfcl-oracle.sh")
    config = parse_config(
        f"models: [{{name: g, endpoint: {vllm_url}, model: gemma-3-270m, "
        "dialect: openai_completions}]\n"
        "tasks:\n  - {name: bfcl_prompt, samples: [simple_python_0], "
        "options: {categories: simple_python, max_tokens: 16}}\n"
    )
    result = run_eval(config, RunOptions(out=tmp_path, data_dir=DATA, serving_checks="off"))
    (entry,) = result.report.results
    assert entry.samples.scored == 1, entry.failures
    (record,) = read_records(
        result.run_dir / "g" / "bfcl_prompt" / "records.jsonl"
    ).records.values()
    assert record.channels["column"] == "Prompt"
    assert record.metrics["wire_drop"] == 0.0  # no tools on this wire: nothing to drop
    if record.metrics["accuracy"] == 0.0:  # a 270M model rarely writes the call
        assert record.channels["miss"] in {"no_call", "wrong_call"}
        assert record.channels["reason"]
    (request,) = record.requests.values()
    assert request.usage["input_tokens"] > 300  # the system prompt with the schema reached it
