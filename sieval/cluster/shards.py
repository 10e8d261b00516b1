"""Shards of one run: a frozen plan, one process per shard, one finalize that writes the report.

Three steps, each its own process, sharing only the run directory::

    sieval plan CONFIG --out RUN_DIR --shards N    # freeze(): checks once, writes plan.json
    sieval eval --run RUN_DIR --shard k/N          # run_shard(): one shard, any machine
    sieval finalize RUN_DIR                        # finalize(): coverage, merge, report.json

``plan.json`` (``frozen.py``) holds the run identity, the data directory, every task's sample ids
in plan order with the shard of each, the budgets split across the shards, and what the pre-run
checks found. The samples of a task are the same for every model, so the assignment is
per task and holds for every (model, task) unit. It keeps a sample's requests together (a sample
is never split) and, for a task whose metric clusters (``cluster_by = "group"``, MMLU by
subject), a group in one shard; shards are contiguous runs of those units, balanced by size.

Shard k of a unit writes ``<model>/<task>/shards/<k>/records.jsonl`` (and its own
``shared.jsonl``) with the same append-only, crash and resume guarantees as a whole run: running a
shard again skips what it recorded as scored and retries what failed. ``finalize``
(``finalize.py``) is the only writer of ``report.json``: it checks that every planned sample is
recorded exactly once, merges the shards' records in plan order and builds the report.

The budget: ``concurrency_limit`` (per model) and ``concurrency`` (global) are for the whole run;
each shard gets its share (``frozen.share``), a budget smaller than N is refused at plan time
rather than multiplied.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import msgspec

from ..errors import ConfigError
from ..plan.config import EvalConfig
from ..plan.run_config import load_run_config
from ..results.document import Session
from ..runner.engine import RunOptions, RunResult, arun_eval
from ..runner.progress import ProgressSink
from ..store.lock import hold_shard
from ..store.paths import unsafe
from ..store.rundir import write_json
from ..tasks.base import Sample, Task
from .finalize import Finalized, Incomplete, ShardSessions, finalize
from .frozen_plan import (
    PLAN_FILE,
    PLAN_VERSION,
    FrozenPlan,
    FrozenTask,
    plan_path,
    read_plan,
    share,
    split_budget,
)

__all__ = [
    "PLAN_FILE",
    "PLAN_VERSION",
    "Finalized",
    "FrozenPlan",
    "FrozenTask",
    "Incomplete",
    "assign",
    "finalize",
    "freeze",
    "parse_shard",
    "read_plan",
    "run_shard",
    "share",
]

SHARD_ENV = {"slurm": ("SLURM_ARRAY_TASK_ID",), "indexed": ("JOB_COMPLETION_INDEX",)}
"""Where ``--shard slurm`` / ``--shard indexed`` read k (``--shard env``: whichever is set). N is
always the plan's: a Slurm task resubmitted alone sees ``SLURM_ARRAY_TASK_COUNT=1``."""


def assign(samples: Sequence[Sample], count: int, *, clustered: bool = False) -> list[int]:
    """The shard of each sample: contiguous runs of units balanced by size, where a unit is a
    sample (its requests always run together) or, when ``clustered``, every sample of a group
    (in the order groups first appear)."""
    units: dict[str, list[int]] = {}
    for i, sample in enumerate(samples):
        key = f"g:{sample.group}" if clustered and sample.group is not None else f"s:{i}"
        units.setdefault(key, []).append(i)
    out = [0] * len(samples)
    before = 0
    for members in units.values():
        # the shard whose even share of the samples holds this unit's middle sample
        middle = before + (len(members) - 1) / 2
        k = min(count - 1, int(middle * count / max(1, len(samples))))
        for i in members:
            out[i] = k
        before += len(members)
    return out


async def freeze(
    config: EvalConfig,
    run_dir: Path,
    shards: int,
    options: RunOptions | None = None,
    *,
    tasks: Mapping[str, Task] | None = None,
) -> FrozenPlan:
    """Plan ``config`` into the new directory ``run_dir`` as ``shards`` shards: every check runs
    here, once (``ConfigError`` before the directory exists), then ``run.json`` and
    ``plan.json`` are written and nothing is run."""
    if shards < 1:
        raise ConfigError(f"--shards must be >= 1, got {shards}", path="shards")
    why = unsafe(run_dir.name)
    if why is not None:
        raise ConfigError(
            f"--out {str(run_dir)!r}: the last part of the path names the run directory to "
            f"create, and {why}; pass a path such as runs/big",
            path="out",
        )
    options = options or RunOptions()
    concurrency = split_budget(options.concurrency or config.concurrency, shards, "concurrency")
    limits = {
        m.label: split_budget(m.concurrency_limit, shards, f"model {m.label!r}'s concurrency_limit")
        for m in config.models
    }
    result = await arun_eval(
        config,
        replace(options, out=run_dir.parent, run_name=run_dir.name, plan_only=True, resume=None),
        tasks=tasks,
    )
    assert result.plan is not None
    plan = result.plan
    frozen = FrozenPlan(
        plan_version=PLAN_VERSION,
        identity=plan.identity,
        shards=shards,
        data_dir=str(plan.data_dir.resolve()),
        tasks={
            pt.name: FrozenTask(
                samples=list(pt.samples.ids()),
                shard=assign(pt.samples, shards, clustered=_clustered(pt.task)),
                clustered=_clustered(pt.task),
            )
            for pt in plan.tasks
        },
        concurrency=concurrency,
        concurrency_limit={pm.label: limits[pm.label] for pm in plan.models},
        setup=result.setup,
        notes=result.warnings,
        created=time.time(),
    )
    write_json(plan_path(result.run_dir), frozen)
    return frozen


def _clustered(task: Task) -> bool:
    return task.cluster_by == "group"


def parse_shard(text: str, environ: Mapping[str, str] | None = None) -> tuple[int, int | None]:
    """``k/N``, ``k``, or where to read k from: ``slurm`` (``SLURM_ARRAY_TASK_ID``), ``indexed``
    (Kubernetes' ``JOB_COMPLETION_INDEX``), ``env`` (either). Returns ``(k, N or None)``."""
    env = os.environ if environ is None else environ
    names = SHARD_ENV.get(text) or (
        SHARD_ENV["slurm"] + SHARD_ENV["indexed"] if text == "env" else ()
    )
    if names:
        found = next((env[n] for n in names if env.get(n)), None)
        if found is None:
            raise ConfigError(
                f"--shard {text}: none of {', '.join(names)} is set (is this a Slurm array task "
                "or an Indexed Job pod?); pass --shard k/N",
                path="shard",
            )
        text = found
    head, _, tail = text.partition("/")
    try:
        k, n = int(head), (int(tail) if tail else None)
    except ValueError:
        raise ConfigError(
            f"--shard {text!r}: expected k/N (k from 0), k, slurm, indexed or env", path="shard"
        ) from None
    return k, n


async def run_shard(
    run_dir: Path,
    shard: int,
    count: int | None = None,
    options: RunOptions | None = None,
    *,
    tasks: Mapping[str, Task] | None = None,
    progress: ProgressSink | None = None,
    endpoints: EvalConfig | None = None,
) -> RunResult:
    """Run shard ``shard`` of the planned run in ``run_dir`` (N from the plan; a ``count`` that
    differs is refused). Its records only; ``RUN_DIR/shards/<k>.json`` keeps its sessions.
    ``endpoints``: the config file the run was planned with, read only for an endpoint whose
    password ``run.json`` does not hold. The shard holds its lock (``hold_shard``) throughout."""
    frozen = read_plan(run_dir)
    if count is not None and count != frozen.shards:
        raise ConfigError(
            f"--shard {shard}/{count}: the run was planned as {frozen.shards} shards "
            f"({run_dir / PLAN_FILE})",
            path="shard",
        )
    if not 0 <= shard < frozen.shards:
        raise ConfigError(
            f"--shard {shard}: the run has shards 0 to {frozen.shards - 1}", path="shard"
        )
    options = options or RunOptions()
    config = load_run_config(
        run_dir,
        endpoints=endpoints,
        again=f"sieval eval CONFIG --run {{run_dir}} --shard {shard}/{frozen.shards}",
    )
    with hold_shard(run_dir, shard):
        return await _run_shard(run_dir, shard, frozen, config, options, tasks, progress)


async def _run_shard(
    run_dir: Path,
    shard: int,
    frozen: FrozenPlan,
    config: EvalConfig,
    options: RunOptions,
    tasks: Mapping[str, Task] | None,
    progress: ProgressSink | None,
) -> RunResult:
    result = await arun_eval(
        config,
        replace(
            options,
            resume=run_dir,
            data_dir=options.data_dir or Path(frozen.data_dir),
            concurrency=frozen.concurrency[shard],
            preflight=False,  # the plan ran the checks, once
            shard=shard,
            restrict=lambda plan: frozen.restrict(plan, shard),
            plan_only=False,
        ),
        tasks=tasks,
        progress=progress,
    )
    status = run_dir / "shards" / f"{shard}.json"
    sessions: list[Session] = []
    if status.is_file():
        try:
            sessions = msgspec.json.decode(status.read_bytes(), type=ShardSessions).sessions
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ConfigError(
                f"{status}: unreadable shard sessions ({exc}); remove it (it holds timings only) "
                "and rerun the shard",
                path=str(status),
            ) from exc
    assert result.report is not None  # a shard schedules, and reports its own records
    sessions.append(result.report.timings.sessions[-1])
    status.parent.mkdir(exist_ok=True)
    write_json(status, ShardSessions(shard=shard, shards=frozen.shards, sessions=sessions))
    return result
