"""Score versus context length (RULER): each task and the average at each length, with 95%
intervals, and the effective length.

A task reports its score at a length as the metric ``len_<tokens>`` (``tasks/ruler.py``). The
figures are in percent, as RULER prints them. The average at a length is the mean of the tasks
measured there; each side of its interval combines the tasks' half-widths on that side as
independent errors (``sqrt(sum w^2) / k``). The effective length is the longest length up to which
every average is above the threshold (RULER's: 85.6, Llama-2-7B's average at 4k); None when the
shortest is not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .document import Report, UnitResult

__all__ = ["RULER_THRESHOLD", "Cell", "LengthTable", "effective_length", "length_tables"]

RULER_THRESHOLD = 85.6
"""RULER's threshold for the effective length: Llama-2-7B's average score at 4k, in percent."""
_LENGTH = re.compile(r"^len_(\d+)$")


@dataclass(frozen=True)
class Cell:
    value: float
    """Percent."""
    low: float | None = None
    high: float | None = None
    se: float | None = None


@dataclass
class LengthTable:
    """One model's score-versus-length table."""

    model: str
    lengths: list[int]
    rows: dict[str, dict[int, Cell]] = field(default_factory=dict)
    """By task, by length."""
    average: dict[int, Cell] = field(default_factory=dict)
    threshold: float = RULER_THRESHOLD
    effective: int | None = None


def _cells(result: UnitResult) -> dict[int, Cell]:
    out = {}
    for name, value in result.metrics.items():
        found = _LENGTH.match(name)
        if found is None or not isinstance(value, int | float):
            continue
        spread = result.intervals.get(name)
        low = high = se = None
        if spread is not None:
            if len(spread.ci) == 2 and None not in spread.ci:
                low, high = (100 * float(x) for x in spread.ci)  # type: ignore[arg-type]
            se = None if spread.se is None else 100 * spread.se
        out[int(found.group(1))] = Cell(100 * float(value), low, high, se)
    return out


def _average(cells: Sequence[Cell]) -> Cell:
    """The mean of the tasks' scores; each side of its interval the tasks' half-widths on that
    side combined as independent errors (``sqrt(sum w^2) / k``), so a Wilson interval's
    asymmetry (a score of 0 or 100) carries over."""
    k = len(cells)
    mean = sum(c.value for c in cells) / k
    if any(c.low is None or c.high is None for c in cells):
        return Cell(mean)
    below = math.sqrt(sum((c.value - (c.low or 0.0)) ** 2 for c in cells)) / k
    above = math.sqrt(sum(((c.high or 0.0) - c.value) ** 2 for c in cells)) / k
    errors = [c.se for c in cells if c.se is not None]
    se = math.sqrt(sum(e**2 for e in errors)) / k if len(errors) == k else None
    return Cell(mean, max(0.0, mean - below), min(100.0, mean + above), se)


def effective_length(average: Mapping[int, Cell], threshold: float) -> int | None:
    """The longest length up to which every average is above ``threshold`` (percent)."""
    found = None
    for length in sorted(average):
        if average[length].value <= threshold:
            break
        found = length
    return found


def length_tables(report: Report, threshold: float = RULER_THRESHOLD) -> list[LengthTable]:
    """A table per model that has any task scored by length; none otherwise."""
    tables: dict[str, LengthTable] = {}
    for result in report.results:
        cells = _cells(result)
        if not cells:
            continue
        table = tables.setdefault(result.model, LengthTable(result.model, [], threshold=threshold))
        table.rows[result.task] = cells
    for table in tables.values():
        table.lengths = sorted({n for row in table.rows.values() for n in row})
        for length in table.lengths:
            there = [row[length] for row in table.rows.values() if length in row]
            table.average[length] = _average(there)
        table.effective = effective_length(table.average, threshold)
    return list(tables.values())
