"""A server fault ends in a failed record with its error class, never in a score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runs import options

from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.results.document import SampleCounts
from sieval.runner import arun_eval


@pytest.mark.parametrize(
    ("fault", "error_class"),
    [("nan", "ContractViolation"), ("usage-off", "ContractViolation"), ("500", "TransportError")],
)
async def test_faulty_replies_are_failures_not_scores(tmp_path: Path, fault, error_class) -> None:
    # retries: 0, so a 500 fails at once: the retries before it and their backoff are the
    # transport's (tests/transport/test_client.py::test_500_exhausts_retries, no real sleep)
    async with ReferenceServer(port=0, faults=fault) as server:
        config = parse_config(
            f"""
models:
  - {{name: ref, endpoint: "{server.url}", model: {server.model_name}, timeout_s: 5, retries: 0}}
tasks:
  - {{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 1}}
"""
        )
        result = await arun_eval(config, options(out=tmp_path))
    entry = result.report.results[0]
    assert entry.samples == SampleCounts(total=2, scored=0, failed=2, missing=0)
    assert entry.failures == {error_class: 2}
    assert result.exit_code == 1
    records = (result.run_dir / "ref" / "arc_easy_kshot_ppl" / "records.jsonl").read_text()
    for line in records.splitlines():
        record = json.loads(line)
        # a failed record holds no metrics and no prediction (fields at their defaults are omitted)
        assert record["status"] == "failed" and record.get("metrics", {}) == {}
        assert record.get("prediction") is None and record["error"]["class"] == error_class
