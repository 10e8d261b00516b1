"""The task table, discovered: every public module of ``sieval.tasks`` that defines ``TASK`` (or
``SUITE``); a module whose ``TASK`` is a tuple defines a family of tasks (RULER's).

A new task is one new module; nothing here changes. ``TASKS`` maps names to task objects, sorted;
``SUITES`` the same for suites (``suite.py``).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from typing import Any

from ..errors import ConfigError
from .base import Task
from .suite import Suite

__all__ = ["SUITES", "TASKS", "discover", "discover_suites", "get_task"]

_NOT_TASKS = {"base", "registry"}


def _declared(package: str, attribute: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name.startswith("_") or info.name in _NOT_TASKS:
            continue
        value = getattr(importlib.import_module(f"{package}.{info.name}"), attribute, None)
        if value is None:
            continue
        for one in value if isinstance(value, tuple) else (value,):  # a family: several tasks
            if one.name in found:
                raise AssertionError(f"two task modules define the {attribute} name {one.name!r}")
            found[one.name] = one
    return dict(sorted(found.items()))


def discover(package: str = __package__ or "sieval.tasks") -> dict[str, Task]:
    """``{name: task}`` from the ``TASK`` of every non-underscore module in ``package``."""
    return _declared(package, "TASK")


def discover_suites(package: str = __package__ or "sieval.tasks") -> dict[str, Suite]:
    """``{name: suite}`` from the ``SUITE`` of every non-underscore module in ``package``."""
    return _declared(package, "SUITE")


TASKS: dict[str, Task] = discover()
SUITES: dict[str, Suite] = discover_suites()
for _suite in SUITES.values():
    if _suite.name in TASKS:
        raise AssertionError(f"{_suite.name!r} names both a task and a suite")
    for _member in _suite.tasks:
        if _member.name not in TASKS:
            raise AssertionError(f"suite {_suite.name!r} lists {_member.name!r}, not a task")


def get_task(name: str) -> Task:
    """The task called ``name``; a ``ConfigError`` with the closest name for a typo."""
    if name in TASKS:
        return TASKS[name]
    from .aliases import ALIASES

    close = difflib.get_close_matches(name, [*TASKS, *SUITES, *ALIASES], n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(
        f"unknown task {name!r}.{hint} Known tasks: {', '.join(TASKS)}; suites: "
        f"{', '.join(SUITES) or '(none)'} (see 'sieval tasks').",
        path="tasks",
        received=name,
    )
