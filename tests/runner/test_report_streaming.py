"""The report reads each sample's latest record in one streaming pass, and a resume that runs
nothing keeps the figures it finds (only when no record changed since they were written)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from runs import options

from sieval.runner import arun_eval, parse_config
from sieval.store.records import Record, RecordWriter, latest_at

CONFIG = """
models: [{name: ref, endpoint: embedded}]
tasks: [{name: arc_easy_kshot_ppl, n: 4, num_fewshot: 0}]
"""


def test_latest_at_yields_each_planned_samples_last_record_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    for sample_id, status in [("a", "failed"), ("b", "ok"), ("a", "ok"), ("c", "failed")]:
        writer.write(
            Record(
                schema_version=4,
                sample_id=sample_id,
                status=status,
                model="m",
                task="t",
                metrics={"acc": 1.0} if status == "ok" else {},
            )
        )
    writer.close()
    planned = {"c": 0, "a": 1, "b": 2}  # "d" is not planned: its record is skipped
    writer = RecordWriter(path)
    writer.write(Record(schema_version=4, sample_id="d", status="ok", model="m", task="t"))
    writer.close()
    found = [(at, o.sample_id, o.status) for at, o in latest_at(path, planned.get, 3)]
    assert found == [(2, "b", "ok"), (1, "a", "ok"), (0, "c", "failed")]


async def test_a_resume_that_runs_nothing_keeps_the_figures(tmp_path: Path) -> None:
    first = await arun_eval(parse_config(CONFIG), options(out=tmp_path, run_name="r"))
    report_path = first.run_dir / "report.json"
    report = json.loads(report_path.read_text())
    report["results"][0]["metrics"]["marker"] = 42.0  # only a reused report can still hold it
    report_path.write_text(json.dumps(report))
    again = await arun_eval(parse_config(CONFIG), options(resume=first.run_dir))
    assert again.report.results[0].metrics["marker"] == 42.0
    sessions = again.report.timings.sessions
    assert [s.requests for s in sessions] == [first.report.timings.requests, 0]
    records = first.run_dir / "ref" / "arc_easy_kshot_ppl" / "records.jsonl"
    later = report_path.stat().st_mtime + 5
    os.utime(records, (later, later))  # a record newer than the report: recount
    third = await arun_eval(parse_config(CONFIG), options(resume=first.run_dir))
    assert "marker" not in third.report.results[0].metrics
    assert third.report.results[0].metrics == first.report.results[0].metrics
    assert len(third.report.timings.sessions) == 3
