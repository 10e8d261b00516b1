"""What every command shares: exit codes, the error line, the task registry seam."""

from __future__ import annotations

from collections.abc import Mapping

import typer
from rich.console import Console

from ..tasks.base import Task

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED_SAMPLES", "EXIT_OK", "fail", "task_registry"]

EXIT_OK, EXIT_FAILED_SAMPLES, EXIT_BAD_INPUT = 0, 1, 2


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` to stderr; return the exit to raise (code 2, bad input)."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        f"[bold red]error:[/] {message}", markup=True
    )
    return typer.Exit(EXIT_BAD_INPUT)


def task_registry() -> Mapping[str, Task]:
    """The tasks the CLI knows (a seam for tests)."""
    from ..tasks.registry import TASKS

    return TASKS
