"""``sieval rejudge RUN --judge LABEL``: a run's answers judged again (``runner/rejudge.py``).

Exit codes as ``sieval eval``'s: 0 every sample judged, 1 some failed (resume the new run with
``sieval eval --resume``), 2 bad input.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console

from ..errors import ConfigError, StorageError
from . import common
from .app import app

__all__: list[str] = []


@app.command("rejudge")
def rejudge_command(
    run: Path = typer.Argument(..., help="The run whose answers are judged again."),
    judge: str = typer.Option(
        ..., "--judge", metavar="LABEL", help="The judge: a models: or roles: entry's name."
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="A config file holding the judge's entry (else the run's own config is searched).",
    ),
    judge_self: bool = typer.Option(
        False,
        "--judge-self",
        help="Allow a judge that serves the evaluated model's id (the report names it).",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Where the new run is made (default: the source run's folder)."
    ),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Dataset directory."),
    wire_log: bool = typer.Option(False, "--wire-log", help="Write each model's wire.jsonl."),
) -> None:
    """Judge a run's answers again with another judge, as a new run; nothing is regenerated."""
    from ..runner import RunOptions
    from ..runner.rejudge import arejudge

    options = RunOptions(
        out=out if out is not None else run.resolve().parent,
        data_dir=data_dir,
        wire_log=wire_log,
    )
    try:
        result = asyncio.run(arejudge(run, judge, options, judges=config, judge_self=judge_self))
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    from .report import render_summary

    if result.report is not None:
        Console(highlight=False).print(render_summary(result.report))
    Console(stderr=True, highlight=False).print(
        f"judged again: {result.run_dir} (source {run}); compare: sieval compare {run} "
        f"{result.run_dir}",
        soft_wrap=True,
    )
    raise typer.Exit(result.exit_code)
