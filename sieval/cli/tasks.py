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
    """One row per task: its name, and what it reports, needs, defaults to and how it scores."""
    table = Table(title="sieval tasks", show_lines=True)
    table.add_column("task", style="bold", overflow="fold")
    table.add_column("headline, requirements, defaults, protocol", overflow="fold")
    for name, task in registry.items():
        defaults = ", ".join(f"{k}={v}" for k, v in getattr(task, "defaults", {}).items())
        lines = [
            f"headline: {task.headline}",
            *(f"needs {r.capability}: {r.why}" for r in task.requirements),
            f"defaults: {defaults or '-'}",
            f"protocol: {task.protocol}",
        ]
        table.add_row(name, "\n".join(lines))
    return table


@app.command("tasks")
def tasks_command() -> None:
    """List the tasks with their protocol, requirements and defaults."""
    try:
        registry = common.task_registry()
    except ConfigError as exc:
        raise common.fail(exc.message) from None
    Console().print(render_tasks(registry))
