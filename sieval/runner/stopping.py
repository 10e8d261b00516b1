"""When a run stops early: ``--max-failures``, parsed here and nowhere else.

Three policies:

* ``auto`` (the command line's default): stop when the first ``FIRST`` samples of a (model,
  task) all failed for one reason (the same error class at the same field): a server that is
  down, a wire that cannot serve the task, a top-k that misses the letters. A task with fewer
  samples, or whose first samples fail for different reasons, runs to its end.
* a count ``N >= 1``: stop once more than N samples failed;
* a fraction below 1: stop once more than that share of the samples run failed (counted once
  ``FRACTION_AFTER`` samples are done);

and ``off`` (``None``): never stop. A stopped run is resumable like an interrupted one.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Literal

from ..errors import ConfigError

__all__ = ["AUTO", "FIRST", "FRACTION_AFTER", "MaxFailures", "Stopper", "parse_max_failures"]

AUTO: Literal["auto"] = "auto"
FIRST = 10
"""How many first samples of a unit failing for one reason stop an ``auto`` run."""
FRACTION_AFTER = 20
"""A fraction is judged once this many samples are done."""

MaxFailures = float | Literal["auto"] | None


def parse_max_failures(text: str) -> MaxFailures:
    """``auto``, ``off``, a count ``N >= 1`` or a fraction ``0 < x < 1``; ``ConfigError``
    (naming ``--max-failures``) for anything else."""
    word = text.strip().lower()
    if word == AUTO:
        return AUTO
    if word in ("off", "none", "never"):
        return None
    try:
        value = float(word)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0 or (value > 1 and not value.is_integer()):
        raise ConfigError(
            f"--max-failures {text!r}: give auto (stop when the first {FIRST} samples of a task "
            "all fail for one reason), off, a count N >= 1, or a fraction between 0 and 1",
            path="max_failures",
            received=text,
        )
    return value


def _reason(error: dict[str, Any]) -> tuple[str, str]:
    return str(error.get("class", "Unknown")), str(error.get("path") or "")


class Stopper:
    """Counts what the engine records and says, once, why the run must stop."""

    def __init__(self, limit: MaxFailures) -> None:
        self.limit = limit
        self.failed = 0
        self.done = 0
        self._first: dict[str, list[tuple[str, str]]] = {}
        self._example: dict[str, str] = {}

    def record(self, unit: str, error: dict[str, Any] | None) -> str | None:
        """Count one recorded sample of ``unit`` (``error`` when it failed); the reason to stop,
        or None."""
        self.done += 1
        self.failed += error is not None
        limit = self.limit
        if limit == AUTO:
            return self._auto(unit, error)
        if limit is None or error is None:
            return None
        if limit >= 1:
            if self.failed > limit:
                return f"stopped early (--max-failures): more than {int(limit)} samples failed"
            return None
        if self.done >= FRACTION_AFTER and self.failed / self.done > limit:
            return (
                f"stopped early (--max-failures): {self.failed} of {self.done} samples failed "
                f"(over {limit:.0%})"
            )
        return None

    def _auto(self, unit: str, error: dict[str, Any] | None) -> str | None:
        first = self._first.setdefault(unit, [])
        if len(first) >= FIRST:
            return None
        first.append(_reason(error) if error is not None else ("", ""))
        if error is not None and unit not in self._example:
            message = " ".join(str(error.get("message", "")).split())
            self._example[unit] = message if len(message) <= 200 else message[:199] + "…"
        if len(first) < FIRST:
            return None
        (reason, count), *_ = Counter(first).most_common(1)
        if count < FIRST or not reason[0]:
            return None
        return (
            f"stopped early: the first {FIRST} samples of {unit} all failed with {reason[0]} "
            f"({self._example[unit]}); fix that and resume, or run on regardless with "
            "--max-failures off"
        )
