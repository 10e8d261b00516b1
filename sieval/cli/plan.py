"""``sieval plan CONFIG --out RUN_DIR --shards N``: freeze a run into shards (nothing runs).

It runs every check ``sieval eval`` runs before its first request (config, data, capabilities,
the endpoint, the pre-run checks), once, forecasts the run's tokens and cost
(``cost/forecast.py``), then writes ``run.json``, ``plan.json`` and ``forecast.json``. Each
shard is then ``sieval eval --run RUN_DIR --shard k/N`` (any machine that sees the directory), and
``sieval finalize RUN_DIR`` writes the report. Exit codes: 0 planned, 2 bad input.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from msgspec import UnsetType
from rich.console import Console

from ..errors import ConfigError, StorageError
from . import common
from .app import app

if TYPE_CHECKING:
    from ..cost.forecast import Forecast

__all__: list[str] = []


def _render_forecast(forecast: Forecast | UnsetType, config: Path, stdout: Console) -> None:
    """The plan's forecast (``plan.json``'s ``setup.forecast``, also ``forecast.json``)."""
    from ..runner import load_config
    from .costs import render_forecast

    if isinstance(forecast, UnsetType):
        return
    loaded = load_config(config)
    prices = {m.label: m.price for m in [*loaded.models, *loaded.role_models().values()]}
    for part in render_forecast(forecast, prices):
        stdout.print(part)


@app.command("plan")
def plan_command(
    config: Path = typer.Argument(..., help="The YAML config (models: and tasks:)."),
    out: Path = typer.Option(..., "--out", help="The run directory to create (must not exist)."),
    shards: int = typer.Option(..., "--shards", min=1, help="How many shards (N)."),
    limit: int | None = typer.Option(None, "--limit", help="At most N samples per task."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Dataset directory (else SIEVAL_DATA_DIR)."
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", help="Global cap on requests in flight, for the whole run."
    ),
    model: list[str] = typer.Option([], "--model", help="Plan only this model (repeatable)."),
    task: list[str] = typer.Option([], "--task", help="Plan only this task (repeatable)."),
    no_preflight: bool = typer.Option(
        False, "--no-preflight", help="Skip the pre-run checks (model id, top-k, context, BOS)."
    ),
    allow_unsafe_code: bool = typer.Option(
        False,
        "--allow-unsafe-code",
        help="Let code tasks run the model's code UNSANDBOXED when no sandbox can run here "
        "(each shard must be run with it too).",
    ),
) -> None:
    """Freeze a run as N shards: checks once, writes run.json and plan.json, runs nothing."""
    from ..cluster.shards import freeze
    from ..cost.forecast import CostOptions
    from ..runner import RunOptions, load_config

    console = Console(stderr=True, soft_wrap=True, highlight=False)
    try:
        loaded = load_config(config)
        frozen = asyncio.run(
            freeze(
                loaded,
                out,
                shards,
                RunOptions(
                    data_dir=data_dir,
                    limit=limit,
                    concurrency=concurrency,
                    models=tuple(model),
                    tasks=tuple(task),
                    preflight=not no_preflight,
                    allow_unsafe_code=allow_unsafe_code,
                    cost=CostOptions(forecast=True),  # forecast.json: the report shows it
                    on_stage=lambda text: console.print(f"[dim]{text}[/]"),
                ),
                tasks=common.tasks_for(loaded.include_path),
            )
        )
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    for note in frozen.notes:
        console.print(f"[yellow]warning:[/] {note}")
    stdout = Console(highlight=False, soft_wrap=True)
    for name, entry in frozen.tasks.items():
        sizes = [entry.shard.count(k) for k in range(frozen.shards)]
        kept = " (groups kept whole)" if entry.clustered else ""
        stdout.print(f"{name}: {len(entry.samples)} samples, per shard {sizes}{kept}")
    _render_forecast(frozen.setup.forecast, config, stdout)
    stdout.print(f"planned {out} as {frozen.shards} shards; run each with")
    stdout.print(
        f"  sieval eval --run {out} --shard K/{frozen.shards}   (K = 0..{frozen.shards - 1})"
    )
    stdout.print(f"then: sieval finalize {out}   (Slurm scripts: sieval slurm {out})")
