"""The task table, discovered: every public module of ``sieval.tasks`` that defines ``TASK``.

A new task is one new module; nothing here changes. ``TASKS`` maps names to task objects, sorted.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil

from ..errors import ConfigError
from .base import Task

__all__ = ["TASKS", "discover", "get_task"]

_NOT_TASKS = {"base", "registry"}


def discover(package: str = __package__ or "sieval.tasks") -> dict[str, Task]:
    """``{name: task}`` from the ``TASK`` of every non-underscore module in ``package``."""
    found: dict[str, Task] = {}
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name.startswith("_") or info.name in _NOT_TASKS:
            continue
        task = getattr(importlib.import_module(f"{package}.{info.name}"), "TASK", None)
        if task is None:
            continue
        if task.name in found:
            raise AssertionError(f"two task modules define the task name {task.name!r}")
        found[task.name] = task
    return dict(sorted(found.items()))


TASKS: dict[str, Task] = discover()


def get_task(name: str) -> Task:
    """The task called ``name``; a ``ConfigError`` with the closest name for a typo."""
    if name in TASKS:
        return TASKS[name]
    close = difflib.get_close_matches(name, list(TASKS), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(
        f"unknown task {name!r}.{hint} Known tasks: {', '.join(TASKS)} (see 'sieval tasks').",
        path="tasks",
        received=name,
    )
