"""Shards without a scheduler: the assignment, the budget split, and a 4-shard run as 4 local
processes that finalizes to the single-process report, sample for sample."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import yaml
from sharding import TASKS, assert_same_run, env, sieval, single_run, write_config

from sieval.cluster.scheduler_scripts import kubernetes_manifests, slurm_scripts
from sieval.cluster.shards import assign, freeze, parse_shard, read_plan, share
from sieval.errors import ConfigError
from sieval.runner import load_config
from sieval.tasks.base import Sample


def _samples(groups: list[str | None]) -> list[Sample]:
    return [Sample(id=f"s{i}", data={}, gold=0, group=g) for i, g in enumerate(groups)]


def test_assign_is_contiguous_and_balanced() -> None:
    assert assign(_samples([None] * 12), 4) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert assign(_samples([None] * 5), 2) == [0, 0, 0, 1, 1]
    assert assign(_samples([None] * 2), 4) == [0, 2]  # more shards than samples: some are empty


def test_assign_keeps_a_clustered_group_in_one_shard() -> None:
    groups: list[str | None] = ["a", "b", "a", "c", "b", "a", "d", "c", "d", "b"]
    shards = assign(_samples(groups), 3, clustered=True)
    by_group: dict[str | None, set[int]] = {}
    for group, k in zip(groups, shards, strict=True):
        by_group.setdefault(group, set()).add(k)
    assert all(len(ks) == 1 for ks in by_group.values())
    assert len(set(shards)) == 3
    # not clustered: the same samples are split evenly, groups ignored
    assert sorted(assign(_samples(groups), 3)) == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_share_splits_a_budget_without_multiplying_it() -> None:
    assert [share(10, k, 4) for k in range(4)] == [3, 3, 2, 2]
    assert sum(share(64, k, 7) for k in range(7)) == 64


def test_plan_refuses_a_budget_smaller_than_the_shards(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path))
    with pytest.raises(ConfigError, match="concurrency is 8, fewer than the 9 shards"):
        asyncio.run(freeze(config, tmp_path / "run", 9))
    assert not (tmp_path / "run").exists()


def test_parse_shard_reads_the_scheduler_index() -> None:
    assert parse_shard("2/4", {}) == (2, 4)
    assert parse_shard("slurm", {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "1"}) == (
        3,
        None,
    )
    assert parse_shard("indexed", {"JOB_COMPLETION_INDEX": "1"}) == (1, None)
    assert parse_shard("env", {"JOB_COMPLETION_INDEX": "0"}) == (0, None)
    with pytest.raises(ConfigError, match="SLURM_ARRAY_TASK_ID"):
        parse_shard("slurm", {})


def test_four_local_processes_equal_one_process(tmp_path: Path) -> None:
    single = single_run(tmp_path)
    run = tmp_path / "sharded"
    sieval("plan", write_config(tmp_path), "--out", run, "--shards", 4)
    plan = read_plan(run)
    assert plan.concurrency == [2, 2, 2, 2] and plan.concurrency_limit == {"reference": [2] * 4}
    assert not (run / "report.json").exists()
    # shards 0-2 as three concurrent processes; finalize names the missing shard 3
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "sieval", "eval", "--run", str(run), "--shard", f"{k}/4"],
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for k in range(3)
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out
    early = sieval("finalize", run, check=False)
    assert early.returncode == 2
    said = " ".join(early.stderr.split())
    assert "shard 3/4: 6 planned sample(s) not recorded; rerun it with: " in said
    assert f"sieval eval --run {run} --shard 3/4" in said
    assert not (run / "report.json").exists()
    # a shard count that differs from the plan's is refused; the right one completes the run
    assert (
        "planned as 4 shards" in sieval("eval", "--run", run, "--shard", "3/5", check=False).stderr
    )
    sieval("eval", "--run", run, "--shard", "3/4")
    sieval("finalize", run)
    assert_same_run(run, single)
    for task in TASKS:  # each shard wrote only its own files
        shards = sorted(p.name for p in (run / "reference" / task / "shards").iterdir())
        assert shards == ["0", "1", "2", "3"]
    # the finalized run reads like any run
    assert "arc_easy_kshot_ppl" in sieval("report", run).stdout
    assert sieval("samples", run, "--limit", "1").returncode == 0
    # finalize again is idempotent
    sieval("finalize", run)
    assert_same_run(run, single)


def test_slurm_and_kubernetes_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    sieval("plan", write_config(tmp_path), "--out", run, "--shards", 3)
    frozen = read_plan(run)
    paths = slurm_scripts(run, frozen, partition="gpu", time="01:00:00", account="lab")
    shards = paths["shards.sbatch"].read_text()
    assert "#SBATCH --array=0-2" in shards and "#SBATCH --partition=gpu" in shards
    assert "#SBATCH --account=lab" in shards and "#SBATCH --time=01:00:00" in shards
    assert f"eval --run {run.resolve()} --shard slurm" in shards
    assert "--dependency=afterok:" in paths["submit.sh"].read_text()
    assert f"finalize {run.resolve()}" in paths["finalize.sbatch"].read_text()
    k8s = kubernetes_manifests(run, frozen, image="registry/sieval:1")
    job = yaml.safe_load(k8s["shards.yaml"].read_text())
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 3
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][-2:] == ["--shard", "indexed"]
    final = yaml.safe_load(k8s["finalize.yaml"].read_text())
    assert final["spec"]["template"]["spec"]["containers"][0]["command"][1] == "finalize"
    assert msgspec.json.decode((run / "plan.json").read_bytes())["shards"] == 3
