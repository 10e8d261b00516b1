"""``report.json``: per (model, task) metrics, sample and failure counts, identity, provenance.

The report is always rebuilt from the records files, so an interrupted-then-resumed run and an
uninterrupted one report the same figures. Metrics come from ``task.aggregate`` over the scored
samples only, in the task's sample order; failed samples are counted beside them (``samples``,
``failures``) and never enter a metric as right or wrong.

Every per-sample metric has its uncertainty in ``intervals``: the standard error and a 95%
interval (``scoring/uncertainty.py``). Samples are independent unless the task clusters them
(``Task.cluster_by``, MMLU by subject), then the error is cluster-robust; ``estimator`` says which.
Version 2 added ``intervals``.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec

from ..errors import ConfigError
from ..scoring.uncertainty import json_number, mean_estimate
from ..tasks.base import Sample, SampleResult
from ..tasks.families.checked import item_of
from .files import storage_error, write_atomic
from .identity import sieval_version
from .plan import protocol
from .records import SCHEMA_VERSION, latest_at, records_path
from .rundir import run_directory
from .samples import Samples, as_samples

if TYPE_CHECKING:
    from ..tasks.base import ModelFacts
    from .plan import Plan, PlannedModel, PlannedTask
    from .preflight import Provenance

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
    "ends by length)"
)

_EXAMPLES = 3

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
                "max_tokens (--task NAME:max_tokens=N) so thinking and answer fit"
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
) -> dict[str, Any]:
    """The report of a run; ``previous`` is the report a resumed run had, whose timings are kept:
    a resume adds a session, it never erases the ones before it. A resume that ran nothing keeps
    the previous figures when no record changed since they were written (``_still_valid``).
    ``shard`` reports one shard's records (``records_path``) over the plan's samples.
    ``serving``: what the serving checks found, per model (``serving.across_runs.report_section``);
    a session that ran none keeps the previous report's."""
    if samples_run == 0 and previous is not None and _still_valid(plan, run_dir, previous):
        results = list(previous["results"])
    else:
        results = [
            _unit_result(
                pm,
                pt,
                records_path(run_dir, pm.dirname, pt.name, shard),
                provenance.get(pm.label),
                (facts or {}).get(pm.label) or pm.facts,
            )
            for pm in plan.models
            for pt in plan.tasks
        ]
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
    }


def _unit_result(
    pm: PlannedModel,
    pt: PlannedTask,
    path: Path,
    prov: Provenance | None,
    model_facts: ModelFacts,
) -> dict[str, Any]:
    """One (model, task) entry of the report, from one streaming pass over its records."""
    tally = _tally(path, pt.samples, bool(getattr(pt.task, "keeps_predictions", False)))
    scored, failures = tally.scored, tally.failures
    metrics = pt.task.aggregate(scored) if scored else {}
    return {
        "model": pm.label,
        "task": pt.name,
        "protocol": protocol(pt.task, model_facts),
        "headline": pt.task.headline,
        "metrics": msgspec.to_builtins(metrics),
        "intervals": intervals(scored, getattr(pt.task, "cluster_by", None)),
        "samples": {
            "total": len(pt.samples),
            "scored": len(scored),
            "failed": sum(failures.values()),
            "missing": tally.missing,
        },
        "failures": dict(sorted(failures.items())),
        "failure_examples": [example for _, example in sorted(tally.examples, key=lambda x: x[0])],
        **_finish_counts(tally.finishes),
        "generates": _generates(pt, model_facts),
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


class _Tally:
    """What the report counts of one unit's records."""

    def __init__(self, samples: Samples, predictions: bool = False) -> None:
        self.scored = _Scored(samples, predictions)
        self.failures: Counter[str] = Counter()
        self.finishes: Counter[str] = Counter()
        self.examples: list[tuple[int, dict[str, Any]]] = []
        self.reported: set[str] = set()
        self.missing = 0


class _Scored(Sequence[tuple[Sample, SampleResult]]):
    """The scored samples in the task's order, each pair built when it is read: a sample holding
    its id and group, a result holding its metrics. Metrics are kept as one array of floats per
    name over the task's positions (8 bytes a sample and metric), not as a dict per sample."""

    def __init__(self, samples: Samples, predictions: bool = False) -> None:
        self.samples = samples
        self.predictions: dict[int, Any] | None = {} if predictions else None
        """Each scored sample's prediction, for a task with ``keeps_predictions`` (votes)."""
        self.columns: dict[str, array[float]] = {}
        self._names: list[tuple[str, ...]] = []
        self._name_codes: dict[tuple[str, ...], int] = {}
        self._names_at = array("I", [0]) * len(samples)
        self._ok = bytearray(len(samples))
        self._positions = array("I")

    def put(self, at: int, metrics: dict[str, float], prediction: Any = None) -> None:
        if self.predictions is not None:
            self.predictions[at] = prediction
        names = tuple(metrics)
        code = self._name_codes.setdefault(names, len(self._name_codes))
        if code == len(self._names):
            self._names.append(names)
        self._names_at[at] = code
        for name, value in metrics.items():
            column = self.columns.get(name)
            if column is None:
                column = self.columns[name] = array("d", [0.0]) * len(self.samples)
            column[at] = value
        self._ok[at] = 1

    def seal(self) -> None:
        """Fix the order once every record is in: the task's sample order."""
        self._positions = array("I", (i for i, ok in enumerate(self._ok) if ok))

    def metrics_at(self, at: int) -> dict[str, float]:
        return {name: self.columns[name][at] for name in self._names[self._names_at[at]]}

    def common(self) -> list[str]:
        """The metric names every scored sample has, in the first one's order."""
        if not self._positions:
            return []
        used = {self._names_at[at] for at in self._positions}
        first = self._names[self._names_at[self._positions[0]]]
        return [n for n in first if all(n in self._names[code] for code in used)]

    def values(self, name: str) -> array[float]:
        column = self.columns[name]
        return array("d", (column[at] for at in self._positions))

    def groups(self) -> list[str]:
        return [self.samples.group_at(at) or "" for at in self._positions]

    def ids(self) -> list[str]:
        return [self.samples.id_at(at) for at in self._positions]

    def items(self) -> list[str]:
        """The row each sample is a repeat of (``tasks/families/checked.py``'s ``<id>#r<i>``)."""
        return [item_of(i) for i in self.ids()]

    def _pair(self, at: int) -> tuple[Sample, SampleResult]:
        sample = Sample(
            id=self.samples.id_at(at), data={}, gold=None, group=self.samples.group_at(at)
        )
        prediction = self.predictions.get(at) if self.predictions is not None else None
        return sample, SampleResult(prediction=prediction, gold=None, metrics=self.metrics_at(at))

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> tuple[Sample, SampleResult]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[Sample, SampleResult]]: ...

    def __getitem__(
        self, index: int | slice
    ) -> tuple[Sample, SampleResult] | list[tuple[Sample, SampleResult]]:
        if isinstance(index, slice):
            return [self._pair(at) for at in self._positions[index]]
        return self._pair(self._positions[index])

    def __iter__(self) -> Iterator[tuple[Sample, SampleResult]]:
        return (self._pair(at) for at in self._positions)


def _tally(path: Path, samples: Samples, predictions: bool = False) -> _Tally:
    """One streaming pass over the unit's latest records (memory: a few bytes a sample, never a
    record). Records of samples the plan does not hold are ignored; metrics are listed in the
    task's sample order, so a resumed run aggregates exactly as an uninterrupted one."""
    tally = _Tally(samples, predictions)
    seen = 0
    for at, record in latest_at(path, samples.position, len(samples)):
        seen += 1
        if record.reported_model:
            tally.reported.add(record.reported_model)
        for finish in record.finishes():
            tally.finishes.update(finish)
        if record.status == "ok":
            tally.scored.put(at, record.metrics, record.prediction)
            continue
        error = record.error or {"class": "Unknown", "message": ""}
        tally.failures[str(error.get("class"))] += 1
        tally.examples.append((at, {"sample_id": record.sample_id, **error}))
        if len(tally.examples) > _EXAMPLES:  # keep the first failures in the task's order
            tally.examples.remove(max(tally.examples, key=lambda x: x[0]))
    tally.missing = len(samples) - seen
    tally.scored.seal()
    return tally


def intervals(
    scored: Sequence[tuple[Sample, SampleResult]], cluster_by: str | None = None
) -> dict[str, dict[str, Any]]:
    """Per metric every scored sample has: mean, standard error, 95% interval, n, the estimator
    (clustered by ``Sample.group`` when ``cluster_by == "group"``, by the row a repeat is of when
    ``cluster_by == "item"`` and the samples are repeats) and, when clustered, the
    error as if the samples were independent (to see what clustering changed)."""
    if not scored:
        return {}
    if not isinstance(scored, _Scored):  # a list a caller built: the same view of it
        view = _Scored(as_samples([s for s, _ in scored]))
        for at, (_, result) in enumerate(scored):
            view.put(at, result.metrics)
        view.seal()
        scored = view
    names = scored.common()
    clusters = scored.groups() if cluster_by == "group" else None
    if cluster_by == "item":  # repeats of one row are not independent draws
        items = scored.items()
        clusters = items if any(i != s for i, s in zip(items, scored.ids(), strict=True)) else None
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        values = scored.values(name)
        estimate = mean_estimate(values, clusters)
        entry = {
            "value": estimate.value,
            "se": json_number(estimate.se),
            "ci": [json_number(estimate.ci[0]), json_number(estimate.ci[1])],
            "n": estimate.n,
            "estimator": estimate.estimator,
        }
        if clusters is not None:
            entry["clusters"] = estimate.clusters
            entry["se_iid"] = json_number(mean_estimate(values).se)
        out[name] = entry
    return out


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


def _finish_counts(finishes: Counter[str]) -> dict[str, Any]:
    """How the answered choices ended, in the servers' words (reported, never scored), and how
    many were empty."""
    reasons: Counter[str] = Counter()
    empty = 0
    for reason, count in finishes.items():
        bare, marked, _ = reason.partition(":empty")
        reasons[bare or "unreported"] += count
        empty += count if marked else 0
    return {"finish_reasons": dict(sorted(reasons.items())), "empty_answers": empty}
