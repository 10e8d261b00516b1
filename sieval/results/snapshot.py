"""A run as it is now, finished or not: what ``sieval report``, ``samples`` and ``--html`` read.

A finished run has a current ``report.json``. A run that is still going, or was interrupted, has
records but no report (or an older one): ``snapshot`` then builds the report from the records,
as the run's own end would (the run's stored config, re-planned from its data with nothing sent),
and marks it ``partial``: how many samples are recorded and missing, and whether a process is
still writing it.

Whether a run is going: ``running.json`` in its directory names the process writing it (``Live``,
held by the engine while samples run); a process that died leaves a file whose pid is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ..data.source import find_data_dir
from ..errors import ConfigError
from ..plan.config import EMBEDDED, results_dirname
from ..plan.run_config import load_run_config
from ..store.records import records_path, scan
from ..store.rundir import read_run_json
from ..transport import redact_url
from .document import Partial, Report, Server
from .report import build_report, load_report

if TYPE_CHECKING:
    from ..tasks.base import Task

__all__ = ["RUNNING", "is_running", "running", "snapshot"]

RUNNING = "running.json"


@contextlib.contextmanager
def running(run_dir: Path) -> Iterator[None]:
    """Mark ``run_dir`` as being written by this process for the block."""
    marker = run_dir / RUNNING
    marker.write_text(
        json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()})
    )
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            marker.unlink()


def is_running(run_dir: Path) -> bool:
    """Whether a process is writing ``run_dir`` now (another host's process counts as alive)."""
    try:
        said = json.loads((run_dir / RUNNING).read_text())
        pid, host = int(said["pid"]), str(said["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


class _Seen(msgspec.Struct):
    sample_id: str
    status: str


_seen = msgspec.json.Decoder(_Seen)


def _current(run_dir: Path) -> bool:
    """Whether ``report.json`` counts, for every (model, task), the samples its records hold now
    (scored and failed, by each sample's latest line): a resume that was interrupted has
    recorded more than the report it left counts. Counted, not dated: a copied run keeps its
    report."""
    if not (run_dir / "report.json").exists():
        return False
    report = load_report(run_dir)  # a damaged one is an error naming it, not rebuilt over
    for result in report.results:
        path = records_path(run_dir, results_dirname(result.model), result.task)
        latest = {line.sample_id: line.status for line in scan(path, _seen)}
        scored = sum(status == "ok" for status in latest.values())
        if (scored, len(latest) - scored) != (result.samples.scored, result.samples.failed):
            return False
    return True


def snapshot(
    run_dir: Path, *, data_dir: Path | None = None, tasks: Mapping[str, Task] | None = None
) -> Report:
    """The run's report: ``report.json`` when it is current, else built from the records and
    marked ``partial`` (``ConfigError`` when ``run_dir`` is not a run directory)."""
    if not run_dir.exists():
        raise ConfigError(f"{str(run_dir)!r} does not exist; pass a run directory", path="report")
    if not run_dir.is_dir():
        raise ConfigError(
            f"{str(run_dir)!r} is a file, not a run directory; pass its directory: "
            f"{run_dir.parent}",
            path="report",
        )
    alive = is_running(run_dir)
    if not alive and _current(run_dir):
        return load_report(run_dir)
    if not (run_dir / "run.json").is_file():
        return load_report(run_dir)  # names what is missing
    return _partial(run_dir, alive, data_dir, tasks)


def _partial(
    run_dir: Path, alive: bool, data_dir: Path | None, tasks: Mapping[str, Task] | None
) -> Report:
    from ..plan.plan import plan_run

    config = load_run_config(run_dir)
    stored = read_run_json(run_dir)
    where = find_data_dir(data_dir, config.data_dir)
    plan = plan_run(config, data_dir=where, tasks=tasks, keys=False)
    servers = {
        pm.label: Server(
            endpoint=EMBEDDED if pm.config.endpoint == EMBEDDED else redact_url(pm.config.base_url)
        )
        for pm in plan.models
    }
    started = float(stored.get("created") or time.time())
    report = build_report(
        plan,
        run_dir,
        provenance=servers,
        started=started,
        wall_s=max(time.time() - started, 0.0) if alive else 0.0,
        requests=0,
        samples_run=0,
        resumed=False,
        warnings=[],
    )
    total = sum(r.samples.total for r in report.results)
    missing = sum(r.samples.missing for r in report.results)
    report.partial = Partial(
        total=total,
        recorded=total - missing,
        missing=missing,
        running=alive,
        data_changed=plan.identity != stored.get("identity"),
    )
    return report
