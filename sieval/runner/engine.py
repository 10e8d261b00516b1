"""The evaluation engine: plan, set up, run every (model, task) pair, write records and report.

Typical use::

    result = run_eval(load_config("eval.yaml"), RunOptions(data_dir=Path("../shared/data")))
    print(result.run_dir, result.exit_code)

A run is three steps, each its own module: the plan (``plan.py``: everything decided before any
I/O), the setup (``setup.py``: every server reached and checked, one owner per endpoint holding
its budget and its connections, ``endpoints.py``), and the scheduler (``scheduler.py``: the
samples sent within the endpoints' budgets and the run's global cap, recorded as they finish).
This module runs them in order, keeps the run directory, and writes the report.

Its steps, each handing what it learned to the next: ``_plan`` (the plan, what to run, the
notes), ``_open`` (the run directory: named, or an existing one checked and held), ``_set_up``
(the servers reached and checked, the forecast), ``_create`` (the directory, ``run.json`` and
``forecast.json`` written), ``_schedule`` (the samples sent and recorded), ``_report``
(``report.json``). Which of them run, and what they write, is the run's ``Mode``, decided once
from its options: a run, a resume, a dry run, a plan, a shard.

Failures: a sample whose request or score raises is recorded with the error's class and message
and never scored. On ``--resume`` recorded *scored* samples are skipped and recorded *failed*
samples are run again (their old line stays; the newest line per sample id wins).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..cost.budget import check_budget, open_budget
from ..cost.forecast import (
    FORECAST_FILE,
    CostOptions,
    Costs,
    Forecast,
    forecast_run,
    write_forecast,
)
from ..cost.rate import measure
from ..data.source import find_data_dir
from ..errors import ConfigError
from ..plan.config import EvalConfig
from ..plan.plan import Plan, check_ready, plan_run, select
from ..plan.run_config import stored
from ..results.document import CacheUse, Report, Server
from ..results.report import build_report, load_report, truncation_warnings, write_report
from ..results.snapshot import running
from ..serving.fingerprint_history import check_numerics, report_section, run_json_entry
from ..store.files import StorageError, repair_tail
from ..store.lock import hold_run
from ..store.records import FAILED, SCORED, records_path, statuses_at, wire_log_path
from ..store.rundir import check_resume, create_run_dir, new_run_dir, write_run_json
from ..tasks.base import Task
from .progress import NullProgress, ProgressSink
from .rerun import censored_at, check_factor
from .scheduler import Runtime, Scheduler
from .setup import Found, Setup, TransportFactory, set_up
from .stopping import MaxFailures, parse_max_failures

__all__ = [
    "Mode",
    "RunOptions",
    "RunResult",
    "TransportFactory",
    "arun_eval",
    "resolve_data_dir",
    "run_eval",
]


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
    limit: int | float | None = None
    """Cap every task's ``n``, or a fraction of its rows (it enters the run identity like ``n``
    does)."""
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
    cost: CostOptions = field(default_factory=CostOptions)
    """``--dry-run``, ``--forecast`` and the budgets (``forecast.py``, ``budget.py``)."""
    serving_checks: str = "auto"
    """The serving checks (``sieval/serving``): ``auto`` (what the tasks depend on), ``all``,
    ``off``, or names; off with ``preflight`` off."""
    cache: Path | None = None
    """``--cache DIR``: keep replies there and answer a request sent before to a server of the
    same serving fingerprint from them (``reply_cache.py``)."""
    accept_numerics_change: bool = False
    """Resume onto a server whose serving fingerprint changed (the run records both)."""
    rerun_censored: float | None = None
    """After the run's samples, run each censored one again with ``max_tokens`` times this
    factor (> 1), recorded as a re-run (``rerun.py``); None: no such stage. It changes no
    planned request, so it is not in the run identity: each re-run's record says its budget."""
    allow_unsafe_code: bool = False
    """Let the code tasks run the model's code with no sandbox when none can run here
    (``--allow-unsafe-code``, as lm-eval's ``--confirm_run_unsafe_code``); said loudly."""


@dataclass
class RunResult:
    run_dir: Path
    report: Report | None
    """The run's report; None when nothing ran (a dry run, a plan)."""
    warnings: list[str] = field(default_factory=list)
    stopped: str | None = None
    """Why the run stopped before its last sample (``--max-failures``, a budget), else None."""
    plan: Plan | None = field(default=None, repr=False)  # its config may hold a password
    setup: Found = field(default_factory=Found)
    """What the servers and checks said (``provenance``, ``facts``, ``checks``, ``serving``,
    the ``forecast``); empty when no server was reached."""
    forecast: Forecast | None = None
    """The run's cost forecast, when it made one (``forecast.py``)."""

    @property
    def failed(self) -> int:
        return self.report.failed if self.report is not None else 0

    @property
    def exit_code(self) -> int:
        """0 when every sample was scored, 1 when samples failed or the run was stopped."""
        return 1 if self.failed or self.stopped else 0


@dataclass(frozen=True)
class Mode:
    """What a run does, decided once from its options (``Mode.of``)."""

    name: str
    sends: bool
    """Model requests go out: the pre-flight's first request, the checks, the samples (not a
    dry run, which asks only read-only and tokenize routes)."""
    continues: bool
    """The run directory exists already (a resume, a shard); else it is named, and created
    once every check passed."""
    owns: bool
    """This process owns the run directory: it holds its lock, writes ``run.json``'s
    fingerprints, ``forecast.json``, ``running.json`` and ``report.json`` (a shard writes only
    its own records; its caller holds its lock)."""
    schedules: bool
    """Samples are sent (not a dry run, nor a plan)."""

    @staticmethod
    def of(options: RunOptions) -> Mode:
        if options.cost.dry_run:
            if options.resume is not None or options.plan_only:
                raise ConfigError("--dry-run forecasts a new run; it takes no --resume or plan")
            return DRY_RUN
        if options.plan_only:
            if options.resume is not None or options.shard is not None:
                raise ConfigError("a plan makes a new run directory; it takes no resume or shard")
            return PLAN
        if options.shard is not None:
            if options.resume is None:
                raise ConfigError("a shard runs in its planned run directory: give it as resume")
            return SHARD
        return RUN if options.resume is None else RESUME


RUN = Mode("run", sends=True, continues=False, owns=True, schedules=True)
RESUME = Mode("resume", sends=True, continues=True, owns=True, schedules=True)
SHARD = Mode("shard", sends=True, continues=True, owns=False, schedules=True)
PLAN = Mode("plan", sends=True, continues=False, owns=True, schedules=False)
DRY_RUN = Mode("dry run", sends=False, continues=False, owns=False, schedules=False)


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


def _limit_not_applied(plan: Plan, limit: int | float | None) -> list[str]:
    """What a resume's ``--limit`` does not do: a run's samples are fixed when it starts, so a
    limit above a task's planned n adds none (a lower one changes the plan: refused by
    ``check_resume``)."""
    if limit is None:
        return []
    fewer = {pt.name: pt.config.n for pt in plan.tasks if pt.config.n is not None}
    fewer = {name: n for name, n in fewer.items() if type(n) is type(limit) and n < limit}
    if not fewer:
        return []
    said = ", ".join(f"{name} {n}" for name, n in fewer.items())
    return [
        f"--limit {limit} does not add samples to a resumed run: it completes the samples it was "
        f"planned with ({said}); for more, start a new run with --limit {limit}"
    ]


def resolve_data_dir(config: EvalConfig, options: RunOptions) -> Path:
    """The data directory the run reads (``data.source.find_data_dir``)."""
    return find_data_dir(options.data_dir, config.data_dir)


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
    if options.rerun_censored is not None:
        check_factor(options.rerun_censored)
        if options.shard is not None or options.cost.dry_run:
            raise ConfigError(
                "--rerun-censored re-runs a whole run's censored samples: run it on the finished "
                "run (sieval eval --resume RUN_DIR --rerun-censored FACTOR), not on a shard or a "
                "--dry-run",
                path="rerun_censored",
            )
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
    mode = Mode.of(options)
    stage = options.on_stage or (lambda text: None)
    planned = _plan(config, options, mode, tasks, stage)
    run_dir = _open(planned, options, mode, locks)
    if mode is RESUME:
        done = _done(planned, run_dir, options.rerun_censored, stage)
        if done is not None:
            return done
    async with contextlib.AsyncExitStack() as stack:
        checked = await _set_up(planned, run_dir, options, mode, stack, transport_factory)
        forecast = checked.costs.forecast if checked.costs is not None else None
        if not mode.sends:  # a dry run: the forecast alone, and no run directory
            return RunResult(run_dir, None, planned.warnings, plan=planned.plan, forecast=forecast)
        found = _create(planned, run_dir, checked, options, mode, locks)
        if not mode.schedules:  # a plan: run.json and what the checks found, nothing run
            return RunResult(run_dir, None, planned.warnings, plan=planned.plan, setup=found)
        ran = await _schedule(planned, run_dir, checked, options, mode, stack, progress)
    report = _report(planned, run_dir, checked, found, ran, options, mode)
    return RunResult(
        run_dir=run_dir,
        report=report,
        warnings=planned.warnings,
        stopped=ran.scheduler.stopped,
        plan=planned.plan,
        setup=found,
        forecast=forecast,
    )


@dataclass
class Planned:
    """What the plan step knows: the config the run keeps, its plan, the (model, task) units
    this session runs, and the warnings so far (the report's, in the order said)."""

    config: EvalConfig
    plan: Plan
    run_only: set[tuple[str, str]]
    warnings: list[str]


def _plan(
    config: EvalConfig,
    options: RunOptions,
    mode: Mode,
    tasks: Mapping[str, Task] | None,
    stage: Callable[[str], None],
) -> Planned:
    """Plan the run, with nothing sent (``ConfigError`` on any problem)."""
    selected = select(config, options.models, options.tasks)
    # a resume plans (and reports) the whole run and runs only the selected (model, task) units
    config = config if mode.continues else selected
    run_only = {(m.label, t.name) for m in selected.models for t in selected.tasks}
    data_dir = resolve_data_dir(config, options)
    for entry in config.models:
        if entry.endpoint_note:  # said once, before anything is reached
            stage(entry.endpoint_note)
    stage(f"loading {', '.join(t.name for t in config.tasks)} from {data_dir}")
    plan = plan_run(config, data_dir=data_dir, limit=options.limit, tasks=tasks)
    if options.restrict is not None:
        plan = options.restrict(plan)
    check_budget(options.cost, [*plan.models, *plan.role_models])  # every model's price
    for line in plan.overrides:  # --gen-kwargs over what a task sets: said before it runs
        stage(line)
    return Planned(config, plan, run_only, [*plan.notes, *plan.overrides])


def _open(planned: Planned, options: RunOptions, mode: Mode, locks: contextlib.ExitStack) -> Path:
    """The run directory: an existing one checked against the plan (and held, when this
    process owns it), or a new one's name (made by ``_create`` once every check passed)."""
    if options.resume is None or not mode.continues:
        out = Path(options.out or planned.config.out)
        return new_run_dir(out, options.run_name, planned.plan.identity)
    stage = options.on_stage or (lambda text: None)
    for note in _limit_not_applied(planned.plan, options.limit):
        stage(f"warning: {note}")
        planned.warnings.append(note)
    check_resume(options.resume, planned.plan.identity, planned.plan.inputs)
    if mode.owns:
        locks.enter_context(hold_run(options.resume))
    return options.resume


def _done(
    planned: Planned, run_dir: Path, rerun_censored: float | None, stage: Callable[[str], None]
) -> RunResult | None:
    """A resume of a run with nothing left to run (no sample unscored, none censored to re-run
    when asked): its report, reaching no server; else None, having said what is left."""
    scored, failed, total = _recorded(planned.plan, run_dir, planned.run_only)
    censored = (
        _censored(planned.plan, run_dir, planned.run_only, rerun_censored)
        if rerun_censored is not None
        else 0
    )
    if scored == total and not censored:
        again = " and none is censored" if rerun_censored is not None else ""
        stage(
            f"{run_dir} is complete: all {total} samples are recorded and scored{again}; "
            "nothing to run, no server needed"
        )
        return _finished(planned.plan, run_dir, planned.warnings)
    if scored == total:
        stage(f"{run_dir} is complete; {censored} censored sample(s) to re-run")
    again = f" ({failed} of them failed before and run again)" if failed else ""
    stage(f"resuming {run_dir}: {scored} recorded, {total - scored} to go{again}")
    return None


@dataclass
class Checked:
    """What the setup step knows: the servers reached and checked, the forecast, and what the
    tasks' own checks found (``ready``: the code tasks' sandbox, per task)."""

    setup: Setup
    costs: Costs | None
    ready: dict[str, Any]


async def _set_up(
    planned: Planned,
    run_dir: Path,
    options: RunOptions,
    mode: Mode,
    stack: contextlib.AsyncExitStack,
    transport_factory: TransportFactory | None,
) -> Checked:
    """The tasks' own checks (the code tasks' sandbox), before any server is asked; then reach
    and check every server (``stack`` holds them until the run ends), compare a continued run's
    numerics with its own, and forecast when asked."""
    plan, warnings = planned.plan, planned.warnings
    stage = options.on_stage or (lambda text: None)
    readiness = check_ready(plan, options.allow_unsafe_code)
    for line in readiness.said:
        stage(line)
    for line in readiness.warnings:
        stage(f"warning: {line}")
    warnings.extend(readiness.warnings)
    setup = await set_up(
        plan,
        stack,
        preflight_checks=options.preflight and mode.sends,
        keep_primed=not options.wire_log,
        first_request=mode.sends,  # a listless server: no first request
        transport_factory=transport_factory,
        serving_checks=options.serving_checks,
        concurrency=options.concurrency or planned.config.concurrency,
        stage=stage,
    )
    warnings.extend(setup.endpoints.notes)
    for label, serving in setup.serving.items():
        warnings.extend(serving.warnings(label))
    if mode.continues:  # other numerics than the run's are refused here
        accept = options.accept_numerics_change
        warnings.extend(check_numerics(run_dir, setup.serving, accept=accept, write=mode.owns))
    costs: Costs | None = None
    if options.cost.wanted(plan.models, long=any(t.task.long_runs for t in plan.tasks)):
        every = [*plan.models, *plan.role_models]
        async with setup.tokenizing(every) as short:
            costs = await forecast_run(plan, setup.facts, short, stage, setup.contexts(every))
            await measure(
                costs.forecast, plan.models, short, setup.facts, options.cost.rate_probe, stage
            )
    return Checked(setup, costs, readiness.record)


def _create(
    planned: Planned,
    run_dir: Path,
    checked: Checked,
    options: RunOptions,
    mode: Mode,
    locks: contextlib.ExitStack,
) -> Found:
    """Every check passed: only now does a new run directory come into being, with its
    ``run.json`` (and ``forecast.json``). Returns what the setup found."""
    plan, setup, costs = planned.plan, checked.setup, checked.costs
    if not mode.continues:
        create_run_dir(run_dir, fresh=True)
        locks.enter_context(hold_run(run_dir))
        config = planned.config
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
        write_run_json(
            run_dir, plan.identity, plan.inputs, stored(ran), run_json_entry(setup.serving)
        )
    if costs is not None and mode.owns and not (run_dir / FORECAST_FILE).exists():
        write_forecast(run_dir, costs.forecast)  # the report shows it beside what was spent
    if options.on_run_dir is not None:
        options.on_run_dir(run_dir)
    found = setup.found()
    if costs is not None:
        found.forecast = costs.forecast
    return found


@dataclass
class Ran:
    """What the schedule step knows: the scheduler (its counts, why it stopped), and when."""

    scheduler: Scheduler
    started: float
    wall: float


async def _schedule(
    planned: Planned,
    run_dir: Path,
    checked: Checked,
    options: RunOptions,
    mode: Mode,
    stack: contextlib.AsyncExitStack,
    progress: ProgressSink | None,
) -> Ran:
    """Send the samples left to run within the budgets, recording each as it finishes; then,
    when asked, run the censored ones again at a larger budget (``rerun.py``)."""
    plan, setup, shard = planned.plan, checked.setup, options.shard
    stage = options.on_stage or (lambda text: None)
    sink = progress or NullProgress()
    scheduler = Scheduler(
        plan,
        run_dir,
        asyncio.Semaphore(options.concurrency or planned.config.concurrency),
        sink,
        record_tokens=options.record_tokens,
        max_failures=options.max_failures,
        run_only=planned.run_only,
        shard=shard,
    )
    scheduler.budget = open_budget(options.cost, plan, run_dir, shard, checked.costs)
    started = time.time()
    t0 = time.perf_counter()
    try:
        for pm in [*plan.models, *plan.role_models]:
            wire = wire_log_path(run_dir, pm.dirname, shard)
            if options.wire_log:
                repair_tail(wire)  # a resume appends after a crash's torn line otherwise
            model = setup.model(
                pm, wire_log=wire if options.wire_log else None, cache=options.cache
            )
            if options.cache is not None and pm.label not in setup.caches:
                note = (
                    f"--cache is not used for {pm.label}: a reply is kept under its server's "
                    "serving fingerprint, and the serving checks measured none (they are "
                    "off, or the fingerprint check is not selected)"
                )
                stage(f"warning: {note}")
                planned.warnings.append(note)
            stack.push_async_callback(model.aclose)
            runtime = Runtime(
                pm,
                model,
                setup.facts[pm.label],
                setup.endpoints[pm.label],
                setup.primed[pm.label],
            )
            if pm in plan.models:
                scheduler.models[pm.label] = runtime
            for role in plan.roles_of(pm):  # a judge: its calls recorded with the sample
                scheduler.roles[role] = runtime
        # shards share the directory: each is its own process, watched through its records
        with running(run_dir) if mode.owns else contextlib.nullcontext():
            planned.warnings.extend(scheduler.prepare())
            await scheduler.run()
            factor = options.rerun_censored
            if factor is not None and not scheduler.stopped and scheduler.broken is None:
                stage(f"re-running the censored samples with max_tokens ×{factor:g}")
                rerun = await scheduler.rerun_censored(factor)
                stage(f"re-ran {rerun} censored sample(s) with max_tokens ×{factor:g}")
    finally:
        sink.close()
        scheduler.close()
    if scheduler.broken is not None:
        raise _stopped(scheduler.broken, run_dir, shard)
    return Ran(scheduler, started, time.perf_counter() - t0)


def _report(
    planned: Planned,
    run_dir: Path,
    checked: Checked,
    found: Found,
    ran: Ran,
    options: RunOptions,
    mode: Mode,
) -> Report:
    """The run's report from its records (written unless this is a shard: a shard's figures
    are its own; the run's report is ``sieval finalize``'s)."""
    setup, scheduler = checked.setup, ran.scheduler
    planned.warnings.extend(c.summary(label) for label, c in setup.caches.items())
    report = build_report(
        planned.plan,
        run_dir,
        provenance=setup.provenance,
        started=ran.started,
        wall_s=ran.wall,
        requests=sum(rt.calls for rt in scheduler.runtimes()),
        samples_run=scheduler.samples_run,
        resumed=mode.continues,
        warnings=planned.warnings,
        checks=found.preflight(),
        previous=_previous_report(run_dir) if mode is RESUME else None,
        facts=setup.facts,
        shard=options.shard,
        serving=report_section(setup.serving, run_dir),
        ready=checked.ready,
    )
    if scheduler.stopped:
        report.stopped = scheduler.stopped
    if setup.caches:
        report.cache = {
            label: CacheUse(dir=str(c.directory), hits=c.hits, sent=c.sent, kept=c.kept)
            for label, c in setup.caches.items()
        }
    if scheduler.budget is not None:
        report.budget = scheduler.budget.summary()
    planned.warnings.extend(truncation_warnings(report.results))  # report.warnings is this list
    if mode.owns:
        try:
            write_report(run_dir, report)
        except StorageError as exc:
            raise _stopped(exc, run_dir, None) from None
    return report


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


def _censored(plan: Plan, run_dir: Path, run_only: set[tuple[str, str]], factor: float) -> int:
    """How many samples ``--rerun-censored factor`` would run again (``rerun.censored_at``)."""
    return sum(
        len(censored_at(records_path(run_dir, pm.dirname, pt.name), pt.samples, factor))
        for pm in plan.models
        for pt in plan.tasks
        if (pm.label, pt.name) in run_only
    )


def _finished(plan: Plan, run_dir: Path, warnings: list[str]) -> RunResult:
    """The result of resuming a run with nothing left to run, reached no server: its report (the
    last one's figures when still valid, else rebuilt from the records, with the servers as the
    last report named them)."""
    previous = _previous_report(run_dir)
    servers: dict[str, Server] = {}
    for result in previous.results if previous is not None else []:
        said = result.provenance
        if isinstance(said.endpoint, str):
            servers.setdefault(
                result.model,
                Server(
                    endpoint=said.endpoint,
                    server_version=said.server_version,
                    served_models=list(said.served_models),
                ),
            )
    report = build_report(
        plan,
        run_dir,
        provenance=servers,
        started=time.time(),
        wall_s=0.0,
        requests=0,
        samples_run=0,
        resumed=True,
        warnings=warnings,
        checks=previous.preflight if previous is not None else None,
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


def _previous_report(run_dir: Path) -> Report | None:
    try:
        return load_report(run_dir)
    except (ConfigError, StorageError):
        return None
