"""``max_reply_mib`` reaches the transport of a run's model: a reply past it fails its sample as a
``ContractViolation`` naming the setting as the run was started, and the run goes on."""

from __future__ import annotations

from pathlib import Path

from runs import options

from sieval.plan.config import parse_config
from sieval.runner import arun_eval
from sieval.store.records import read_records


def _config(mib: float) -> str:
    return f"""
models:
  - {{name: ref, endpoint: embedded, kind: completion, max_reply_mib: {mib}}}
tasks:
  - {{name: arc_easy_kshot_ppl, n: 2, num_fewshot: 1}}
"""


async def test_a_reply_past_max_reply_mib_fails_its_sample(tmp_path: Path) -> None:
    result = await arun_eval(parse_config(_config(0.01)), options(out=tmp_path))
    (unit,) = result.report.results
    assert unit.samples.failed == 2
    records = read_records(result.run_dir / "ref" / "arc_easy_kshot_ppl" / "records.jsonl")
    for record in records.records.values():
        assert record.error is not None and record.error["class"] == "ContractViolation"
        message = record.error["message"]
        assert "larger than the cap of 10,485 bytes" in message
        assert "raise the cap (max_reply_mib: N)" in message


async def test_the_default_cap_reads_the_same_run(tmp_path: Path) -> None:
    config = _config(64).replace(", max_reply_mib: 64", "")
    result = await arun_eval(parse_config(config), options(out=tmp_path))
    assert result.report.results[0].samples.scored == 2
    assert parse_config(config).models[0].max_reply_bytes == 64 * 2**20
