"""Corpus-level metrics of a task file: lm-eval's ``aggregation`` other than a mean.

A metric of ``metric_list`` whose ``aggregation`` is not ``mean`` (``f1``, ``bleu``, ``mcc``,
or a ``!function`` of the task's own) is computed over every sample's *item* (what lm-eval's
``process_results`` gives for that metric: ``(gold, prediction)`` for ``f1``, a number for
``acc``), not averaged. Each sample keeps its items in its prediction (``{"items": {...}}``,
recorded), and the task's figures apply the aggregation to the items in sample order, as
lm-eval's ``aggregate`` does. Such a figure has no per-sample interval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._shared import means
from .base import Sample, SampleResult

__all__ = ["Aggregation", "aggregate", "items_prediction"]

Aggregation = Callable[[list[Any]], Any]


def items_prediction(answer: Any, items: Mapping[str, Any]) -> Any:
    """The prediction a sample records: its answer and its items."""
    return {"answer": answer, "items": dict(items)} if items else answer


def aggregate(
    results: Iterable[tuple[Sample, SampleResult]], custom: Mapping[str, Aggregation]
) -> dict[str, Any]:
    """Means of the numeric metrics, and each custom aggregation over its items."""
    kept = list(results)
    out = means(kept)
    for name, fn in custom.items():
        items = [r.prediction["items"][name] for _, r in kept if isinstance(r.prediction, dict)]
        value = fn(items) if items else None
        out[name] = float(value) if isinstance(value, int | float) else value
    return out
