"""Shards of one run: a frozen plan, one process per shard, one finalize that writes the report.

Three steps, each its own process, sharing only the run directory::

    sieval plan CONFIG --out RUN_DIR --shards N    # freeze(): checks once, writes plan.json
    sieval eval --run RUN_DIR --shard k/N          # run_shard(): one shard, any machine
    sieval finalize RUN_DIR                        # finalize(): coverage, merge, report.json

``plan.json`` holds the run identity, the data directory, every task's sample ids in plan order
with the shard of each, the per-endpoint concurrency budget split across the shards, and what the
pre-run checks found. The samples of a task are the same for every model, so the assignment is
per task and holds for every (model, task) unit. It keeps a sample's requests together (a sample
is never split) and, for a task whose metric clusters (``cluster_by = "group"``, MMLU by
subject), a group in one shard; shards are contiguous runs of those units, balanced by size.

Shard k of a unit writes ``<model>/<task>/shards/<k>/records.jsonl`` (and its own
``shared.jsonl``) with the same append-only, crash and resume guarantees as a whole run: running a
shard again skips what it recorded as scored and retries what failed. ``finalize`` is the only
writer of ``report.json``: it checks that every planned sample is recorded exactly once (scored or
failed) by the shard that owns it, names the shards that are not done with the command that
reruns each, then writes each unit's ``records.jsonl`` in plan order through a fresh
``RecordWriter`` (compacted again, consistently) and builds the report in one streaming pass, so
``sieval report``, ``samples``, ``compare`` and the HTML view read the run like any other.

The budget: ``concurrency_limit`` (per model) and ``concurrency`` (global) are for the whole run.
Shard k gets ``total // N`` plus one of the remainder; a budget smaller than N is refused at plan
time rather than multiplied.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..tasks.base import ModelFacts, Sample, Task
from .config import EvalConfig
from .engine import RunOptions, RunResult, arun_eval
from .lock import hold_run, hold_shard
from .paths import unsafe
from .plan import Plan, plan_run
from .preflight import Provenance
from .records import RecordWriter, Shared, decode_record, expand_requests, records_path
from .report import build_report, write_report
from .rundir import check_resume, load_run_config, run_directory, write_json

__all__ = [
    "PLAN_FILE",
    "PLAN_VERSION",
    "Finalized",
    "FrozenPlan",
    "Incomplete",
    "assign",
    "finalize",
    "freeze",
    "parse_shard",
    "read_plan",
    "run_shard",
    "share",
]

PLAN_FILE = "plan.json"
PLAN_VERSION = 1

SHARD_ENV = {"slurm": ("SLURM_ARRAY_TASK_ID",), "indexed": ("JOB_COMPLETION_INDEX",)}
"""Where ``--shard slurm`` / ``--shard indexed`` read k (``--shard env``: whichever is set). N is
always the plan's: a Slurm task resubmitted alone sees ``SLURM_ARRAY_TASK_COUNT=1``."""


class FrozenTask(msgspec.Struct, kw_only=True):
    samples: list[str]
    """The task's sample ids, in plan order."""
    shard: list[int]
    """The shard of each sample (same order)."""
    clustered: bool = False
    """Whether groups were kept whole (``cluster_by = "group"``)."""


class FrozenPlan(msgspec.Struct, kw_only=True):
    """``plan.json``: what every shard and ``finalize`` read."""

    plan_version: int
    identity: str
    shards: int
    data_dir: str
    tasks: dict[str, FrozenTask]
    concurrency: list[int]
    """The global cap of each shard (sums to the config's ``concurrency``)."""
    concurrency_limit: dict[str, list[int]]
    """Per model label, each shard's share of its ``concurrency_limit``."""
    setup: dict[str, Any] = {}
    """``provenance``, ``facts`` and ``checks`` as the plan's pre-run checks found them."""
    notes: list[str] = []
    created: float = 0.0

    def rerun(self, run_dir: Path, shard: int) -> str:
        return f"sieval eval --run {run_dir} --shard {shard}/{self.shards}"

    def restrict(self, plan: Plan, shard: int) -> Plan:
        """``plan`` cut to shard ``shard``: its samples and its share of every budget."""
        tasks = []
        for pt in plan.tasks:
            frozen = self.tasks.get(pt.name)
            if frozen is None or list(pt.samples.ids()) != frozen.samples:
                raise ConfigError(
                    f"task {pt.name!r} no longer gives the samples {PLAN_FILE} froze; plan the "
                    "run again",
                    path="plan",
                )
            mine = pt.samples.select(i for i, k in enumerate(frozen.shard) if k == shard)
            tasks.append(replace(pt, samples=mine))
        models = [
            replace(
                pm,
                config=msgspec.structs.replace(
                    pm.config, concurrency_limit=self.concurrency_limit[pm.label][shard]
                ),
            )
            for pm in plan.models
        ]
        return replace(plan, tasks=tasks, models=models)


def share(total: int, shard: int, count: int) -> int:
    """Shard ``shard``'s part of a budget ``total`` split over ``count`` shards (they sum to it)."""
    return total // count + (1 if shard < total % count else 0)


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


def _plan_path(run_dir: Path) -> Path:
    return run_dir / PLAN_FILE


def read_plan(run_dir: Path) -> FrozenPlan:
    path = _plan_path(run_directory(run_dir, what="planned run directory"))
    if not path.is_file():
        raise ConfigError(
            f"{str(run_dir)!r} holds no {PLAN_FILE}; make one with: sieval plan CONFIG --out "
            f"{run_dir} --shards N",
            path="run",
        )
    try:
        frozen = msgspec.json.decode(path.read_bytes(), type=FrozenPlan)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"{path}: unreadable plan ({exc})", path="run") from exc
    if not _IDENTITY.fullmatch(frozen.identity):  # it names the jobs of the generated scripts
        raise ConfigError(
            f"{path}: the identity {frozen.identity[:80]!r} is not a sieval run identity; the "
            "plan was edited: plan the run again",
            path="run",
        )
    return frozen


_IDENTITY = re.compile(r"sha256:[0-9a-f]{64}")


def _budget(total: int, count: int, what: str) -> list[int]:
    if total < count:
        raise ConfigError(
            f"{what} is {total}, fewer than the {count} shards: it is the budget of the whole "
            f"run, split across shards; raise it to at least {count} or plan fewer shards",
            path="shards",
        )
    return [share(total, k, count) for k in range(count)]


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
    concurrency = _budget(options.concurrency or config.concurrency, shards, "concurrency")
    limits = {
        m.label: _budget(m.concurrency_limit, shards, f"model {m.label!r}'s concurrency_limit")
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
    write_json(_plan_path(result.run_dir), frozen)
    return frozen


def _clustered(task: Task) -> bool:
    return getattr(task, "cluster_by", None) == "group"


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
    progress: Any = None,
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
    progress: Any,
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
    sessions: list[Any] = []
    if status.is_file():
        try:
            sessions = list(msgspec.json.decode(status.read_bytes()).get("sessions", []))
        except (msgspec.DecodeError, AttributeError) as exc:
            raise ConfigError(
                f"{status}: unreadable shard sessions ({exc}); remove it (it holds timings only) "
                "and rerun the shard",
                path=str(status),
            ) from exc
    sessions.append(result.report["timings"]["sessions"][-1])
    status.parent.mkdir(exist_ok=True)
    write_json(status, {"shard": shard, "shards": frozen.shards, "sessions": sessions})
    return result


# -- finalize -----------------------------------------------------------------------------------


class Incomplete(ConfigError):
    """Raised by ``finalize`` when planned samples have no record (or a record in two places)."""

    def __init__(self, message: str, missing: dict[int, int]) -> None:
        super().__init__(message, path="finalize")
        self.missing = missing
        """Per shard that is not done, how many of its samples have no record."""


@dataclass
class Finalized:
    run_dir: Path
    report: dict[str, Any]
    failed_shards: dict[int, int]
    """Per shard, how many of its samples are recorded as failed (rerun it to retry them)."""

    @property
    def failed(self) -> int:
        return sum(int(r["samples"]["failed"]) for r in self.report["results"])


class _Id(msgspec.Struct):
    sample_id: str


_id_decoder = msgspec.json.Decoder(_Id)


def _index(path: Path) -> dict[str, int]:
    """The byte offset of each sample's latest line in a shard's ``records.jsonl`` (one pass;
    a torn last line, left by a crash, is not a record)."""
    out: dict[str, int] = {}
    if not path.is_file():  # a directory there is the shard's own failure, not a record
        return out
    offset = 0
    with open(path, "rb") as file:
        for number, line in enumerate(file, 1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                out[_id_decoder.decode(line).sample_id] = start
            except msgspec.DecodeError as exc:
                if line.endswith(b"\n"):
                    raise ConfigError(
                        f"{path}:{number}: not a valid record ({exc}); rerun that shard",
                        path=str(path),
                    ) from exc
    return out


def finalize(
    run_dir: Path, *, data_dir: Path | None = None, tasks: Mapping[str, Task] | None = None
) -> Finalized:
    """Check coverage, merge every unit's shard records in plan order, write ``report.json``.
    ``Incomplete`` (nothing written) names each shard that is not done and its rerun command."""
    with hold_run(run_dir):
        return _finalize(run_dir, data_dir, tasks)


def _finalize(run_dir: Path, data_dir: Path | None, tasks: Mapping[str, Task] | None) -> Finalized:
    frozen = read_plan(run_dir)
    config = load_run_config(run_dir, contacts=False)  # no request is sent: no password needed
    plan = plan_run(config, data_dir=data_dir or Path(frozen.data_dir), tasks=tasks)
    check_resume(run_dir, plan.identity, plan.inputs)
    missing: dict[int, int] = {}
    problems: list[str] = []
    indexes: dict[tuple[str, str], list[dict[str, int]]] = {}
    for pm in plan.models:
        for pt in plan.tasks:
            owner = dict(
                zip(frozen.tasks[pt.name].samples, frozen.tasks[pt.name].shard, strict=True)
            )
            found = [
                _index(records_path(run_dir, pm.dirname, pt.name, k)) for k in range(frozen.shards)
            ]
            indexes[(pm.label, pt.name)] = found
            for k, ids in enumerate(found):
                for sample_id in ids:
                    if owner.get(sample_id, k) != k:
                        problems.append(
                            f"{pm.label}/{pt.name}: sample {sample_id!r} is recorded by shard {k} "
                            f"but planned for shard {owner[sample_id]}"
                        )
            for sample_id in pt.samples.ids():
                k = owner[sample_id]
                if sample_id not in found[k]:
                    missing[k] = missing.get(k, 0) + 1
    if problems:
        raise ConfigError(
            "the shards' records do not match the plan:\n  " + "\n  ".join(problems[:8]),
            path="finalize",
        )
    if missing:
        lines = [
            f"shard {k}/{frozen.shards}: {n} planned sample(s) not recorded; rerun it with: "
            f"{frozen.rerun(run_dir, k)}"
            for k, n in sorted(missing.items())
        ]
        raise Incomplete(
            f"{run_dir} is not complete, no report written:\n  " + "\n  ".join(lines), missing
        )
    failed_shards: dict[int, int] = {}
    for pm in plan.models:
        for pt in plan.tasks:
            failed = _merge(
                run_dir,
                pm.dirname,
                pt.name,
                pt.samples,
                frozen.tasks[pt.name].shard,
                indexes[(pm.label, pt.name)],
            )
            for k in failed:
                failed_shards[k] = failed_shards.get(k, 0) + 1
    setup = frozen.setup
    sessions = _sessions(run_dir, frozen.shards)
    report = build_report(
        plan,
        run_dir,
        provenance={
            label: msgspec.convert(p, Provenance)
            for label, p in setup.get("provenance", {}).items()
        },
        started=min((float(s.get("started", 0.0)) for s in sessions), default=time.time()),
        wall_s=0.0,
        requests=0,
        samples_run=0,
        resumed=False,
        warnings=list(frozen.notes),
        checks=setup.get("checks", {}),
        facts={
            label: msgspec.convert(f, ModelFacts) for label, f in setup.get("facts", {}).items()
        },
    )
    report["timings"] = _timings(sessions)
    report["run"]["shards"] = frozen.shards
    write_report(run_dir, report)
    return Finalized(run_dir=run_dir, report=report, failed_shards=failed_shards)


def _merge(
    run_dir: Path,
    model_dir: str,
    task: str,
    samples: Sequence[Sample],
    owner: Sequence[int],
    indexes: Sequence[dict[str, int]],
) -> list[int]:
    """Write the unit's ``records.jsonl`` (and ``shared.jsonl``) from its shards, in plan order,
    one record in memory at a time; returns the shard of each failed sample."""
    target = records_path(run_dir, model_dir, task)
    work = target.parent / ".merge"
    shutil.rmtree(work, ignore_errors=True)
    writer = RecordWriter(work / "records.jsonl")
    files: dict[int, Any] = {}
    shared: dict[int, Shared] = {}
    failed: list[int] = []
    try:
        for sample, k in zip(samples, owner, strict=True):
            if k not in files:
                path = records_path(run_dir, model_dir, task, k)
                files[k] = open(path, "rb")  # noqa: SIM115 - closed below
                shared[k] = Shared.load(path.with_name("shared.jsonl"))
            file = files[k]
            file.seek(indexes[k][sample.id])
            record = decode_record(file.readline())
            whole = expand_requests(record.requests, shared[k])
            writer.write(msgspec.structs.replace(record, requests=whole))
            if record.status != "ok":
                failed.append(k)
    finally:
        writer.close()
        for file in files.values():
            file.close()
    if (work / "shared.jsonl").exists():
        os.replace(work / "shared.jsonl", target.with_name("shared.jsonl"))
    else:
        target.with_name("shared.jsonl").unlink(missing_ok=True)
    os.replace(work / "records.jsonl", target)
    work.rmdir()
    return failed


def _sessions(run_dir: Path, shards: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(shards):
        path = run_dir / "shards" / f"{k}.json"
        if path.is_file():
            for session in msgspec.json.decode(path.read_bytes()).get("sessions", []):
                out.append({**session, "shard": k})
    return out


def _timings(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over every shard session; ``wall_s`` is from the first start to the last end (the
    shards overlap), ``busy_s`` the sum of their walls."""
    if not sessions:
        return {
            "started": 0.0,
            "wall_s": 0.0,
            "requests": 0,
            "requests_per_s": 0.0,
            "samples_run": 0,
            "sessions": [],
        }
    start = min(float(s["started"]) for s in sessions)
    end = max(float(s["started"]) + float(s["wall_s"]) for s in sessions)
    requests = sum(int(s.get("requests", 0)) for s in sessions)
    wall = end - start
    return {
        "started": start,
        "wall_s": wall,
        "busy_s": sum(float(s["wall_s"]) for s in sessions),
        "requests": requests,
        "requests_per_s": requests / wall if wall > 0 else 0.0,
        "samples_run": sum(int(s.get("samples_run", 0)) for s in sessions),
        "sessions": sessions,
    }
