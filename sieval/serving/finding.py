"""What a serving check found: its outcome, its evidence, what it means for the run, its cost.

``failed`` means the server's numbers moved where they should not (or a default it applies can
change a result); ``skipped`` says why the check could not run. A finding ``matters`` when it
can change what the run measures: then it is a warning at the start of the run and in the
report. A difference too small to change a score read at four decimals is reported, not warned
about.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .observation import Cost, Difference

__all__ = ["NEGLIGIBLE", "Finding", "compared", "moved_text"]

NEGLIGIBLE = 1e-4
"""Nats below which a moved log-probability cannot change a score read at four decimals and
flips a prediction only at an exact tie: reported, never warned about."""


class Finding(msgspec.Struct, kw_only=True):
    check: str
    """``batch_invariance``, ``cache_invariance``, ``determinism``, ``seed_repeat``,
    ``server_defaults``."""
    outcome: Literal["passed", "failed", "skipped"]
    detail: str
    """The evidence, in one line."""
    meaning: str = ""
    """What a failure means for the run, and what to do."""
    matters: bool = False
    """Whether it can change what the run measures (a warning at the start of the run)."""
    tasks: list[str] = msgspec.field(default_factory=list)
    """The run's tasks that depend on it (empty under ``sieval probe --checks``)."""
    evidence: dict[str, Any] = msgspec.field(default_factory=dict)
    cost: Cost = msgspec.field(default_factory=Cost)

    def warning(self, label: str) -> str:
        tasks = f" (tasks {', '.join(self.tasks)})" if self.tasks else ""
        check = self.check.replace("_", " ")
        verdict = "failed" if self.outcome == "failed" else "could not be checked"
        return f"{label}: {check} {verdict}{tasks}: {self.detail}; {self.meaning}"


def moved_text(diff: Difference, what: str) -> str:
    """``diff`` in words: ``3 of 40 log-probabilities moved, up to 0.12 nats (at ...)``."""
    parts = []
    if diff.moved:
        parts.append(
            f"{diff.moved} of {diff.compared} log-probabilities moved, up to {diff.max_abs:.3g} "
            f"nats (at {diff.where})"
        )
    elif diff.compared:
        parts.append(f"all {diff.compared} log-probabilities equal")
    if not diff.same_text:
        parts.append(f"the generated text changed {what}")
    elif diff.compared == 0:
        parts.append("the generated text is the same")
    return "; ".join(parts)


def matters(diff: Difference) -> bool:
    """Whether a difference can change a result: a text changed, or a value moved more than
    ``NEGLIGIBLE``."""
    return not diff.same_text or diff.max_abs > NEGLIGIBLE


def compared(
    check: str, diff: Difference, detail: str, evidence: dict[str, Any], cost: Cost, meaning: str
) -> Finding:
    """A check's verdict on two sets of values: passed when none moved, else failed with what
    it means for the run and whether it matters."""
    if diff.same:
        return Finding(check=check, outcome="passed", detail=detail, evidence=evidence, cost=cost)
    return Finding(
        check=check, outcome="failed", detail=detail, meaning=meaning, matters=matters(diff),
        evidence=evidence, cost=cost,
    )  # fmt: skip
