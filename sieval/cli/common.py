"""What every command shares: exit codes, the error line, the task registry seam."""

from __future__ import annotations

from collections.abc import Mapping

import typer

from ..tasks.base import Task

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED_SAMPLES", "EXIT_OK", "fail", "task_registry"]

EXIT_OK, EXIT_FAILED_SAMPLES, EXIT_BAD_INPUT = 0, 1, 2


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` to stderr (wrapped at word boundaries on a terminal, one line in
    a pipe, as ``text.console`` does); return the exit to raise (code 2, bad input)."""
    from rich.markup import escape

    from .text import console

    console(stderr=True).print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(EXIT_BAD_INPUT)


def task_registry() -> Mapping[str, Task]:
    """The tasks the CLI knows (a seam for tests)."""
    from ..tasks.registry import TASKS

    return TASKS
