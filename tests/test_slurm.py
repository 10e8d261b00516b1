"""A real single-node Slurm (scripts/slurm.sh) runs a 4-shard evaluation as a job array and a
dependent finalize job; job states, not exit codes, say what ran. Then a shard that really fails
(its records path is a directory): its job FAILED, finalize never ran, ``sieval finalize`` names
the shard and its rerun command, and resubmitting that one array task completes the run.

Skipped only when SIEVAL_SKIP_SLURM=1 is set; without Slurm installed it fails, naming the script
that installs it (scripts/test runs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sharding import ROOT, assert_same_run, env, sieval, single_run, write_config

SCRIPT = ROOT / "scripts" / "slurm.sh"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}


@pytest.fixture
def slurm() -> Iterator[dict[str, str]]:
    """A Slurm cluster under a temporary root for the test, stopped by pid even on failure."""
    if os.environ.get("SIEVAL_SKIP_SLURM") == "1":
        pytest.skip("Slurm tests skipped on request (SIEVAL_SKIP_SLURM=1)")
    if not all(shutil.which(c) for c in ("slurmctld", "slurmd", "sbatch", "munged")):
        pytest.fail(
            "the Slurm test needs slurmctld, slurmd, slurm-client and munge: run "
            "scripts/slurm.sh install (as root; scripts/test does), or SIEVAL_SKIP_SLURM=1"
        )
    root = Path(tempfile.mkdtemp(prefix="sieval-slurm-"))
    try:
        started = subprocess.run(
            [str(SCRIPT), "start", str(root)], capture_output=True, text=True, timeout=60
        )
        assert started.returncode == 0, started.stdout + started.stderr
        yield {**env(), "SLURM_CONF": str(root / "etc" / "slurm.conf")}
    finally:
        subprocess.run([str(SCRIPT), "stop", str(root)], timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _jobs(cluster: dict[str, str], job: str) -> list[dict[str, str]]:
    """``scontrol show job -o JOB``: one dict per job (per array task once it was split)."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", job],
        env=cluster,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines() if line.strip()]


def _settled(jobs: list[dict[str, str]]) -> bool:
    return all(
        j["JobState"] in TERMINAL
        or (j["JobState"] == "PENDING" and j.get("Reason") == "DependencyNeverSatisfied")
        for j in jobs
    )


def _wait(
    cluster: dict[str, str], array: str, final: str, tasks: int
) -> tuple[dict[int, dict[str, str]], dict[str, str]]:
    """Wait until the array's ``tasks`` tasks and the finalize job are settled; their states."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        shards = _jobs(cluster, array)
        finals = _jobs(cluster, final)
        split = [j for j in shards if j.get("ArrayTaskId", "").isdigit()]
        if len(split) == tasks and _settled(split) and _settled(finals):
            return {int(j["ArrayTaskId"]): j for j in split}, finals[0]
        time.sleep(0.5)
    raise AssertionError(f"jobs {array}, {final} did not finish in 300 s: {shards} {finals}")


def _submit(cluster: dict[str, str], run: Path) -> tuple[str, str]:
    sieval("slurm", run)
    out = subprocess.run(
        [str(run / "slurm" / "submit.sh")],
        env=cluster,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"shards: job (\d+) \(array 0-3\); finalize: job (\d+)", out)
    assert found, out
    return found.group(1), found.group(2)


def _sbatch(cluster: dict[str, str], *args: str) -> str:
    return subprocess.run(
        ["sbatch", "--parsable", *args], env=cluster, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_slurm_array_and_dependent_finalize(slurm: dict[str, str], tmp_path: Path) -> None:
    single = single_run(tmp_path)
    config = write_config(tmp_path)

    # 1. every shard completes, then finalize: the single-process report, sample for sample
    t0 = time.monotonic()
    run = tmp_path / "ok"
    sieval("plan", config, "--out", run, "--shards", 4)
    array, final = _submit(slurm, run)
    shards, finalize = _wait(slurm, array, final, 4)
    print(f"4-shard Slurm run + finalize: {time.monotonic() - t0:.1f} s")
    assert {k: j["JobState"] for k, j in shards.items()} == dict.fromkeys(range(4), "COMPLETED")
    assert finalize["JobState"] == "COMPLETED", finalize
    assert_same_run(run, single)

    # 2. shard 2 cannot write its records: its job FAILED and finalize never ran
    run = tmp_path / "broken"
    sieval("plan", config, "--out", run, "--shards", 4)
    blocker = run / "reference" / "arc_easy_kshot_ppl" / "shards" / "2" / "records.jsonl"
    blocker.mkdir(parents=True)
    array, final = _submit(slurm, run)
    shards, finalize = _wait(slurm, array, final, 4)
    states = {k: j["JobState"] for k, j in shards.items()}
    assert states == {0: "COMPLETED", 1: "COMPLETED", 2: "FAILED", 3: "COMPLETED"}, states
    assert shards[2]["ExitCode"] == "2:0"
    assert finalize["Reason"] == "DependencyNeverSatisfied", finalize
    assert finalize["JobState"] in {"CANCELLED", "PENDING"}, finalize
    assert not (run / "slurm" / "logs" / "finalize.out").exists()  # it never started
    assert not (run / "report.json").exists()
    told = sieval("finalize", run, check=False)
    said = " ".join(told.stderr.split())
    assert told.returncode == 2 and "shard 2/4: " in said, said
    assert f"sieval eval --run {run} --shard 2/4" in said
    assert "shard 0/4" not in said and "shard 1/4" not in said and "shard 3/4" not in said

    # 3. the cause fixed, that one array task resubmitted alone (SLURM_ARRAY_TASK_COUNT=1; N is
    # the plan's) with a dependent finalize: the run completes and equals the single run
    blocker.rmdir()
    scripts = run / "slurm"
    again = _sbatch(slurm, "--array=2", str(scripts / "shards.sbatch"))
    final = _sbatch(
        slurm,
        f"--dependency=afterok:{again}",
        "--kill-on-invalid-dep=yes",
        str(scripts / "finalize.sbatch"),
    )
    shards, finalize = _wait(slurm, again, final, 1)
    assert shards[2]["JobState"] == "COMPLETED" and finalize["JobState"] == "COMPLETED"
    assert_same_run(run, single)
