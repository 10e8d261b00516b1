"""Today's records and report code against what sieval wrote at e1ffb0e
(``tests/fixtures/runs/v5-e1ffb0e``, made before records were split into schema, compaction and
I/O and the report's tally into its own module): the same bytes, the same figures."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.store.records import (
    RecordWriter,
    Shared,
    decode_record,
    expand_requests,
    shared_path,
)

RUNS = Path(__file__).parents[1] / "fixtures" / "runs" / "v5-e1ffb0e"
DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
UNITS = sorted(RUNS.glob("*/*/*/records.jsonl"))

TALLIED = (
    "protocol",
    "headline",
    "metrics",
    "intervals",
    "samples",
    "failures",
    "failure_examples",
    "finish_reasons",
    "empty_answers",
)
"""What a report entry counts from the records (the rest names the server, not reached here)."""


@pytest.mark.parametrize("unit", UNITS, ids=lambda p: f"{p.parents[2].name}/{p.parent.name}")
def test_each_recorded_unit_is_written_again_byte_for_byte(unit: Path, tmp_path: Path) -> None:
    """Each record read back whole and written by today's writer: the same records.jsonl and
    shared.jsonl, line for line (compaction, columns, ids and field order unchanged)."""
    shared = Shared.load(shared_path(unit))
    writer = RecordWriter(tmp_path / "records.jsonl")
    lines = unit.read_bytes().splitlines()
    for line in lines:
        record = decode_record(line)
        writer.write(
            msgspec.structs.replace(record, requests=expand_requests(record.requests, shared))
        )
    writer.close()
    assert len(lines) >= 3
    assert (tmp_path / "records.jsonl").read_bytes() == unit.read_bytes()
    assert shared_path(tmp_path / "records.jsonl").read_bytes() == shared_path(unit).read_bytes()


@pytest.mark.parametrize("name", ["base", "chat"])
def test_the_report_rebuilt_from_recorded_records_counts_what_e1ffb0e_reported(
    name: str, tmp_path: Path
) -> None:
    run = tmp_path / name
    shutil.copytree(RUNS / name, run)
    (run / "report.json").unlink()  # a resume with every sample scored rebuilds it, offline
    done = CliRunner().invoke(
        app, ["eval", "--resume", str(run)], env={"SIEVAL_DATA_DIR": str(DATA)}
    )
    assert done.exit_code == 0, done.output
    before = json.loads((RUNS / name / "report.json").read_text())["results"]
    after = json.loads((run / "report.json").read_text())["results"]
    assert [(r["model"], r["task"]) for r in after] == [(r["model"], r["task"]) for r in before]
    for old, new in zip(before, after, strict=True):
        changed = clustered_proportions(old, new)
        kept = [k for k in TALLIED if k != "intervals"]
        assert {k: new[k] for k in kept} == {k: old[k] for k in kept}, new["task"]
        assert new["intervals"] == old["intervals"] | changed, new["task"]


def clustered_proportions(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The intervals of 0/1 metrics over clusters (MMLU's subjects), which issue 33.7 changed on
    purpose from the CR1 mean ± z·se clipped to [0, 1] to Clopper–Pearson at the effective n:
    the same value, errors and clusters as e1ffb0e reported, an interval around the value in
    [0, 1], and the new method named after the old."""
    out = {}
    for name, entry in new["intervals"].items():
        was = old["intervals"][name]
        if was["estimator"].startswith("clustered(") and entry["estimator"] != was["estimator"]:
            same = ("value", "se", "n", "clusters", "se_iid")
            assert {k: entry[k] for k in same} == {k: was[k] for k in same}, name
            assert entry["estimator"].startswith(f"{was['estimator']}, clopper-pearson at ")
            assert 0 <= entry["ci"][0] <= entry["value"] <= entry["ci"][1] <= 1
            out[name] = entry
    return out
