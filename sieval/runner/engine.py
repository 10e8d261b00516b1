"""The evaluation engine: plan, set up, run every (model, task) pair, write records and report.

Typical use::

    result = run_eval(load_config("eval.yaml"), RunOptions(data_dir=Path("../shared/data")))
    print(result.run_dir, result.exit_code)

A run is three steps, each its own module: the plan (``plan.py``: everything decided before any
I/O), the setup (``setup.py``: every server reached and checked, one owner per endpoint holding
its budget and its connections, ``endpoints.py``), and the scheduler (``scheduler.py``: the
samples sent within the endpoints' budgets and the run's global cap, recorded as they finish).
This module runs them in order, keeps the run directory, and writes the report.

Failures: a sample whose request or score raises is recorded with the error's class and message
and never scored. On ``--resume`` recorded *scored* samples are skipped and recorded *failed*
samples are run again (their old line stays; the newest line per sample id wins).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
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
from ..errors import ConfigError
from ..plan.config import EvalConfig
from ..plan.plan import Plan, check_ready, plan_run, select
from ..results.report import build_report, load_report, truncation_warnings, write_report
from ..results.snapshot import running
from ..serving.across_runs import check_numerics, report_section, run_json_entry
from ..store.files import StorageError, repair_tail
from ..store.lock import hold_run
from ..store.records import FAILED, SCORED, records_path, statuses_at, wire_log_path
from ..store.rundir import check_resume, create_run_dir, new_run_dir, write_run_json
from ..tasks.base import Task
from .preflight import Provenance
from .progress import NullProgress, ProgressSink
from .rerun import censored_at, check_factor
from .scheduler import Runtime, Scheduler
from .setup import TransportFactory, set_up
from .stopping import MaxFailures, parse_max_failures

__all__ = [
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
    cost: CostOptions = field(default_factory=CostOptions)
    """``--dry-run``, ``--forecast`` and the budgets (``forecast.py``, ``budget.py``)."""
    serving_checks: str = "auto"
    """The serving checks (``runner/serving``): ``auto`` (what the tasks depend on), ``all``,
    ``off``, or names; off with ``preflight`` off."""
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
    report: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    stopped: str | None = None
    """Why the run stopped before its last sample (``--max-failures``), else None."""
    plan: Plan | None = field(default=None, repr=False)  # its config may hold a password
    setup: dict[str, Any] = field(default_factory=dict)
    """What the servers and checks said (``provenance``, ``facts``, ``checks``, as plain data)."""
    forecast: Forecast | None = None
    """The run's cost forecast, when it made one (``forecast.py``)."""

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
    check_budget(options.cost, plan.models)  # a cost budget needs every model's price
    dry_run = options.cost.dry_run  # a forecast alone: no model request, no run directory
    if dry_run and (options.resume is not None or options.plan_only):
        raise ConfigError("--dry-run forecasts a new run; it takes no --resume or plan")
    warnings: list[str] = list(plan.notes)
    if options.resume is not None:
        run_dir = options.resume
        check_resume(run_dir, plan.identity, plan.inputs)
        if options.shard is None:
            locks.enter_context(hold_run(run_dir))
        if options.shard is None and not options.plan_only and not dry_run:
            scored, failed, total = _recorded(plan, run_dir, run_only)
            censored = (
                _censored(plan, run_dir, run_only, options.rerun_censored)
                if options.rerun_censored is not None
                else 0
            )
            if scored == total and not censored:
                again = " and none is censored" if options.rerun_censored is not None else ""
                stage(
                    f"{run_dir} is complete: all {total} samples are recorded and scored{again}; "
                    "nothing to run, no server needed"
                )
                return _finished(plan, run_dir, warnings)
            if scored == total:
                stage(f"{run_dir} is complete; {censored} censored sample(s) to re-run")
            again = f" ({failed} of them failed before and run again)" if failed else ""
            stage(f"resuming {run_dir}: {scored} recorded, {total - scored} to go{again}")
    else:
        run_dir = new_run_dir(Path(options.out or config.out), options.run_name, plan.identity)
    # the tasks' own checks (the code tasks' sandbox), before any server is asked
    readiness = check_ready(plan, options.allow_unsafe_code)
    for line in readiness.said:
        stage(line)
    for line in readiness.warnings:
        stage(f"warning: {line}")
    warnings.extend(readiness.warnings)
    async with contextlib.AsyncExitStack() as stack:
        setup = await set_up(
            plan,
            stack,
            preflight_checks=options.preflight and not dry_run,
            keep_primed=not options.wire_log,
            first_request=not dry_run,  # a listless server: no first request
            transport_factory=transport_factory,
            serving_checks=options.serving_checks,
            concurrency=options.concurrency or config.concurrency,
            stage=stage,
        )
        warnings.extend(setup.endpoints.notes)
        for label, serving in setup.serving.items():
            warnings.extend(serving.warnings(label))
        if options.resume is not None:  # other numerics than the run's are refused here
            write = options.shard is None and not options.plan_only
            accept = options.accept_numerics_change
            warnings.extend(check_numerics(run_dir, setup.serving, accept=accept, write=write))
        costs: Costs | None = None
        if options.cost.wanted(plan.models):
            costs = await forecast_run(plan, setup, stage)
        if dry_run:
            forecast = costs.forecast if costs is not None else None
            return RunResult(run_dir, {"results": []}, warnings, plan=plan, forecast=forecast)
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
            write_run_json(run_dir, plan.identity, plan.inputs, ran, run_json_entry(setup.serving))
        if costs is not None and options.shard is None and not (run_dir / FORECAST_FILE).exists():
            write_forecast(run_dir, costs.forecast)  # the report shows it beside what was spent
        if options.on_run_dir is not None:
            options.on_run_dir(run_dir)
        found = setup.as_data()
        if costs is not None:
            found["forecast"] = msgspec.to_builtins(costs.forecast)
        if options.plan_only:
            return RunResult(run_dir, {"results": []}, warnings, plan=plan, setup=found)
        global_cap = asyncio.Semaphore(options.concurrency or config.concurrency)
        sink = progress or NullProgress()
        scheduler = Scheduler(
            plan,
            run_dir,
            global_cap,
            sink,
            record_tokens=options.record_tokens,
            max_failures=options.max_failures,
            run_only=run_only,
            shard=options.shard,
        )
        scheduler.budget = open_budget(options.cost, plan, run_dir, options.shard, costs)
        started = time.time()
        t0 = time.perf_counter()
        try:
            for pm in plan.models:
                wire = wire_log_path(run_dir, pm.dirname, options.shard)
                if options.wire_log:
                    repair_tail(wire)  # a resume appends after a crash's torn line otherwise
                model = setup.model(pm, wire_log=wire if options.wire_log else None)
                stack.push_async_callback(model.aclose)
                scheduler.models[pm.label] = Runtime(
                    pm,
                    model,
                    setup.facts[pm.label],
                    setup.endpoints[pm.label],
                    setup.primed[pm.label],
                )
            # shards share the directory: each is its own process, watched through its records
            with running(run_dir) if options.shard is None else contextlib.nullcontext():
                warnings.extend(scheduler.prepare())
                await scheduler.run()
                factor = options.rerun_censored
                if factor is not None and not scheduler.stopped and scheduler.broken is None:
                    stage(f"re-running the censored samples with max_tokens ×{factor:g}")
                    rerun = await scheduler.rerun_censored(factor)
                    stage(f"re-ran {rerun} censored sample(s) with max_tokens ×{factor:g}")
        finally:
            sink.close()
            scheduler.close()
        wall = time.perf_counter() - t0
    if scheduler.broken is not None:
        raise _stopped(scheduler.broken, run_dir, options.shard)
    report = build_report(
        plan,
        run_dir,
        provenance=setup.provenance,
        started=started,
        wall_s=wall,
        requests=sum(rt.calls for rt in scheduler.models.values()),
        samples_run=scheduler.samples_run,
        resumed=options.resume is not None,
        warnings=warnings,
        checks={
            label: [msgspec.to_builtins(c) for c in found] for label, found in setup.checks.items()
        },
        previous=(
            _previous_report(run_dir)
            if options.resume is not None and options.shard is None
            else None
        ),
        facts=setup.facts,
        shard=options.shard,
        serving=report_section(setup.serving, run_dir),
        ready=readiness.record,
    )
    if scheduler.stopped:
        report["stopped"] = scheduler.stopped
    if scheduler.budget is not None:
        report["budget"] = scheduler.budget.summary()
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
        stopped=scheduler.stopped,
        plan=plan,
        setup=found,
        forecast=costs.forecast if costs is not None else None,
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
    except (ConfigError, StorageError):
        return None
