"""Helpers for the sharded-run tests: a small two-task config on the embedded server, a
single-process reference run, the sieval CLI as a subprocess, and a record-by-record comparison."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec

from sieval.runner import RunOptions, load_config, read_records, run_eval

ROOT = Path(__file__).parents[1]
N = 12
CONFIG = f"""\
models:
  - name: reference
    endpoint: embedded
    concurrency_limit: 8
concurrency: 8
tasks:
  - {{name: arc_easy_kshot_ppl, n: {N}, num_fewshot: 2}}
  - {{name: mmlu_kshot_clp, n: {N}, num_fewshot: 1}}
"""
"""Two tasks, n = 12 each; MMLU clusters by subject, so its groups are kept whole."""

TASKS = ("arc_easy_kshot_ppl", "mmlu_kshot_clp")


def write_config(where: Path) -> Path:
    path = where / "eval.yaml"
    path.write_text(CONFIG)
    return path


def env() -> dict[str, str]:
    """The environment a sieval subprocess (or a Slurm job) runs this checkout with."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SIEVAL_DATA_DIR": os.environ.get("SIEVAL_DATA_DIR", str(ROOT.parent / "shared" / "data")),
    }


def sieval(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m sieval ARGS`` in a fresh process."""
    proc = subprocess.run(
        [sys.executable, "-m", "sieval", *map(str, args)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"sieval {args} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return proc


def single_run(where: Path) -> Path:
    """The same evaluation in one process, no shards: what a sharded run must equal."""
    config = write_config(where)
    result = run_eval(load_config(config), RunOptions(out=where / "single", run_name="single"))
    assert result.exit_code == 0
    return result.run_dir


_FIGURES = ("metrics", "intervals", "samples", "failures", "protocol", "headline", "model")


def assert_same_run(sharded: Path, single: Path) -> None:
    """Report figures and every sample's status, metrics and prediction are equal."""
    a = msgspec.json.decode((sharded / "report.json").read_bytes())
    b = msgspec.json.decode((single / "report.json").read_bytes())
    assert a["run"]["identity"] == b["run"]["identity"]
    assert [(r["model"], r["task"]) for r in a["results"]] == [
        (r["model"], r["task"]) for r in b["results"]
    ]
    for ra, rb in zip(a["results"], b["results"], strict=True):
        for key in _FIGURES:
            assert ra[key] == rb[key], (ra["task"], key)
        assert ra["samples"] == {"total": N, "scored": N, "failed": 0, "missing": 0}
        records_a = read_records(sharded / "reference" / ra["task"] / "records.jsonl").records
        records_b = read_records(single / "reference" / rb["task"] / "records.jsonl").records
        assert sorted(records_a) == sorted(records_b)
        assert len(records_a) == N
        for sample_id, rec in records_b.items():
            got = records_a[sample_id]
            assert (got.status, got.metrics, got.prediction) == (
                rec.status,
                rec.metrics,
                rec.prediction,
            ), sample_id


def per_sample(run_dir: Path, task: str) -> dict[str, Any]:
    records = read_records(run_dir / "reference" / task / "records.jsonl").records
    return {k: (r.status, r.metrics, r.prediction) for k, r in records.items()}
