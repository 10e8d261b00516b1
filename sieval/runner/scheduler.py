"""The scheduler: every (model, task) unit's samples sent, scored and recorded, within the budgets.

Concurrency has one owner per layer. A request waits for a slot of its endpoint first
(``Endpoint.slots``: the budget every model on that server shares, ``endpoints.py``) and only then
for one of the run's global cap (``concurrency``, the semaphore given here), so a saturated server
never holds global slots idle. The requests of one sample run concurrently, and at most the
endpoint's budget of samples are in flight per (model, task) unit, so a million-sample task never
becomes a million asyncio tasks. Connections are the endpoint's pool's (``transport/pool.py``).

A sample is its task's ``solve`` over a call context (``context.py``): each call it makes waits
for those slots, and is recorded under the sample with its name, turn and role. A task that is
not static (a conversation, a tool loop, a judge) journals each answered call
(``<model>/<task>/calls.jsonl``), so a resume replays them instead of sending them again; its
calls are admitted against a budget one by one, where a static task's sample is admitted whole.

Failures: a sample whose call fails, or whose ``solve`` raises, is recorded with the error's class
and message and never scored. A records file that cannot be written (a full disk) stops the run
(``broken``); ``--max-failures`` stops one failing wholesale (``stopping.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..cost.budget import Budget, Held
from ..cost.counting import requests_of
from ..model import Model
from ..plan.plan import Plan, PlannedModel, PlannedTask
from ..store.files import StorageError
from ..store.records import (
    SCHEMA_VERSION,
    SCORED,
    CallJournal,
    Record,
    RecordWriter,
    error_record,
    first_reported_model,
    journal_path,
    records_path,
    statuses_at,
    stored_channels,
)
from ..tasks.base import ModelFacts, Sample, SampleResult, StaticTask
from .checks import Primed
from .context import BudgetStopped, SampleCalls, SampleContext
from .endpoints import Endpoint
from .progress import ProgressSink
from .rerun import Rerun, censored_at
from .stopping import MaxFailures, Stopper

__all__ = ["Runtime", "Scheduler", "Unit"]


@dataclass
class Runtime:
    """One model of the run as the scheduler sends through it."""

    planned: PlannedModel
    model: Model
    facts: ModelFacts
    endpoint: Endpoint
    """The server it reaches: the slots its requests take, shared with every model on it."""
    primed: Primed = field(default_factory=dict)
    """The pre-run checks' answered calls of sample requests, used once instead of a resend."""
    calls: int = 0

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.planned.api_key,) if self.planned.api_key else ()


def _left(samples: Iterable[Sample], status: bytearray) -> Iterator[Sample]:
    """The samples not yet scored: never run, or failed (a resume runs those again)."""
    return (s for s, done in zip(samples, status, strict=True) if done != SCORED)


@dataclass
class Unit:
    runtime: Runtime
    task: PlannedTask
    writer: RecordWriter
    todo: Iterable[Sample]
    """The samples left to run, read as they are sent (never all held)."""
    journal: CallJournal | None = None
    """A task that is not static: its answered calls, journaled and replayed on a resume."""
    stage: str = ""
    """What the unit's progress line adds to its name (`` ×4``: the re-runs of ``rerun.py``)."""

    @property
    def key(self) -> str:
        return f"{self.runtime.planned.label}/{self.task.name}{self.stage}"


class Scheduler:
    """Runs every unit of a plan: ``models`` (filled by the engine) and the units ``prepare`` opens,
    then ``run``; ``close`` closes the records files. ``stopped`` says why a run stopped early."""

    def __init__(
        self,
        plan: Plan,
        run_dir: Path,
        global_cap: asyncio.Semaphore,
        sink: ProgressSink,
        *,
        record_tokens: bool = False,
        max_failures: MaxFailures = None,
        run_only: set[tuple[str, str]] | None = None,
        shard: int | None = None,
    ) -> None:
        self.shard = shard
        self.record_tokens = record_tokens
        self.stopper = Stopper(max_failures)
        self.run_only = run_only
        self.stopped: str | None = None
        self._halt = asyncio.Event()
        self.plan = plan
        self.run_dir = run_dir
        self.global_cap = global_cap
        self.sink = sink
        self.models: dict[str, Runtime] = {}
        self.roles: dict[str, Runtime] = {}
        """The model playing each role a task calls (filled by the engine)."""
        self.journals: list[CallJournal] = []
        self.units: list[Unit] = []
        self.writers: list[RecordWriter] = []
        self.samples_run = 0
        self.broken: StorageError | None = None
        """The failure that stopped the run: a records file could not be written."""
        self.budget: Budget | None = None
        """``--budget-tokens`` / ``--budget-cost``: a sample starts only within it (budget.py)."""

    def runtimes(self) -> list[Runtime]:
        """Every model the run sends through, each once (a role's model too)."""
        found = {id(rt): rt for rt in [*self.models.values(), *self.roles.values()]}
        return list(found.values())

    def prepare(self) -> list[str]:
        """Open each unit's records file, repair a crash's torn line, list what is left to run."""
        notes = []
        for label, runtime in self.models.items():
            paths = [
                records_path(self.run_dir, runtime.planned.dirname, pt.name, self.shard)
                for pt in self.plan.tasks
            ]
            pinned = first_reported_model(paths)
            if pinned is not None:  # a resume: the replies must name the model the run began with
                runtime.model.pin_reported(pinned)
            for pt in self.plan.tasks:
                path = records_path(self.run_dir, runtime.planned.dirname, pt.name, self.shard)
                writer = RecordWriter(path)  # cuts a torn last line an interrupted run left
                self.writers.append(writer)
                if writer.repaired:
                    notes.append(
                        f"{label}/{pt.name}: ignored a truncated last record "
                        f"({writer.repaired} bytes) left by an interrupted run; "
                        "that sample runs again"
                    )
                status = statuses_at(path, pt.samples.position, len(pt.samples))
                done = status.count(SCORED)
                todo: Iterable[Sample] = _left(pt.samples, status)
                if self.run_only is not None and (label, pt.name) not in self.run_only:
                    todo, done = [], len(pt.samples)  # a resume of a subset: reported, not run
                journal = None
                if not pt.task.static:
                    journal = CallJournal(journal_path(path))
                    self.journals.append(journal)
                unit = Unit(runtime, pt, writer, todo, journal=journal)
                self.units.append(unit)
                self.sink.start(unit.key, len(pt.samples), done)
        return notes

    def close(self) -> None:
        """Close every records file; the first failure (a full disk) becomes ``broken`` (the
        run raises it), and the other files are closed all the same."""
        failed: StorageError | None = None
        files: list[RecordWriter | CallJournal] = [*self.writers, *self.journals]
        for writer in files:
            try:
                writer.close()
            except StorageError as exc:
                failed = failed or exc
        if failed is not None and self.broken is None:
            self.broken = failed

    async def run(self) -> None:
        await asyncio.gather(*(self._run_unit(unit) for unit in self.units))

    async def rerun_censored(self, factor: float) -> int:
        """Run each unit's censored samples again at ``factor`` times their budget (``rerun.py``),
        into the same records files; how many were run. Units a resume only reports are left."""
        reruns: list[Unit] = []
        count = 0
        for unit in self.units:
            runtime, pt = unit.runtime, unit.task
            if not isinstance(pt.task, StaticTask):  # a conversation's turns are not fixed
                continue
            if self.run_only is not None and (runtime.planned.label, pt.name) not in self.run_only:
                continue
            path = records_path(self.run_dir, runtime.planned.dirname, pt.name, self.shard)
            todo = [pt.samples[at] for at in censored_at(path, pt.samples, factor)]
            if not todo:
                continue
            task = Rerun(pt.task, factor, runtime.planned.config.request_defaults)
            rerun = Unit(runtime, replace(pt, task=task), unit.writer, todo, stage=f" ×{factor:g}")
            self.sink.start(rerun.key, len(todo), 0)
            reruns.append(rerun)
            count += len(todo)
        await asyncio.gather(*(self._run_unit(unit) for unit in reruns))
        return count

    async def _run_unit(self, unit: Unit) -> None:
        limit = unit.runtime.endpoint.budget
        pending: set[asyncio.Task[None]] = set()
        try:
            for sample in unit.todo:
                if len(pending) >= limit:
                    await self._drain(pending)
                if self.stopped:
                    break
                pending.add(asyncio.create_task(self._budgeted(unit, sample)))
            while pending and not self._halt.is_set():  # a budget stop lets them finish
                await self._drain(pending)
        finally:
            for task in pending:  # a stopped run does not wait for what is in flight
                task.cancel()
            if pending:
                await asyncio.wait(pending)

    async def _drain(self, pending: set[asyncio.Task[None]]) -> None:
        """Wait for one sample of ``pending`` to finish (removed from it), or for a stop."""
        halt = asyncio.ensure_future(self._halt.wait())
        try:
            done, _ = await asyncio.wait({*pending, halt}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            halt.cancel()
        for finished in done:
            if finished is not halt:
                pending.discard(finished)
                finished.result()

    async def _budgeted(self, unit: Unit, sample: Sample) -> None:
        """Run the sample within the budget (``budget.py``), or leave it for a resume: a static
        task's sample is admitted whole; a task that is not static, call by call (``context``)."""
        if self.budget is None or not unit.task.task.static:
            await self._sample(unit, sample)
            return
        rt = unit.runtime
        requests = requests_of(rt.planned, unit.task, rt.facts, sample)
        held: Held | None = await self.budget.admit(rt.planned, requests, rt.model)
        record = None
        try:
            if held is not None:
                record = await self._sample(unit, sample)
        finally:
            reason = (
                self.budget.settle(held, list(record.requests.values()) if record else None)
                if held is not None
                else self.budget.stopped
            )
            if reason is not None and self.stopped is None:
                self.stopped = reason  # no further sample starts; those in flight finish

    async def _sample(self, unit: Unit, sample: Sample) -> Record | None:
        runtime, pt = unit.runtime, unit.task
        started = time.time()
        t0 = time.perf_counter()
        ctx = SampleContext(self, unit, sample, runtime)
        calls: SampleCalls = ctx.calls
        error: dict[str, Any] | None = None
        result: SampleResult | None = None
        try:
            result = await pt.task.solve(sample, ctx)
        except BudgetStopped as stop:  # left for a resume: its answered calls are journaled
            if self.stopped is None:
                self.stopped = str(stop)  # no further sample starts; those in flight stop too
            return None
        except StorageError as exc:  # the journal could not be written
            self._break(exc)
            return None
        except Exception as exc:
            error = error_record(exc, runtime.secrets)
        error = calls.first_error() or error  # a failed call fails the sample, unscored
        ok = error is None and result is not None
        record = Record(
            schema_version=SCHEMA_VERSION,
            sample_id=sample.id,
            status="ok" if ok else "failed",
            model=runtime.planned.label,
            task=pt.name,
            group=sample.group,
            requests=calls.made(),
            channels=stored_channels(dict(result.channels)) if ok and result is not None else {},
            prediction=result.prediction if ok and result is not None else None,
            gold=sample.gold,
            metrics=(
                {k: float(v) for k, v in result.metrics.items()}
                if ok and result is not None
                else {}
            ),
            error=error,
            reported_model=calls.reported(),
            started=started,
            duration_s=time.perf_counter() - t0,
            sample=pt.task.describe(sample),
            rerun=pt.task.rerun_of(sample, pt.config, runtime.facts)
            if isinstance(pt.task, Rerun)
            else None,
        )
        if self.broken is not None:
            return None  # the run is stopping: this sample runs again on --resume
        try:
            unit.writer.write(record)
        except StorageError as exc:
            self._break(exc)
            return None
        if unit.journal is not None and record.status == "ok":
            unit.journal.forget(sample.id)
        self.samples_run += 1
        failed = (record.error or {"class": "Unknown"}) if record.status != "ok" else None
        reason = self.stopper.record(unit.key, failed)
        if reason is not None and self.stopped is None:
            self.stopped = reason
            self._halt.set()
        tokens = sum(sum(r.usage.get(k, 0) for k in _COUNTED) for r in record.requests.values())
        self.sink.advance(unit.key, record.status == "ok", tokens)
        return record

    def _break(self, exc: StorageError) -> None:
        """A run file could not be written (a full disk): the run stops, every record kept."""
        if self.broken is None:
            self.broken = exc
        self.stopped = f"stopped: {exc.message}"
        self._halt.set()


_COUNTED = ("input_tokens", "output_tokens")
"""The usage counts a sample's tokens/s adds up (prompt and generated)."""
