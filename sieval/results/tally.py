"""What a report counts of one (model, task) unit's records, in one streaming pass.

``tally_unit`` reads each planned sample's latest record (``records.latest_at``) and keeps a few
bytes per sample, never a record: the scored samples' metrics as one array per name in the task's
sample order (``Scored``, what ``task.aggregate`` and ``intervals`` read), the failures by error
class with the first ``EXAMPLES`` of them, each answer's finish reason (``finish_counts``), the
model ids the server reported, and the re-runs of censored samples (``rerun.py``).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import msgspec
from msgspec import UNSET

from ..plan.samples import Samples, as_samples
from ..scoring.censored import bounds as censored_bounds
from ..scoring.uncertainty import (
    Bounds,
    Derived,
    Estimate,
    derived_estimate,
    json_number,
    mean_estimate,
)
from ..store.records import latest_at
from ..tasks.base import Sample, SampleResult
from ..tasks.families.checked import item_of
from .document import Censored, FailureExample, Interval, RerunCounts

__all__ = ["EXAMPLES", "Reruns", "Scored", "Tally", "censored_figures", "finish_counts",
           "intervals", "tally_unit"]  # fmt: skip

EXAMPLES = 3
"""Failures kept as examples per unit: the first ones in the task's order."""


class Tally:
    """What the report counts of one unit's records."""

    def __init__(self, samples: Samples, predictions: bool = False) -> None:
        self.scored = Scored(samples, predictions)
        self.failures: Counter[str] = Counter()
        self.finishes: Counter[str] = Counter()
        self.examples: list[tuple[int, FailureExample]] = []
        self.reported: set[str] = set()
        self.missing = 0
        self.reruns = Reruns()
        """The latest records that are re-runs of censored samples (``rerun.py``)."""


class Scored(Sequence[tuple[Sample, SampleResult]]):
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


@dataclass
class Reruns:
    """What the report says of a unit's re-runs of censored samples (``censored.reruns``;
    ``runner/rerun.py``, ``Record.rerun``)."""

    samples: int = 0
    still_censored: int = 0
    failed: int = 0
    budgets: set[int] = field(default_factory=set)
    factors: set[float] = field(default_factory=set)

    def add(self, rerun: Mapping[str, Any], status: str, metrics: Mapping[str, float]) -> None:
        self.samples += 1
        self.failed += status != "ok"
        self.still_censored += status == "ok" and metrics.get("censored") == 1.0
        budgets = (rerun.get("max_tokens") or {}).values()
        self.budgets.update(b for b in budgets if isinstance(b, int))
        if isinstance(rerun.get("factor"), int | float):
            self.factors.add(float(rerun["factor"]))

    def __bool__(self) -> bool:
        return self.samples > 0

    def summary(self) -> RerunCounts:
        return RerunCounts(
            samples=self.samples,
            answered=self.samples - self.still_censored - self.failed,
            still_censored=self.still_censored,
            failed=self.failed,
            max_tokens=sorted(self.budgets),
            factors=sorted(self.factors),
        )


def tally_unit(path: Path, samples: Samples, predictions: bool = False) -> Tally:
    """One streaming pass over the unit's latest records (memory: a few bytes a sample, never a
    record). Records of samples the plan does not hold are ignored; metrics are listed in the
    task's sample order, so a resumed run aggregates exactly as an uninterrupted one."""
    tally = Tally(samples, predictions)
    seen = 0
    for at, record in latest_at(path, samples.position, len(samples)):
        seen += 1
        if record.reported_model:
            tally.reported.add(record.reported_model)
        for finish in record.finishes():
            tally.finishes.update(finish)
        if record.rerun is not None:
            tally.reruns.add(record.rerun, record.status, record.metrics)
        if record.status == "ok":
            tally.scored.put(at, record.metrics, record.prediction)
            continue
        error = record.error or {"class": "Unknown", "message": ""}
        tally.failures[str(error.get("class"))] += 1
        example = msgspec.convert({"sample_id": record.sample_id, **error}, FailureExample)
        tally.examples.append((at, example))
        if len(tally.examples) > EXAMPLES:  # keep the first failures in the task's order
            tally.examples.remove(max(tally.examples, key=lambda x: x[0]))
    tally.missing = len(samples) - seen
    tally.scored.seal()
    return tally


def intervals(
    scored: Sequence[tuple[Sample, SampleResult]],
    cluster_by: str | None = None,
    ranges: Mapping[str, Bounds] | None = None,
    derived: Mapping[str, Derived] | None = None,
) -> dict[str, Interval]:
    """Per metric every scored sample has: mean, standard error, 95% interval, n, the estimator
    (clustered by ``Sample.group`` when ``cluster_by == "group"``, by the row a repeat is of when
    ``cluster_by == "item"`` and the samples are repeats) and, when clustered, the
    error as if the samples were independent (to see what clustering changed). ``ranges`` holds
    the range of each metric that has one (the task's ``metric_ranges``: a probability's [0, 1]),
    which picks its interval (``uncertainty.mean_estimate``); ``derived`` the figures made of
    sums (the task's ``derived``: a perplexity), each with its interval from
    ``uncertainty.derived_estimate``, under the figure's name (replacing a per-sample metric's
    mean of that name: IFEval's instruction-level accuracy is weighted by instructions)."""
    if not scored:
        return {}
    if not isinstance(scored, Scored):  # a list a caller built: the same view of it
        view = Scored(as_samples([s for s, _ in scored]))
        for at, (_, result) in enumerate(scored):
            view.put(at, result.metrics)
        view.seal()
        scored = view
    names = scored.common()
    ranges = ranges or {}
    clusters = _clusters(scored, cluster_by)
    out: dict[str, Interval] = {}
    for name in names:
        values = scored.values(name)
        bounds = ranges.get(name)
        out[name] = _entry(
            mean_estimate(values, clusters, bounds=bounds),
            None if clusters is None else mean_estimate(values, bounds=bounds),
        )
    for name, figure in (derived or {}).items():
        needed = [figure.of] + ([figure.per] if figure.per is not None else [])
        if all(metric in names for metric in needed):
            columns = {metric: scored.values(metric) for metric in needed}
            out[name] = _entry(
                derived_estimate(figure, columns, clusters),
                None if clusters is None else derived_estimate(figure, columns),
            )
    return out


def _clusters(scored: Scored, cluster_by: str | None) -> list[str] | None:
    """What the samples' errors cluster by: the group, the row of repeats (when there are
    repeats), or None (independent)."""
    if cluster_by == "group":
        return scored.groups()
    if cluster_by == "item":  # repeats of one row are not independent draws
        items = scored.items()
        return items if any(i != s for i, s in zip(items, scored.ids(), strict=True)) else None
    return None


def _entry(estimate: Estimate, iid: Estimate | None) -> Interval:
    return Interval(
        value=estimate.value,
        se=json_number(estimate.se),
        ci=[json_number(estimate.ci[0]), json_number(estimate.ci[1])],
        n=estimate.n,
        estimator=estimate.estimator,
        effective_n=UNSET if estimate.effective_n is None else estimate.effective_n,
        clusters=UNSET if iid is None else estimate.clusters,
        se_iid=UNSET if iid is None else json_number(iid.se),
    )


def censored_figures(
    scored: Scored, headline: str, cluster_by: str | None = None
) -> Censored | None:
    """The headline beside its censored samples (``scoring/censored.py``): how many were
    censored, and the headline with them counted wrong and with them left out, each with its
    interval (clustered as the headline's); None when the samples hold no ``censored`` flag (a
    task that does not generate, or records written before it)."""
    names = scored.common()
    if "censored" not in names or headline not in names:
        return None
    flags = scored.values("censored")
    count = int(sum(flags))
    as_wrong, left_out = censored_bounds(
        scored.values(headline), flags, _clusters(scored, cluster_by)
    )
    return Censored(
        count=count,
        of=len(flags),
        share=count / len(flags),
        as_wrong=_entry(as_wrong, None),
        left_out=_entry(left_out, None) if left_out is not None else None,
    )


def finish_counts(finishes: Counter[str]) -> tuple[dict[str, int], int]:
    """How the answered choices ended, in the servers' words (reported, never scored), and how
    many were empty."""
    reasons: Counter[str] = Counter()
    empty = 0
    for reason, count in finishes.items():
        bare, marked, _ = reason.partition(":empty")
        reasons[bare or "unreported"] += count
        empty += count if marked else 0
    return dict(sorted(reasons.items())), empty
