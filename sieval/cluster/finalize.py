"""``sieval finalize RUN_DIR``: a sharded run's coverage checked, its records merged, its report.

``finalize`` is the only writer of a sharded run's ``report.json``: it checks that every planned
sample is recorded exactly once (scored or failed) by the shard that owns it, names the shards
that are not done with the command that reruns each (``Incomplete``), then writes each unit's
``records.jsonl`` in plan order through a fresh ``RecordWriter`` (compacted again, consistently)
and builds the report in one streaming pass, so ``sieval report``, ``samples``, ``compare`` and
the HTML view read the run like any other.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..plan.plan import plan_run
from ..plan.run_config import load_run_config
from ..results.document import Report, Session, Timings
from ..results.report import build_report, write_report
from ..store.lock import hold_run
from ..store.records import (
    RECORDS_FILE,
    RecordWriter,
    Shared,
    decode_record,
    expand_requests,
    records_path,
    shared_path,
)
from ..store.rundir import check_resume
from ..tasks.base import Sample, Task
from .frozen_plan import read_plan

__all__ = ["Finalized", "Incomplete", "ShardSessions", "finalize"]


class Incomplete(ConfigError):
    """Raised by ``finalize`` when planned samples have no record (or a record in two places)."""

    def __init__(self, message: str, missing: dict[int, int]) -> None:
        super().__init__(message, path="finalize")
        self.missing = missing
        """Per shard that is not done, how many of its samples have no record."""


@dataclass
class Finalized:
    run_dir: Path
    report: Report
    failed_shards: dict[int, int]
    """Per shard, how many of its samples are recorded as failed (rerun it to retry them)."""
    left_out: list[str] = field(default_factory=list)
    """One line per unit and shard holding records of samples the plan does not have (left out
    of the merge and the report, counted here and in the report's warnings)."""

    @property
    def failed(self) -> int:
        return self.report.failed


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
    strays: list[str] = []
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
                unplanned = [sample_id for sample_id in ids if sample_id not in owner]
                if unplanned:
                    strays.append(
                        f"{pm.label}/{pt.name}: shard {k} holds {len(unplanned)} record(s) of "
                        f"samples the plan does not have (e.g. {unplanned[0]!r}); they are left "
                        "out of the merged records and the report"
                    )
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
        provenance=setup.provenance,
        started=min((s.started for s in sessions), default=time.time()),
        wall_s=0.0,
        requests=0,
        samples_run=0,
        resumed=False,
        warnings=[*frozen.notes, *strays],
        checks={
            label: [msgspec.to_builtins(c) for c in found] for label, found in setup.checks.items()
        },
        facts=setup.facts,
        serving=setup.serving or None,  # what the plan's serving checks found
    )
    report.timings = _timings(sessions)
    report.run.shards = frozen.shards
    write_report(run_dir, report)
    return Finalized(run_dir=run_dir, report=report, failed_shards=failed_shards, left_out=strays)


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
    writer = RecordWriter(work / RECORDS_FILE)
    files: dict[int, Any] = {}
    shared: dict[int, Shared] = {}
    failed: list[int] = []
    try:
        for sample, k in zip(samples, owner, strict=True):
            if k not in files:
                path = records_path(run_dir, model_dir, task, k)
                files[k] = open(path, "rb")  # noqa: SIM115 - closed below
                shared[k] = Shared.load(shared_path(path))
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
    if shared_path(writer.path).exists():
        os.replace(shared_path(writer.path), shared_path(target))
    else:
        shared_path(target).unlink(missing_ok=True)
    os.replace(writer.path, target)
    work.rmdir()
    return failed


class ShardSessions(msgspec.Struct, kw_only=True):
    """``RUN_DIR/shards/<k>.json``: shard k's sessions (their timings, which ``finalize``
    totals; a shard's records hold no timings)."""

    shard: int = 0
    shards: int = 0
    sessions: list[Session] = []


def _sessions(run_dir: Path, shards: int) -> list[Session]:
    out: list[Session] = []
    for k in range(shards):
        path = run_dir / "shards" / f"{k}.json"
        if path.is_file():
            for session in msgspec.json.decode(path.read_bytes(), type=ShardSessions).sessions:
                out.append(msgspec.structs.replace(session, shard=k))
    return out


def _timings(sessions: list[Session]) -> Timings:
    """Totals over every shard session; ``wall_s`` is from the first start to the last end (the
    shards overlap), ``busy_s`` the sum of their walls."""
    if not sessions:
        return Timings()
    start = min(s.started for s in sessions)
    end = max(s.started + s.wall_s for s in sessions)
    requests = sum(s.requests for s in sessions)
    wall = end - start
    return Timings(
        started=start,
        wall_s=wall,
        busy_s=sum(s.wall_s for s in sessions),
        requests=requests,
        requests_per_s=requests / wall if wall > 0 else 0.0,
        samples_run=sum(s.samples_run for s in sessions),
        sessions=sessions,
    )
