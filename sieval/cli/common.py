"""What every command shares: exit codes, the error line, the task registry seam."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import StorageError
from ..tasks.base import Task

if TYPE_CHECKING:  # task files are read when a command needs them, not when the CLI starts
    from ..tasks.catalogue import Registry

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FAILED_SAMPLES",
    "EXIT_OK",
    "EXIT_STORAGE",
    "exit_code",
    "fail",
    "task_registry",
    "tasks_for",
]

EXIT_OK, EXIT_FAILED_SAMPLES, EXIT_BAD_INPUT, EXIT_STORAGE = 0, 1, 2, 3
"""``EXIT_STORAGE``: a run stopped because a run file could not be written (a full disk);
what was recorded is kept and resuming completes it (``errors.StorageError.stopped``)."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """Print ``error: message`` to stderr, inert (it may quote a server), wrapped at word
    boundaries on a terminal and on one line in a pipe (``text.console``); return the exit to
    raise (code 2, bad input, unless told)."""
    from rich.text import Text

    from .inert import shown
    from .text import console

    console(stderr=True).print(Text("error: ", style="bold red") + shown(message))
    return typer.Exit(code)


def exit_code(exc: Exception) -> int:
    """2 for bad input, ``EXIT_STORAGE`` for a run stopped by a run file it could not write (a
    ``StorageError`` with ``stopped``)."""
    return EXIT_STORAGE if isinstance(exc, StorageError) and exc.stopped else EXIT_BAD_INPUT


def task_registry() -> Mapping[str, Task]:
    """The tasks the CLI knows (a seam for tests)."""
    from ..tasks.registry import TASKS

    return TASKS


def run_include_path(run_dir: Path) -> list[Path]:
    """The include path a run was made with (its ``run.json`` config), for its task files."""
    from ..store.rundir import read_run_json

    try:
        config = read_run_json(run_dir).get("config") or {}
    except Exception:  # an unreadable run is reported by whoever reads it next
        return []
    return [Path(p) for p in config.get("include_path") or [] if isinstance(p, str)]


def tasks_for(include: Sequence[Path | str] = (), run_dir: Path | None = None) -> Registry:
    """The stock tasks (``task_registry``) and the task files of ``include``, of the run
    ``run_dir``'s include path, and of ``$SIEVAL_INCLUDE_PATH`` (``tasks/catalogue.py``)."""
    from ..tasks.catalogue import Registry, env_include_path, scan

    folders = [Path(p) for p in include]
    if run_dir is not None:
        folders += run_include_path(run_dir)
    folders += env_include_path()
    roots = list(dict.fromkeys(p.expanduser().resolve() for p in folders))
    return Registry(task_registry(), scan(roots))
