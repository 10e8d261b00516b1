"""How every command shows a figure, an interval or a missing value, and where text wraps.

One place, so a table of ``sieval report``, ``sieval compare`` and ``sieval samples`` print the
same interval the same way (``0.028–0.301``), a large figure by its magnitude (a perplexity of
``3.3572e+11``, not twelve digits and four decimals: ``magnitude``), a missing value is ``-``
(never a Python ``None``),
and prose (errors, stage lines, hints) wraps at word boundaries on a terminal, as the tables do,
while a pipe or a log gets each message on one line (greppable, and copied whole).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from msgspec import UnsetType
from rich.console import Console

if TYPE_CHECKING:
    from ..results.document import Censored

__all__ = ["MISSING", "censored_line", "console", "figure", "interval", "magnitude", "shown"]

MISSING = "-"
LARGE = 1e6
"""From this magnitude on, a figure is printed in scientific notation."""


def console(*, stderr: bool = False) -> Console:
    """A console that wraps prose at word boundaries on a terminal and not in a pipe, and never
    turns ``:name:`` into an emoji (model text is printed as written: ``inert``)."""
    out = Console(stderr=stderr, highlight=False, emoji=False)
    out.soft_wrap = not out.is_terminal
    return out


def magnitude(value: float, digits: int = 4, scale: float | None = None) -> str:
    """A finite float by its magnitude (or ``scale``'s, so that the two ends of an interval read
    alike): ``digits`` decimals below 1,000 (``0.1750``, ``-45.8275``); one decimal below a
    million (``87722.0``); beyond, ``digits`` significant decimals in scientific notation
    (``3.3572e+11``): a perplexity of 335,717,354,314 is not worth twelve digits and four
    decimals."""
    size = abs(value if scale is None else scale)
    if not math.isfinite(value):
        return str(value)
    if size >= LARGE:
        return f"{value:.{digits}e}"
    if size >= 1000:
        return f"{value:.1f}"
    return f"{value:.{digits}f}"


def figure(value: Any, digits: int = 4) -> str:
    """A metric as the tables print it: ``0.1750``, a large one by its magnitude
    (``magnitude``); an int as is; none or NaN as ``-``."""
    if isinstance(value, bool) or value is None:
        return MISSING if value is None else str(value)
    if isinstance(value, float):
        return MISSING if math.isnan(value) else magnitude(value, digits)
    return str(value)


def interval(ci: Sequence[Any] | None, digits: int = 3) -> str:
    """``[lo, hi]`` as ``0.028–0.301`` (a difference: ``-0.153–0.219``; a perplexity's by its
    magnitude, ``1.166e+11–9.664e+11``); ``-`` when unknown."""
    if not ci or len(ci) != 2 or any(x is None for x in ci):
        return MISSING
    scale = max(abs(ci[0]), abs(ci[1]))
    return f"{magnitude(ci[0], digits, scale)}–{magnitude(ci[1], digits, scale)}"


def shown(value: Any) -> str:
    """Any value for the screen: ``-`` for none, text as is."""
    return MISSING if value is None else str(value)


def censored_line(censored: Censored | UnsetType | None, headline: str) -> str | None:
    """A generation task's censored answers (``scoring/censored.py``) in one line: how many, the
    headline with them counted wrong and left out, and their re-runs; None without a count."""
    if censored is None or isinstance(censored, UnsetType):  # not counted
        return None
    wrong = censored.as_wrong.value
    out = censored.left_out.value if censored.left_out is not None else None
    line = (
        f"{censored.count}/{censored.of} ({censored.share:.0%}); {headline} "
        f"{figure(wrong)} as wrong, {figure(out)} left out"
    )
    reruns = censored.reruns
    if not isinstance(reruns, UnsetType) and reruns.samples:
        budgets = "/".join(str(b) for b in reruns.max_tokens) or MISSING
        line += (
            f"; {reruns.samples} re-run at max_tokens {budgets}: {reruns.answered} "
            f"answered, {reruns.still_censored} still censored"
            + (f", {reruns.failed} failed" if reruns.failed else "")
        )
    return line
