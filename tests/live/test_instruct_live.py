"""Live: the instruct suite on the real vLLM 0.32.0 serving Gemma 3 270M through its chat
template (n = 1 a task, a short budget: the scores are low and mostly truncated; the point is
that every task runs, is scored by its checker, and records what it read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sieval.plan.config import parse_config
from sieval.runner import RunOptions, run_eval
from sieval.store.records import read_records
from sieval.tasks.registry import SUITES

pytestmark = pytest.mark.live

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


def test_the_instruct_suite_through_the_chat_template(vllm_url: str, tmp_path: Path) -> None:
    names = [m.name for m in SUITES["instruct_suite"].tasks]
    tasks = "".join(f"  - {{name: {t}, n: 1, options: {{max_tokens: 32}}}}\n" for t in names)
    config = parse_config(
        f"models: [{{name: g, endpoint: {vllm_url}, model: gemma-3-270m, dialect: openai_chat, "
        "concurrency_limit: 2}]\ntasks:\n" + tasks
    )
    result = run_eval(config, RunOptions(out=tmp_path, data_dir=DATA))
    by_task = {r.task: r for r in result.report.results}
    assert list(by_task) == names
    for name, entry in by_task.items():
        assert entry.samples.scored == 1, (name, entry.failures)
        assert entry.protocol.startswith("chat: the prompt as one user message")
        assert {"invalid_rate", "truncated_rate"} <= set(entry.metrics)
        path = result.run_dir / "g" / name / "records.jsonl"
        (record,) = read_records(path).records.values()
        assert {"text", "extracted", "rule", "finish_reason"} <= set(record.channels)
        assert record.channels["finish_reason"] in {"stop", "length"}
    print({name: (e.metrics[e.headline], e.metrics["truncated_rate"])
           for name, e in by_task.items()})  # fmt: skip
