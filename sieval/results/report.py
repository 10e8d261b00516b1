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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..cost.forecast import read_forecast
from ..cost.spent import unit_cost
from ..errors import ConfigError
from ..plan.plan import protocol
from ..store.files import storage_error, write_atomic
from ..store.identity import sieval_version
from ..store.records import SCHEMA_VERSION, records_path
from ..store.rundir import run_directory
from .tally import censored_figures, finish_counts, intervals, tally_unit

if TYPE_CHECKING:
    from ..plan.plan import Plan, PlannedModel, PlannedTask
    from ..runner.preflight import Provenance
    from ..tasks.base import ModelFacts

__all__ = [
    "DENOMINATOR",
    "REPORT_VERSION",
    "TRUNCATION_WARNING",
    "build_report",
    "intervals",
    "load_report",
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


def truncation_warnings(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One warning per (model, task) whose ``truncated_rate`` passes ``TRUNCATION_WARNING``."""
    out = []
    for result in results:
        rate = (result.get("metrics") or {}).get("truncated_rate")
        if isinstance(rate, float) and rate > TRUNCATION_WARNING:
            out.append(
                f"{result['model']}/{result['task']}: {rate:.0%} of the answers were cut by the "
                f"token budget (truncated_rate > {TRUNCATION_WARNING:.0%}); raise the task's "
                "max_tokens (--task NAME:max_tokens=N) so thinking and answer fit, or re-run the "
                "censored ones at a larger budget (sieval eval --resume RUN --rerun-censored 4)"
            )
    return out


def build_report(
    plan: Plan,
    run_dir: Path,
    *,
    provenance: dict[str, Provenance],
    started: float,
    wall_s: float,
    requests: int,
    samples_run: int,
    resumed: bool,
    warnings: list[str],
    checks: dict[str, list[dict[str, Any]]] | None = None,
    previous: dict[str, Any] | None = None,
    facts: Mapping[str, ModelFacts] | None = None,
    shard: int | None = None,
    serving: Mapping[str, Any] | None = None,
    ready: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of a run; ``previous`` is the report a resumed run had, whose timings are kept:
    a resume adds a session, it never erases the ones before it. A resume that ran nothing keeps
    the previous figures when no record changed since they were written (``_still_valid``).
    ``shard`` reports one shard's records (``records_path``) over the plan's samples.
    ``serving``: what the serving checks found, per model (``serving.across_runs.report_section``);
    a session that ran none keeps the previous report's. ``ready``: what the tasks' own checks
    found, per task (``Task.check_ready``: the code tasks' sandbox, its mode and limits)."""
    if samples_run == 0 and previous is not None and _still_valid(plan, run_dir, previous):
        results = list(previous["results"])
    else:
        forecast = read_forecast(run_dir)  # what was forecast, beside what was spent: costs.py
        results = []
        for pm in plan.models:
            for pt in plan.tasks:
                path = records_path(run_dir, pm.dirname, pt.name, shard)
                facts_of = (facts or {}).get(pm.label) or pm.facts
                result = _unit_result(pm, pt, path, provenance.get(pm.label), facts_of)
                result["cost"] = unit_cost(pm, pt, path, forecast)
                results.append(result)
    return {
        "report_version": REPORT_VERSION,
        "records_schema_version": SCHEMA_VERSION,
        "sieval_version": sieval_version(),
        "run": {
            "dir": str(run_dir),
            "identity": plan.identity,
            "inputs": plan.inputs,
            "resumed": resumed,
        },
        "denominator": DENOMINATOR,
        "results": results,
        "timings": _timings(
            {
                "started": started,
                "wall_s": wall_s,
                "requests": requests,
                "requests_per_s": requests / wall_s if wall_s > 0 else 0.0,
                "samples_run": samples_run,
            },
            (previous or {}).get("timings"),
        ),
        "warnings": warnings,
        "preflight": checks if checks is not None else {},
        "serving": dict(serving) if serving else dict((previous or {}).get("serving") or {}),
        "ready": dict(ready) if ready else dict((previous or {}).get("ready") or {}),
    }


def _unit_result(
    pm: PlannedModel,
    pt: PlannedTask,
    path: Path,
    prov: Provenance | None,
    model_facts: ModelFacts,
) -> dict[str, Any]:
    """One (model, task) entry of the report, from one streaming pass over its records."""
    tally = tally_unit(path, pt.samples, bool(getattr(pt.task, "keeps_predictions", False)))
    scored, failures = tally.scored, tally.failures
    metrics = pt.task.aggregate(scored) if scored else {}
    cluster_by = getattr(pt.task, "cluster_by", None)
    censored = censored_figures(scored, pt.task.headline, cluster_by) if scored else None
    if censored is not None and tally.reruns:
        censored["reruns"] = tally.reruns.summary()
    return {
        "model": pm.label,
        "task": pt.name,
        "protocol": protocol(pt.task, model_facts),
        "headline": pt.task.headline,
        "metrics": msgspec.to_builtins(metrics),
        "intervals": intervals(
            scored,
            getattr(pt.task, "cluster_by", None),
            getattr(pt.task, "metric_ranges", None),
            getattr(pt.task, "derived", None),
        ),
        "samples": {
            "total": len(pt.samples),
            "scored": len(scored),
            "failed": sum(failures.values()),
            "missing": tally.missing,
        },
        "failures": dict(sorted(failures.items())),
        "failure_examples": [example for _, example in sorted(tally.examples, key=lambda x: x[0])],
        **finish_counts(tally.finishes),
        "generates": _generates(pt, model_facts),
        **({"censored": censored} if censored is not None else {}),
        "provenance": {
            "requested_model": pm.config.model,
            "reported_models": sorted(tally.reported),
            "dialect": pm.config.dialect_id,
            "endpoint": prov.endpoint if prov else None,
            "server_version": prov.server_version if prov else None,
            "served_models": prov.served_models if prov else [],
            "checked_by": prov.checked_by if prov else "",
            "input_kind": model_facts.input_kind,
            "token_ids": dict(model_facts.token_ids),
        },
    }


def _generates(pt: PlannedTask, facts: ModelFacts) -> bool:
    """Whether the task's answers are generated text, whose finish reasons say something (a
    scoring task's one-token probe always ends by ``length``): its first sample asks for more
    than one token."""
    if not len(pt.samples):
        return False
    requests = pt.task.requests(pt.samples[0], pt.config, facts).values()
    return any(
        not isinstance(r.sampling.max_tokens, int) or r.sampling.max_tokens > 1 for r in requests
    )


def _still_valid(plan: Plan, run_dir: Path, previous: dict[str, Any]) -> bool:
    """Whether ``previous`` (a report read from ``run_dir``) reports exactly this plan's units
    from the records as they are: same identity and versions, and no records file newer than it."""
    try:
        written = (run_dir / "report.json").stat().st_mtime
    except OSError:
        return False
    if (
        previous.get("report_version") != REPORT_VERSION
        or previous.get("records_schema_version") != SCHEMA_VERSION
        or previous.get("run", {}).get("identity") != plan.identity
    ):
        return False
    units = [(pm.label, pt.name) for pm in plan.models for pt in plan.tasks]
    if [(r.get("model"), r.get("task")) for r in previous.get("results", [])] != units:
        return False
    for pm in plan.models:
        for pt in plan.tasks:
            path = records_path(run_dir, pm.dirname, pt.name)
            if path.exists() and path.stat().st_mtime > written:
                return False
    return True


def _timings(session: dict[str, Any], before: Any) -> dict[str, Any]:
    """Totals over every session of the run, and the sessions themselves."""
    sessions: list[dict[str, Any]] = []
    if isinstance(before, dict):
        old = before.get("sessions")
        sessions = list(old) if isinstance(old, list) else [{k: v for k, v in before.items()}]
    sessions.append(session)
    wall = sum(float(x.get("wall_s", 0.0)) for x in sessions)
    requests = sum(int(x.get("requests", 0)) for x in sessions)
    return {
        "started": sessions[0].get("started", session["started"]),
        "wall_s": wall,
        "requests": requests,
        "requests_per_s": requests / wall if wall > 0 else 0.0,
        "samples_run": sum(int(x.get("samples_run", 0)) for x in sessions),
        "sessions": sessions,
    }


def write_report(run_dir: Path, report: dict[str, Any]) -> Path:
    path = run_dir / "report.json"
    write_atomic(path, msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
    return path


class _Samples(msgspec.Struct):
    total: int
    scored: int
    failed: int
    missing: int


class _Provenance(msgspec.Struct):
    dialect: str
    requested_model: str
    reported_models: list[str]


class _Result(msgspec.Struct):
    model: str
    task: str
    headline: str
    samples: _Samples
    provenance: _Provenance
    metrics: dict[str, Any] = {}
    failures: dict[str, int] = {}
    intervals: dict[str, Any] = {}
    failure_examples: list[dict[str, Any]] = []


class _Run(msgspec.Struct):
    identity: str


class _Shape(msgspec.Struct):
    """What the readers of ``report.json`` index (``sieval report``, ``samples``, the view)."""

    run: _Run
    results: list[_Result]


def load_report(run_dir: Path) -> dict[str, Any]:
    """Read ``RUN_DIR/report.json`` (``ConfigError`` when absent, unreadable or not shaped like
    a report: a reader never meets a missing field)."""
    path = run_directory(run_dir) / "report.json"
    try:
        data = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError as exc:
        raise ConfigError(
            f"{str(run_dir)!r} has no report.json; is it a run directory? (a run that was "
            "interrupted writes its report when resumed to the end)",
            path="report",
        ) from exc
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})", path="report") from exc
    except OSError as exc:
        raise storage_error(exc, path, doing="read") from None
    try:
        msgspec.convert(data, _Shape)
    except msgspec.ValidationError as exc:
        raise ConfigError(
            f"{path}: not a sieval report ({exc}); it was edited or damaged: write it again "
            f"with sieval eval --resume {run_dir} (a sharded run: sieval finalize {run_dir})",
            path="report",
        ) from exc
    assert isinstance(data, dict)
    return data
