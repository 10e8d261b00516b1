"""How many shots each of a report's results was run with.

A run's ``run.json`` (and ``report.json``'s ``run.inputs``) keeps each task's config as it was
given: ``num_fewshot`` is ``None`` where the task's own default applied. The number a reader needs
(every view shows it beside the figure) is that default then, read from the task registry; a task
the registry does not know (a run made by another version) is ``None``: shown as unknown, never
guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .document import Report

__all__ = ["shots", "shots_text"]


def shots(report: Report, task: str, tasks: Mapping[str, Any] | None = None) -> int | None:
    """The shots ``task`` ran with in ``report``'s run (``tasks``: the registry, a test seam)."""
    inputs = report.run.inputs
    entry = (inputs.get("tasks") or {}).get(task) or {}
    given = (entry.get("config") or {}).get("num_fewshot")
    if isinstance(given, int) and not isinstance(given, bool):
        return given
    if tasks is None:
        from ..tasks.registry import TASKS

        tasks = TASKS
    known = tasks.get(task)
    if known is None:
        return None
    defaults = getattr(known, "defaults", {})
    if "num_fewshot" not in defaults:
        return 0  # a task that takes no shots (BFCL, MT-Bench, RULER): its prompts hold none
    default = defaults["num_fewshot"]
    return default if isinstance(default, int) and not isinstance(default, bool) else None


def shots_text(count: int | None) -> str:
    """``0-shot``, ``5-shot``, or ``?-shot`` when unknown."""
    return f"{'?' if count is None else count}-shot"
