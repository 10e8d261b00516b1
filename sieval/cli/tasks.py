"""``sieval tasks``: the tasks with their protocol, requirements and defaults."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

from ..errors import ConfigError
from ..tasks.base import Task
from . import common
from .app import app

__all__ = ["render_tasks"]


def render_tasks(registry: Mapping[str, Task]) -> Table:
    table = Table(title="sieval tasks", show_lines=True)
    for column in ("task", "headline", "requirements", "defaults", "protocol"):
        table.add_column(column, overflow="fold")
    for name, task in registry.items():
        table.add_row(
            name,
            task.headline,
            "\n".join(f"{r.capability}: {r.why}" for r in task.requirements),
            ", ".join(f"{k}={v}" for k, v in getattr(task, "defaults", {}).items()) or "-",
            task.protocol,
        )
    return table


@app.command("tasks")
def tasks_command() -> None:
    """List the tasks with their protocol, requirements and defaults."""
    try:
        registry = common.task_registry()
    except ConfigError as exc:
        raise common.fail(exc.message) from None
    Console().print(render_tasks(registry))
