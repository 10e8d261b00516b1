"""``sieval finalize RUN_DIR``: check a sharded run is complete, merge its shards, write the report.

Exit codes: 0 every sample scored; 1 complete but some samples failed (recorded, counted, never
scored; rerunning their shard retries them); 2 incomplete (each shard that is not done is named
with the command that reruns it; no report is written) or bad input.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ..errors import ConfigError, StorageError
from . import common
from .app import app

__all__: list[str] = []


@app.command("finalize")
def finalize_command(
    run_dir: Path = typer.Argument(..., help="A run directory made by 'sieval plan'."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Dataset directory (else the one the plan used)."
    ),
) -> None:
    """Check every planned sample is recorded once, merge the shards, write report.json."""
    from ..cluster.shards import finalize

    console = Console(stderr=True, soft_wrap=True, highlight=False)
    try:
        done = finalize(run_dir, data_dir=data_dir, tasks=common.tasks_for(run_dir=run_dir))
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    from .report import render_failures, render_summary

    out = Console(highlight=False)
    from rich.text import Text

    from .inert import shown

    for note in done.left_out:
        console.print(Text("warning: ", style="yellow") + shown(note))
    for line in render_failures(done.report):
        console.print(Text("failed: ", style="yellow") + line)
    out.print(render_summary(done.report))
    for k, n in sorted(done.failed_shards.items()):
        console.print(
            f"[yellow]shard {k}[/]: {n} failed sample(s); to retry them: sieval eval --run "
            f"{run_dir} --shard {k}/{done.report.run.shards}, then finalize again"
        )
    out.print(f"report: {run_dir / 'report.json'}", soft_wrap=True)
    raise typer.Exit(common.EXIT_FAILED_SAMPLES if done.failed else common.EXIT_OK)
