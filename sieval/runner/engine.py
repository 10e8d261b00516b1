"""The evaluation engine: plan, probe, run every (model, task) pair, write records and report.

Typical use::

    result = run_eval(load_config("eval.yaml"), RunOptions(data_dir=Path("../shared/data")))
    print(result.run_dir, result.exit_code)

Concurrency has one owner per layer. The engine schedules: each model has its own limit
(``concurrency_limit``) and all models share a global cap; a request waits for its model's slot
first and only then for a global one, so a saturated model never holds global slots idle. The
requests of one sample run concurrently, and at most ``concurrency_limit`` samples are in flight
per (model, task) pair, so a million-sample task never becomes a million asyncio tasks. The
transport owns connections (``Limits.concurrency`` per endpoint, the same number).

Failures: a sample whose request or score raises is recorded with the error's class and message
and never scored. On ``--resume`` recorded *scored* samples are skipped and recorded *failed*
samples are run again (their old line stays; the newest line per sample id wins).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError, SievalError
from ..ir.request import ChatInput, Request
from ..ir.response import Response
from ..model import Call, Model
from ..settings import named, setting
from ..tasks.base import ModelFacts, Sample, Task, describe
from ..transport import Limits, Timeouts, Transport, redact_json, redact_url
from .checks import (
    CheckResult,
    Primed,
    check_endpoint,
    check_model,
    failure,
    primed_key,
    resolve_documents,
    resolve_token_ids,
    run_checks,
)
from .config import EMBEDDED, EvalConfig, ModelConfig
from .files import StorageError, repair_tail
from .limits import connection_budgets
from .lock import hold_run
from .plan import Plan, PlannedModel, PlannedTask, plan_run, select
from .preflight import Provenance, embedded_server, preflight
from .progress import NullProgress, ProgressSink
from .records import (
    FAILED,
    SCHEMA_VERSION,
    SCORED,
    Record,
    RecordWriter,
    RequestRecord,
    first_reported_model,
    records_path,
    statuses_at,
    wire_log_path,
)
from .report import build_report, load_report, truncation_warnings, write_report
from .rundir import check_resume, create_run_dir, new_run_dir, write_run_json
from .serving import Serving, parse_selection
from .serving.across_runs import check_numerics, report_section, run_json_entry
from .serving.in_eval import serving_for
from .snapshot import running
from .stopping import MaxFailures, Stopper, parse_max_failures

__all__ = ["RunOptions", "RunResult", "arun_eval", "run_eval"]

TransportFactory = Callable[[ModelConfig], Transport]


@dataclass(frozen=True)
class RunOptions:
    """What the command line adds to a config; ``None`` means "use the config's value"."""

    out: Path | None = None
    """Directory in which the run directory is created (config ``out``, default ``results``)."""
    resume: Path | None = None
    """An existing run directory to complete."""
    data_dir: Path | None = None
    """Dataset dir; else ``SIEVAL_DATA_DIR``, else the config's ``data_dir``, else ``data`` or
    ``../shared/data`` (``DEFAULT_DATA_DIRS``), whichever exists."""
    limit: int | None = None
    """Cap every task's ``n`` (it enters the run identity like ``n`` does)."""
    concurrency: int | None = None
    """Global cap on requests in flight (config ``concurrency``)."""
    models: Sequence[str] = ()
    tasks: Sequence[str] = ()
    wire_log: bool = False
    """Write ``<run>/<model>/wire.jsonl`` (every attempt, secrets redacted; a shard writes
    ``<run>/<model>/shards/<k>/wire.jsonl``)."""
    run_name: str | None = None
    record_tokens: bool = False
    """Keep every input and sampled token (text, logprob, id, top-k) in the records: the evidence
    ``sieval parity`` compares; large for long prompts, so off by default."""
    preflight: bool = True
    """Run the pre-run checks (model id, top-k, context, BOS); ``--no-preflight`` skips them."""
    max_failures: MaxFailures = None
    """Stop a run failing wholesale (``stopping.py``): ``"auto"`` when the first samples of a
    task all fail for one reason (the command line's default), more than N failed samples
    (N >= 1), more than this fraction of the samples run so far (below 1); None never stops."""
    on_run_dir: Callable[[Path], None] | None = None
    """Called with the run directory once it exists (the CLI prints how to resume on Ctrl-C)."""
    on_stage: Callable[[str], None] | None = None
    """Called with one line before each slow stage (loading data, reaching a server, checks)."""
    plan_only: bool = False
    """Stop once every check passed and ``run.json`` is written: nothing runs (``sieval plan``);
    the result holds the plan and what the checks found (``RunResult.setup``)."""
    shard: int | None = None
    """Run shard k of a planned run (with ``resume`` = its directory): records go to
    ``<model>/<task>/shards/<k>/`` and no ``report.json`` is written (``sieval finalize`` does)."""
    restrict: Callable[[Plan], Plan] | None = None
    """Applied to the plan before anything runs: a shard's samples and its share of the budget."""
    serving_checks: str = "auto"
    """The serving checks (``runner/serving``): ``auto`` (what the tasks depend on), ``all``,
    ``off``, or names; off with ``preflight`` off."""
    accept_numerics_change: bool = False
    """Resume onto a server whose serving fingerprint changed (the run records both)."""


@dataclass
class RunResult:
    run_dir: Path
    report: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    stopped: str | None = None
    """Why the run stopped before its last sample (``--max-failures``), else None."""
    plan: Plan | None = field(default=None, repr=False)  # its config may hold a password
    setup: dict[str, Any] = field(default_factory=dict)
    """What the servers and checks said (``provenance``, ``facts``, ``checks``, as plain data)."""

    @property
    def failed(self) -> int:
        return sum(int(r["samples"]["failed"]) for r in self.report["results"])

    @property
    def exit_code(self) -> int:
        """0 when every sample was scored, 1 when samples failed or the run was stopped."""
        return 1 if self.failed or self.stopped else 0


def run_eval(
    config: EvalConfig,
    options: RunOptions | None = None,
    *,
    tasks: Mapping[str, Task] | None = None,
    transport_factory: TransportFactory | None = None,
    progress: ProgressSink | None = None,
) -> RunResult:
    """Run ``config`` to completion (synchronous wrapper of ``arun_eval``)."""
    return asyncio.run(
        arun_eval(
            config,
            options,
            tasks=tasks,
            transport_factory=transport_factory,
            progress=progress,
        )
    )


DEFAULT_DATA_DIRS = (Path("data"), Path("..") / "shared" / "data")
"""Where data is looked for (relative to the working directory) when nothing names a place."""


def resolve_data_dir(config: EvalConfig, options: RunOptions) -> Path:
    if options.data_dir is not None:
        return options.data_dir
    env = os.environ.get("SIEVAL_DATA_DIR")
    if env:
        return Path(env)
    if config.data_dir:
        return Path(config.data_dir)
    # no config says where: ./data, else the benchmark data beside a checkout (../shared/data)
    return next((p for p in DEFAULT_DATA_DIRS if p.is_dir()), DEFAULT_DATA_DIRS[0])


async def arun_eval(
    config: EvalConfig,
    options: RunOptions | None = None,
    *,
    tasks: Mapping[str, Task] | None = None,
    transport_factory: TransportFactory | None = None,
    progress: ProgressSink | None = None,
) -> RunResult:
    """Check everything (``ConfigError`` before any directory is made), then run and report.
    The run directory is held (``lock.hold_run``) from when it is known to the end; a shard's
    lock is its caller's (``shards.run_shard``)."""
    options = options or RunOptions()
    if options.concurrency is not None and options.concurrency < 1:
        raise ConfigError("--concurrency must be >= 1", path="concurrency")
    if options.max_failures is not None:
        parse_max_failures(str(options.max_failures))  # the one check of its value
    with contextlib.ExitStack() as locks:
        return await _arun_eval(
            config,
            options,
            locks,
            tasks=tasks,
            transport_factory=transport_factory,
            progress=progress,
        )


async def _arun_eval(
    config: EvalConfig,
    options: RunOptions,
    locks: contextlib.ExitStack,
    *,
    tasks: Mapping[str, Task] | None,
    transport_factory: TransportFactory | None,
    progress: ProgressSink | None,
) -> RunResult:
    stage = options.on_stage or (lambda text: None)
    selected = select(config, options.models, options.tasks)
    # a resume plans (and reports) the whole run and runs only the selected (model, task) units
    config = config if options.resume is not None else selected
    run_only = {(m.label, t.name) for m in selected.models for t in selected.tasks}
    data_dir = resolve_data_dir(config, options)
    for entry in config.models:
        if entry.endpoint_note:  # said once, before anything is reached
            stage(entry.endpoint_note)
    stage(f"loading {', '.join(t.name for t in config.tasks)} from {data_dir}")
    plan = plan_run(config, data_dir=data_dir, limit=options.limit, tasks=tasks)
    if options.restrict is not None:
        plan = options.restrict(plan)
    warnings: list[str] = list(plan.notes)
    if options.resume is not None:
        run_dir = options.resume
        check_resume(run_dir, plan.identity, plan.inputs)
        if options.shard is None:
            locks.enter_context(hold_run(run_dir))
        if options.shard is None and not options.plan_only:
            scored, failed, total = _recorded(plan, run_dir, run_only)
            if scored == total:
                stage(
                    f"{run_dir} is complete: all {total} samples are recorded and scored; "
                    "nothing to run, no server needed"
                )
                return _finished(plan, run_dir, warnings)
            again = f" ({failed} of them failed before and run again)" if failed else ""
            stage(f"resuming {run_dir}: {scored} recorded, {total - scored} to go{again}")
    else:
        run_dir = new_run_dir(Path(options.out or config.out), options.run_name, plan.identity)
    async with contextlib.AsyncExitStack() as stack:
        urls: dict[str, str] = {}
        transports: dict[str, Transport] = {}
        provenance: dict[str, Provenance] = {}
        limits: dict[str, Limits] = {}
        checks: dict[str, list[CheckResult]] = {}
        facts: dict[str, ModelFacts] = {}
        primed: dict[str, Primed] = {}
        serving: dict[str, Serving] = {}
        budgets = connection_budgets([pm.config for pm in plan.models])
        for pm in plan.models:
            cfg = pm.config
            url_check = check_endpoint(pm)
            if options.preflight and url_check.outcome == "failed":
                raise failure(pm, url_check)
            if cfg.endpoint == EMBEDDED:
                stage("starting the embedded reference server")
                urls[pm.label] = await stack.enter_async_context(embedded_server())
            else:
                urls[pm.label] = cfg.base_url
                stage(f"reaching {redact_url(urls[pm.label])} ({pm.dialect.id})")
            if transport_factory is not None:
                transports[pm.label] = transport_factory(cfg)
            provenance[pm.label] = await preflight(
                urls[pm.label],
                dialect=pm.dialect,
                api_key=pm.api_key,
                auth=pm.auth,
                transport=transports.get(pm.label),
                shown=EMBEDDED if cfg.endpoint == EMBEDDED else None,
                model_id=cfg.model,
            )
            if cfg.endpoint == EMBEDDED:  # one id only, --no-preflight or not
                served = check_model(pm, provenance[pm.label])
                if served.outcome == "failed":
                    raise ConfigError(
                        f"the embedded reference server does not serve model {cfg.model!r}; "
                        f"it serves only {', '.join(provenance[pm.label].served_models)}: leave "
                        f"{named('model')} out, or set {setting('endpoint', 'URL')} to the "
                        "server that serves it",
                        path="model",
                    )
            connections, note = budgets[pm.label]
            limits[pm.label] = Limits(
                concurrency=connections,
                retries=cfg.retries,
                retry_after_max_s=cfg.retry_after_max_s,
                outage_s=cfg.outage_s,
            )
            if note:
                warnings.append(note)
            # a wire log holds every request the run sent: then the run sends its own again
            primed[pm.label] = {}
            facts[pm.label], found = await _facts_and_checks(
                pm,
                plan,
                urls[pm.label],
                transports,
                provenance,
                options.preflight,
                stage,
                None if options.wire_log else primed[pm.label],
            )
            if found is not None:
                checks[pm.label] = found
            serving[pm.label] = await serving_for(
                pm, plan, urls[pm.label], transports.get(pm.label), facts[pm.label],
                selection=parse_selection(options.serving_checks if options.preflight else "off"),
                concurrency=options.concurrency or config.concurrency, stage=stage,
            )  # fmt: skip
            warnings.extend(serving[pm.label].warnings(pm.label))
        if options.resume is not None:  # other numerics than the run's are refused here
            write = options.shard is None and not options.plan_only
            accept = options.accept_numerics_change
            warnings.extend(check_numerics(run_dir, serving, accept=accept, write=write))
        # every check passed: only now does the run directory come into being
        if options.resume is None:
            create_run_dir(run_dir, fresh=True)
            locks.enter_context(hold_run(run_dir))
            # the run's own config: what it planned, --limit applied, so --resume needs nothing
            ran = msgspec.structs.replace(
                config,
                # the URL as used (a /v1 dropped, said above): a resume need not say it again
                models=[
                    msgspec.structs.replace(m, endpoint=m.base_url) if m.endpoint_note else m
                    for m in config.models
                ],
                tasks=[pt.config for pt in plan.tasks],
            )
            write_run_json(run_dir, plan.identity, plan.inputs, ran, run_json_entry(serving))
        if options.on_run_dir is not None:
            options.on_run_dir(run_dir)
        setup = {
            "provenance": {label: msgspec.to_builtins(p) for label, p in provenance.items()},
            "facts": {label: msgspec.to_builtins(f) for label, f in facts.items()},
            "checks": {label: msgspec.to_builtins(c) for label, c in checks.items()},
            "serving": report_section(serving),
        }
        if options.plan_only:
            return RunResult(run_dir, {"results": []}, warnings, plan=plan, setup=setup)
        global_cap = asyncio.Semaphore(options.concurrency or config.concurrency)
        sink = progress or NullProgress()
        engine = _Engine(
            plan,
            run_dir,
            global_cap,
            sink,
            record_tokens=options.record_tokens,
            max_failures=options.max_failures,
            run_only=run_only,
            shard=options.shard,
        )
        started = time.time()
        t0 = time.perf_counter()
        try:
            for pm in plan.models:
                wire = wire_log_path(run_dir, pm.dirname, options.shard)
                if options.wire_log:
                    repair_tail(wire)  # a resume appends after a crash's torn line otherwise
                model = Model(
                    dialect=pm.dialect,
                    base_url=urls[pm.label],
                    model_id=pm.config.model,
                    api_key=pm.api_key,
                    limits=limits[pm.label],
                    auth=pm.auth,
                    timeouts=_timeouts(pm.config.timeout_s),
                    request_defaults=pm.config.request_defaults,
                    wire_log=wire if options.wire_log else None,
                    transport=transports.get(pm.label),
                )
                stack.push_async_callback(model.aclose)
                engine.models[pm.label] = _Runtime(pm, model, facts[pm.label], primed[pm.label])
            # shards share the directory: each is its own process, watched through its records
            with running(run_dir) if options.shard is None else contextlib.nullcontext():
                warnings.extend(engine.prepare())
                await engine.run()
        finally:
            sink.close()
            engine.close()
        wall = time.perf_counter() - t0
    if engine.broken is not None:
        raise _stopped(engine.broken, run_dir, options.shard)
    report = build_report(
        plan,
        run_dir,
        provenance=provenance,
        started=started,
        wall_s=wall,
        requests=sum(rt.calls for rt in engine.models.values()),
        samples_run=engine.samples_run,
        resumed=options.resume is not None,
        warnings=warnings,
        checks={label: [msgspec.to_builtins(c) for c in found] for label, found in checks.items()},
        previous=(
            _previous_report(run_dir)
            if options.resume is not None and options.shard is None
            else None
        ),
        facts=facts,
        shard=options.shard,
        serving=report_section(serving, run_dir),
    )
    if engine.stopped:
        report["stopped"] = engine.stopped
    warnings.extend(truncation_warnings(report["results"]))  # report["warnings"] is this list
    if options.shard is None:  # a shard's figures are its own; the run's report is finalize's
        try:
            write_report(run_dir, report)
        except StorageError as exc:
            raise _stopped(exc, run_dir, None) from None
    return RunResult(
        run_dir=run_dir,
        report=report,
        warnings=warnings,
        stopped=engine.stopped,
        plan=plan,
        setup=setup,
    )


def _recorded(plan: Plan, run_dir: Path, run_only: set[tuple[str, str]]) -> tuple[int, int, int]:
    """Of the samples a resume would run: how many are scored, failed, and in all."""
    scored = failed = total = 0
    for pm in plan.models:
        for pt in plan.tasks:
            if (pm.label, pt.name) not in run_only:
                continue
            path = records_path(run_dir, pm.dirname, pt.name)
            status = statuses_at(path, pt.samples.position, len(pt.samples))
            scored, failed = scored + status.count(SCORED), failed + status.count(FAILED)
            total += len(pt.samples)
    return scored, failed, total


def _finished(plan: Plan, run_dir: Path, warnings: list[str]) -> RunResult:
    """The result of resuming a run with nothing left to run, reached no server: its report (the
    last one's figures when still valid, else rebuilt from the records, with the servers as the
    last report named them)."""
    previous = _previous_report(run_dir)
    provenance: dict[str, Provenance] = {}
    for result in (previous or {}).get("results", []):
        said = result.get("provenance") or {}
        if isinstance(said.get("endpoint"), str):
            provenance.setdefault(
                result["model"],
                Provenance(
                    endpoint=said["endpoint"],
                    server_version=said.get("server_version"),
                    served_models=list(said.get("served_models") or []),
                ),
            )
    report = build_report(
        plan,
        run_dir,
        provenance=provenance,
        started=time.time(),
        wall_s=0.0,
        requests=0,
        samples_run=0,
        resumed=True,
        warnings=warnings,
        checks=(previous or {}).get("preflight"),
        previous=previous,
    )
    write_report(run_dir, report)  # one more session, of no requests: a resume adds, never erases
    return RunResult(run_dir=run_dir, report=report, warnings=warnings, plan=plan)


def _stopped(exc: StorageError, run_dir: Path, shard: int | None) -> StorageError:
    """``exc`` as the reason a run stopped, with how to complete it."""
    again = (
        f"rerun the same command (shard {shard} resumes from its own records)"
        if shard is not None
        else f"resume with: sieval eval --resume {run_dir}"
    )
    return StorageError(
        f"{exc.message}; the run stopped and every sample recorded so far is kept: once fixed, "
        f"{again}",
        path=exc.path or str(run_dir),
        stopped=True,
    )


def _previous_report(run_dir: Path) -> dict[str, Any] | None:
    try:
        return load_report(run_dir)
    except ConfigError:
        return None


async def _facts_and_checks(
    pm: PlannedModel,
    plan: Plan,
    url: str,
    transports: Mapping[str, Transport],
    provenance: Mapping[str, Provenance],
    preflight: bool,
    stage: Callable[[str], None],
    primed: Primed | None,
) -> tuple[ModelFacts, list[CheckResult] | None]:
    """The model's facts (with the token ids its tasks asked for, read from the server's
    tokenizer) and, unless skipped, the pre-run checks, through a short-lived Model like the
    run's own."""
    model = Model(
        dialect=pm.dialect,
        base_url=url,
        model_id=pm.config.model,
        api_key=pm.api_key,
        limits=Limits(
            concurrency=2,
            retries=pm.config.retries,
            retry_after_max_s=pm.config.retry_after_max_s,
            outage_s=pm.config.outage_s,
        ),
        auth=pm.auth,
        timeouts=_timeouts(pm.config.timeout_s),
        request_defaults=pm.config.request_defaults,
        transport=transports.get(pm.label),
    )
    try:
        facts = pm.facts
        texts = [t for pt in plan.tasks for t in getattr(pt.task, "token_texts", _none)(pt.config)]
        if texts and "candidate_scoring" in facts.capabilities:
            stage(f"reading the token ids of {len(texts)} task texts from {pm.label}'s tokenizer")
            ids = await resolve_token_ids(model, texts)
            facts = msgspec.structs.replace(facts, token_ids=ids)
        docs = [
            t
            for pt in plan.tasks
            for t in getattr(pt.task, "documents", _none)(pt.samples, pt.config)
        ]
        if docs:  # rolling log-likelihood: whole documents through the server's tokenizer
            stage(f"tokenizing {len(docs)} documents through {pm.label}'s tokenizer")
            length = provenance[pm.label].max_model_len.get(pm.config.model)
            facts = msgspec.structs.replace(facts, **await resolve_documents(model, docs, length))
        if not preflight:
            return facts, None
        stage(f"pre-run checks for {pm.label} (skip with --no-preflight)")
        return facts, await run_checks(model, pm, plan.tasks, provenance[pm.label], facts, primed)
    finally:
        if pm.label not in transports:  # a shared test transport outlives the checks
            await model.aclose()


def _none(*_: Any) -> tuple[str, ...]:
    return ()


def _timeouts(timeout_s: float) -> Timeouts:
    return Timeouts(total=timeout_s, connect=min(10.0, timeout_s), read=min(300.0, timeout_s))


@dataclass
class _Runtime:
    planned: PlannedModel
    model: Model
    facts: ModelFacts
    primed: Primed = field(default_factory=dict)
    """The pre-run checks' answered calls of sample requests, used once instead of a resend."""
    calls: int = 0
    slots: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self.slots = asyncio.Semaphore(self.planned.config.concurrency_limit)

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.planned.api_key,) if self.planned.api_key else ()


def _left(samples: Iterable[Sample], status: bytearray) -> Iterator[Sample]:
    """The samples not yet scored: never run, or failed (a resume runs those again)."""
    return (s for s, done in zip(samples, status, strict=True) if done != SCORED)


@dataclass
class _Unit:
    runtime: _Runtime
    task: PlannedTask
    writer: RecordWriter
    todo: Iterable[Sample]
    """The samples left to run, read as they are sent (never all held)."""

    @property
    def key(self) -> str:
        return f"{self.runtime.planned.label}/{self.task.name}"


class _Engine:
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
        self.models: dict[str, _Runtime] = {}
        self.units: list[_Unit] = []
        self.writers: list[RecordWriter] = []
        self.samples_run = 0
        self.broken: StorageError | None = None
        """The failure that stopped the run: a records file could not be written."""

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
                unit = _Unit(runtime, pt, writer, todo)
                self.units.append(unit)
                self.sink.start(unit.key, len(pt.samples), done)
        return notes

    def close(self) -> None:
        """Close every records file; the first failure (a full disk) becomes ``broken`` (the
        run raises it), and the other files are closed all the same."""
        failed: StorageError | None = None
        for writer in self.writers:
            try:
                writer.close()
            except StorageError as exc:
                failed = failed or exc
        if failed is not None and self.broken is None:
            self.broken = failed

    async def run(self) -> None:
        await asyncio.gather(*(self._run_unit(unit) for unit in self.units))

    async def _run_unit(self, unit: _Unit) -> None:
        limit = unit.runtime.planned.config.concurrency_limit
        pending: set[asyncio.Task[None]] = set()
        try:
            for sample in unit.todo:
                if len(pending) >= limit:
                    await self._drain(pending)
                if self.stopped:
                    break
                pending.add(asyncio.create_task(self._sample(unit, sample)))
            while pending and not self.stopped:
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

    async def _call(self, runtime: _Runtime, request: Request, key: str) -> Call:
        if runtime.primed:
            sent, call = runtime.primed.pop(key, (None, None))
            if call is not None and sent == request:
                return call
        async with runtime.slots, self.global_cap:
            runtime.calls += 1
            return await runtime.model.call(request)

    async def _sample(self, unit: _Unit, sample: Sample) -> None:
        runtime, pt = unit.runtime, unit.task
        started = time.time()
        t0 = time.perf_counter()
        requests: dict[str, RequestRecord] = {}
        error: dict[str, Any] | None = None
        result = None
        reported: str | None = None
        try:
            named = dict(pt.task.requests(sample, pt.config, runtime.facts))
            calls = await asyncio.gather(
                *(
                    self._call(runtime, r, primed_key(pt.name, sample.id, name))
                    for name, r in named.items()
                )
            )
            responses: dict[str, Response] = {}
            for name, call in zip(named, calls, strict=True):
                requests[name] = _request_record(call, runtime.secrets, self.record_tokens)
                reported = reported or call.reported_model
                if call.response is None:
                    error = error or requests[name].error
                    continue
                responses[name] = call.response
            if error is None:
                scorer = getattr(pt.task, "score_async", None)  # a checker that runs code
                result = (
                    await scorer(sample, responses, pt.config, runtime.facts)
                    if scorer is not None
                    else pt.task.score(sample, responses, pt.config, runtime.facts)
                )
        except Exception as exc:
            error = _error_record(exc, runtime.secrets)
        record = Record(
            schema_version=SCHEMA_VERSION,
            sample_id=sample.id,
            status="failed" if error is not None or result is None else "ok",
            model=runtime.planned.label,
            task=pt.name,
            group=sample.group,
            requests=requests,
            channels=dict(result.channels) if result is not None and error is None else {},
            prediction=result.prediction if result is not None and error is None else None,
            gold=sample.gold,
            metrics=(
                {k: float(v) for k, v in result.metrics.items()}
                if result is not None and error is None
                else {}
            ),
            error=error,
            reported_model=reported,
            started=started,
            duration_s=time.perf_counter() - t0,
            sample=describe(pt.task, sample),
        )
        if self.broken is not None:
            return  # the run is stopping: this sample runs again on --resume
        try:
            unit.writer.write(record)
        except StorageError as exc:
            self.broken = exc
            self.stopped = f"stopped: {exc.message}"
            self._halt.set()
            return
        self.samples_run += 1
        failed = (record.error or {"class": "Unknown"}) if record.status != "ok" else None
        reason = self.stopper.record(unit.key, failed)
        if reason is not None and self.stopped is None:
            self.stopped = reason
            self._halt.set()
        tokens = sum(sum(r.usage.get(k, 0) for k in _COUNTED) for r in requests.values())
        self.sink.advance(unit.key, record.status == "ok", tokens)


_COUNTED = ("input_tokens", "output_tokens")
"""The usage counts a sample's tokens/s adds up (prompt and generated)."""


def _error_record(exc: BaseException, secrets: tuple[str, ...]) -> dict[str, Any]:
    """The error as record data, secrets redacted once more (a server may echo a header)."""
    if isinstance(exc, SievalError):
        data = exc.to_record()
    else:  # a bug in task code: recorded and counted like any failure, never scored
        data = {"class": "InternalError", "message": f"{type(exc).__name__}: {exc}"}
    redacted: dict[str, Any] = redact_json(data, secrets)
    return redacted


def _prompt(request: Request) -> Any:
    if isinstance(request.input, ChatInput):
        return msgspec.to_builtins(request.input.messages)
    return msgspec.to_builtins(request.input)


def _token_rows(tokens: Any) -> list[list[Any]] | None:
    """Tokens as compact rows ``[text, logprob, token_id, [[alt, logprob], ...]]``."""
    if not isinstance(tokens, tuple):
        return None
    rows: list[list[Any]] = []
    for t in tokens:
        top = [[e.token, e.logprob] for e in t.top] if isinstance(t.top, tuple) else None
        logprob = t.logprob if isinstance(t.logprob, float) else None
        token_id = t.token_id if isinstance(t.token_id, int) else None
        rows.append([t.text, logprob, token_id, top])
    return rows


def _evidence(response: Response) -> dict[str, Any]:
    return {
        "input": _token_rows(response.input_tokens),
        "choices": [{"text": c.text, "tokens": _token_rows(c.tokens)} for c in response.choices],
    }


def _request_record(call: Call, secrets: tuple[str, ...], record_tokens: bool) -> RequestRecord:
    """One request of a sample as it happened, from its ``Call`` (never lowered again)."""
    response = call.response
    usage: dict[str, int] = {}
    if response is not None:
        usage = {
            k: v
            for k, v in msgspec.to_builtins(response.usage).items()
            if isinstance(v, int) and not isinstance(v, bool)
        }
    timings: dict[str, float] = {}
    if call.timings is not None:
        timings = {"total_s": round(call.timings.wall_s, 6)}
        if (
            call.request.scheduling.stream
        ):  # the time to the first event; a whole reply's is ~ total_s
            timings["first_byte_s"] = round(call.timings.first_byte_s, 6)
    if call.attempts > 1:
        timings["attempts"] = call.attempts
    return RequestRecord(
        prompt=_prompt(call.request) if call.body is None else None,
        body=call.body,
        ledger=[msgspec.to_builtins(d) for d in call.ledger],
        usage=usage,
        timings=timings,
        warnings=list(response.warnings) if response else [],
        error=_error_record(call.error, secrets) if call.error is not None else None,
        tokens=_evidence(response) if record_tokens and response else None,
        status=call.status,
        finish=_finish(response) if response else [],
        reply=call.reply,
    )


def _finish(response: Response) -> list[str]:
    """Each choice's finish reason as the server said it, marked when the answer is empty."""
    out = []
    for c in response.choices:
        reason = c.finish_reason if isinstance(c.finish_reason, str) else ""
        empty = not c.text and not c.tool_calls
        out.append(f"{reason}:empty" if empty else reason)
    return out
