"""``report.json``: per (model, task) metrics, sample and failure counts, identity, provenance.

The report is always rebuilt from the records files, so an interrupted-then-resumed run and an
uninterrupted one report the same figures. Metrics come from ``task.aggregate`` over the scored
samples only, in the task's sample order; failed samples are counted beside them (``samples``,
``failures``) and never enter a metric as right or wrong.

Every per-sample metric has its uncertainty in ``intervals`` (``tally.py``): the standard error
and a 95% interval (``scoring/uncertainty.py``), and so has each figure the task derives from
sums (``Task.derived``: a perplexity). Samples are independent unless the task clusters them
(``Task.cluster_by``, MMLU by subject, a row's repeats), then the error is cluster-robust; the
interval depends on the metric's kind and range (``Task.metric_ranges``); ``estimator`` says
which.
Version 2 added ``intervals``. Each result's ``cost`` holds its forecast (when the run made one)
and what its records say was spent (``costs.py``); ``budget`` what a budget allowed and spent.

A generation task's result has ``censored`` (``tally.censored_figures``, ``scoring/censored.py``):
how many answers the token budget cut before they gave one (``count`` of ``of``, ``share``), and
the headline with them counted wrong (``as_wrong``) and left out (``left_out``), each with its
interval; ``reruns`` when ``--rerun-censored`` re-ran some of them at a larger budget. It is
absent for a task that does not generate, and for records written before it.
Each result's ``marks`` (``marks.py``) say what a reader must know before trusting its headline:
``partial`` (samples failed for their content) and ``exposed`` (a server default the serving
checks could not clear).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from ..cost.forecast import Forecast, UnitForecast, read_forecast
from ..cost.spent import spent_by_role
from ..errors import ConfigError
from ..plan.plan import protocol
from ..store.files import storage_error, write_atomic
from ..store.identity import sieval_version
from ..store.records import SCHEMA_VERSION, records_path
from ..store.rundir import run_directory
from .document import (
    CostActual,
    CostForecast,
    Report,
    RoleCost,
    RunInfo,
    SampleCounts,
    Server,
    Session,
    Timings,
    UnitCost,
    UnitProvenance,
    UnitResult,
)
from .marks import judged_mark, marks_of
from .tally import censored_figures, finish_counts, intervals, tally_unit

if TYPE_CHECKING:
    from ..plan.config import Price
    from ..plan.plan import Plan, PlannedModel, PlannedTask
    from ..tasks.base import ModelFacts

__all__ = [
    "DENOMINATOR",
    "REPORT_VERSION",
    "TRUNCATION_WARNING",
    "build_report",
    "intervals",
    "load_report",
    "unit_cost",
    "write_report",
]

REPORT_VERSION = 2

DENOMINATOR = (
    "metrics are computed over scored samples only; failed samples are counted in "
    "samples.failed and failures (by error class) beside them and are never scored as wrong; "
    "samples.missing counts samples with no record (an interrupted run); finish_reasons count "
    "how the answers ended, in the servers' words, and empty_answers those with no text: both "
    "are reported, never scored (generates: false marks a scoring task, whose one-token probe "
    "ends by length); censored counts a generation task's answers the token budget cut before "
    "they gave one (scored as their checker scored them, wrong when it read nothing), with the "
    "headline's bounds: censored counted wrong, and left out"
)

TRUNCATION_WARNING = 0.1
"""The share of a task's answers cut by the token budget (``truncated_rate``) above which the
run warns: a budget too small for thinking plus answer scores the budget, not the model."""


def truncation_warnings(results: Sequence[UnitResult]) -> list[str]:
    """One warning per (model, task) whose ``truncated_rate`` passes ``TRUNCATION_WARNING``."""
    out = []
    for result in results:
        rate = result.metrics.get("truncated_rate")
        if isinstance(rate, float) and rate > TRUNCATION_WARNING:
            out.append(
                f"{result.model}/{result.task}: {rate:.0%} of the answers were cut by the "
                f"token budget (truncated_rate > {TRUNCATION_WARNING:.0%}); raise the task's "
                "max_tokens (--task NAME:max_tokens=N) so thinking and answer fit, or re-run the "
                "censored ones at a larger budget (sieval eval --resume RUN --rerun-censored 4)"
            )
    return out


def build_report(
    plan: Plan,
    run_dir: Path,
    *,
    provenance: Mapping[str, Server],
    started: float,
    wall_s: float,
    requests: int,
    samples_run: int,
    resumed: bool,
    warnings: list[str],
    checks: dict[str, list[dict[str, Any]]] | None = None,
    previous: Report | None = None,
    facts: Mapping[str, ModelFacts] | None = None,
    shard: int | None = None,
    serving: Mapping[str, dict[str, Any]] | None = None,
    ready: Mapping[str, Any] | None = None,
) -> Report:
    """The report of a run; ``previous`` is the report a resumed run had, whose timings are kept:
    a resume adds a session, it never erases the ones before it. A resume that ran nothing keeps
    the previous figures when no record changed since they were written (``_still_valid``).
    ``shard`` reports one shard's records (``records_path``) over the plan's samples.
    ``serving``: what the serving checks found, per model
    (``serving.fingerprint_history.report_section``); a session that ran none keeps the previous
    report's. ``ready``: what the tasks' own checks found, per task (``Task.check_ready``: the
    code tasks' sandbox, its mode and limits)."""
    if samples_run == 0 and previous is not None and _still_valid(plan, run_dir, previous):
        results = list(previous.results)
    else:
        forecast = read_forecast(run_dir)  # what was forecast, beside what was spent: unit_cost
        results = []
        for pm in plan.models:
            for pt in plan.tasks:
                path = records_path(run_dir, pm.dirname, pt.name, shard)
                facts_of = (facts or {}).get(pm.label) or pm.facts
                result = _unit_result(pm, pt, path, provenance.get(pm.label), facts_of)
                result.cost = unit_cost(pm, pt, path, forecast, plan.roles)
                results.append(result)
    served = dict(serving) if serving else dict(previous.serving if previous else {})
    judged = {pt.name for pt in plan.tasks if "judge" in pt.task.roles}
    judge = plan.roles.get("judge")
    for result in results:  # what a reader must know of each headline: marks.py
        result.marks = marks_of(result, served)
        if judge is not None and result.task in judged:
            evaluated = plan.inputs["models"].get(result.model, {})
            result.marks.append(
                judged_mark(result, judge.label, plan.inputs["roles"]["judge"], evaluated)
            )
    session = Session(
        started=started,
        wall_s=wall_s,
        requests=requests,
        requests_per_s=requests / wall_s if wall_s > 0 else 0.0,
        samples_run=samples_run,
    )
    return Report(
        report_version=REPORT_VERSION,
        records_schema_version=SCHEMA_VERSION,
        sieval_version=sieval_version(),
        run=RunInfo(dir=str(run_dir), identity=plan.identity, inputs=plan.inputs, resumed=resumed),
        denominator=DENOMINATOR,
        results=results,
        timings=timings([*_sessions(previous), session]),
        warnings=warnings,
        preflight=checks if checks is not None else {},
        serving=served,
        ready=dict(ready) if ready else dict(previous.ready if previous else {}),
    )


def _unit_result(
    pm: PlannedModel,
    pt: PlannedTask,
    path: Path,
    server: Server | None,
    model_facts: ModelFacts,
) -> UnitResult:
    """One (model, task) entry of the report, from one streaming pass over its records."""
    tally = tally_unit(path, pt.samples, bool(getattr(pt.task, "keeps_predictions", False)))
    scored, failures = tally.scored, tally.failures
    metrics = pt.task.aggregate(scored) if scored else {}
    finish_reasons, empty_answers = finish_counts(tally.finishes)
    cluster_by = getattr(pt.task, "cluster_by", None)
    censored = censored_figures(scored, pt.task.headline, cluster_by) if scored else None
    if censored is not None and tally.reruns:
        censored.reruns = tally.reruns.summary()
    return UnitResult(
        model=pm.label,
        task=pt.name,
        protocol=protocol(pt.task, model_facts, pt.config),
        headline=pt.task.headline,
        metrics=msgspec.to_builtins(metrics),
        intervals=intervals(
            scored,
            cluster_by,
            getattr(pt.task, "metric_ranges", None),
            getattr(pt.task, "derived", None),
        ),
        samples=SampleCounts(
            total=len(pt.samples),
            scored=len(scored),
            failed=sum(failures.values()),
            missing=tally.missing,
        ),
        failures=dict(sorted(failures.items())),
        failure_examples=[example for _, example in sorted(tally.examples, key=lambda x: x[0])],
        finish_reasons=finish_reasons,
        empty_answers=empty_answers,
        generates=_generates(pt, model_facts),
        censored=UNSET if censored is None else censored,
        provenance=UnitProvenance(
            requested_model=pm.config.model,
            reported_models=sorted(tally.reported),
            dialect=pm.config.dialect_id,
            endpoint=server.endpoint if server else None,
            server_version=server.server_version if server else None,
            served_models=server.served_models if server else [],
            checked_by=server.checked_by if server else "",
            input_kind=model_facts.input_kind,
            token_ids=dict(model_facts.token_ids),
        ),
    )


def unit_cost(
    pm: PlannedModel,
    pt: PlannedTask,
    path: Path,
    forecast: Forecast | None,
    roles: Mapping[str, PlannedModel] | None = None,
) -> UnitCost:
    """The ``cost`` entry of one (model, task): its forecast (None when the run made none), what
    its records say it spent (``cost/spent.py``), and the price both costs are computed at. A
    role's calls (a judge's) are apart, under ``roles``, at the role model's price (absent when
    none was made)."""
    price = pm.config.price
    found = spent_by_role(path)
    spent = found[None]
    cost = UnitCost(
        forecast=_forecast_entry(forecast.unit(pm.label, pt.name) if forecast else None, price),
        actual=CostActual(**msgspec.structs.asdict(spent), cost=spent.cost(price)),
        price=price,
    )
    played = {role: s for role, s in found.items() if role is not None}
    if played:
        cost.roles = {}
        for role, role_spent in played.items():
            role_pm = (roles or {}).get(role)
            role_price = role_pm.config.price if role_pm is not None else None
            unit = forecast.unit(pm.label, pt.name, role) if forecast else None
            cost.roles[role] = RoleCost(
                model=role_pm.label if role_pm is not None else None,
                forecast=_forecast_entry(unit, role_price),
                actual=CostActual(
                    **msgspec.structs.asdict(role_spent), cost=role_spent.cost(role_price)
                ),
                price=role_price,
            )
    return cost


def _forecast_entry(unit: UnitForecast | None, price: Price | None) -> CostForecast | None:
    if unit is None:
        return None
    return CostForecast(
        samples=unit.samples,
        requests=unit.requests,
        prompt_tokens=unit.prompt_tokens,
        exact_requests=unit.exact_requests,
        max_output_tokens=unit.max_output_tokens,
        unbounded_requests=unit.unbounded_requests,
        method=unit.method,
        role=unit.role,
        bound=unit.bound,
        answered_by=unit.answered_by,
        exact=unit.exact,
        cost=unit.cost(price),
    )


def _generates(pt: PlannedTask, facts: ModelFacts) -> bool:
    """Whether the task's answers are generated text, whose finish reasons say something (a
    scoring task's one-token probe always ends by ``length``): its first sample asks for more
    than one token."""
    if not len(pt.samples):
        return False
    requests = [c.request for c in pt.calls(pt.samples[0], facts)]
    return any(
        not isinstance(r.sampling.max_tokens, int) or r.sampling.max_tokens > 1 for r in requests
    )


def _still_valid(plan: Plan, run_dir: Path, previous: Report) -> bool:
    """Whether ``previous`` (a report read from ``run_dir``) reports exactly this plan's units
    from the records as they are: same identity and versions, and no records file newer than it."""
    try:
        written = (run_dir / "report.json").stat().st_mtime
    except OSError:
        return False
    if (
        previous.report_version != REPORT_VERSION
        or previous.records_schema_version != SCHEMA_VERSION
        or previous.run.identity != plan.identity
    ):
        return False
    units = [(pm.label, pt.name) for pm in plan.models for pt in plan.tasks]
    if [(r.model, r.task) for r in previous.results] != units:
        return False
    for pm in plan.models:
        for pt in plan.tasks:
            path = records_path(run_dir, pm.dirname, pt.name)
            if path.exists() and path.stat().st_mtime > written:
                return False
    return True


def _sessions(previous: Report | None) -> list[Session]:
    """The sessions of the report a resumed run had (one written before sessions were kept: its
    totals as one session)."""
    if previous is None:
        return []
    before = previous.timings
    if before.sessions or before == Timings():
        return list(before.sessions)
    return [
        Session(
            started=before.started,
            wall_s=before.wall_s,
            requests=before.requests,
            requests_per_s=before.requests_per_s,
            samples_run=before.samples_run,
        )
    ]


def timings(sessions: Sequence[Session]) -> Timings:
    """Totals over every session of the run, and the sessions themselves."""
    wall = sum(s.wall_s for s in sessions)
    requests = sum(s.requests for s in sessions)
    return Timings(
        started=sessions[0].started if sessions else 0.0,
        wall_s=wall,
        requests=requests,
        requests_per_s=requests / wall if wall > 0 else 0.0,
        samples_run=sum(s.samples_run for s in sessions),
        sessions=list(sessions),
    )


def write_report(run_dir: Path, report: Report) -> Path:
    path = run_dir / "report.json"
    write_atomic(path, msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
    return path


_decoder = msgspec.json.Decoder(Report)


def load_report(run_dir: Path) -> Report:
    """Read ``RUN_DIR/report.json`` (``ConfigError`` when absent, unreadable or not shaped like
    a report: a reader never meets a missing field)."""
    path = run_directory(run_dir) / "report.json"
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ConfigError(
            f"{str(run_dir)!r} has no report.json; is it a run directory? (a run that was "
            "interrupted writes its report when resumed to the end)",
            path="report",
        ) from exc
    except OSError as exc:
        raise storage_error(exc, path, doing="read") from None
    try:
        return _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise ConfigError(
            f"{path}: not a sieval report ({exc}); it was edited or damaged: write it again "
            f"with sieval eval --resume {run_dir} (a sharded run: sieval finalize {run_dir})",
            path="report",
        ) from exc
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})", path="report") from exc
