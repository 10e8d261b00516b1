"""``sieval eval --run RUN_DIR --shard k/N``: one shard of a planned run (called by ``eval``).

``sieval eval CONFIG --run RUN_DIR --shard k/N`` reads CONFIG only for an endpoint whose
password ``run.json`` does not hold. Exit codes: 0 every sample of the shard is recorded (scored
or failed: finalize counts failures); 1 ``--max-failures`` stopped it; 2 bad input, or the shard
could not write its records (an unusable records path, the shard already running): a scheduler
marks the job failed and a dependent finalize never runs; 3 stopped by a full disk (rerun it
once there is space); 130 interrupted (rerun the same command: it resumes from the shard's own
records).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console

from ..errors import ConfigError, StorageError
from . import common

__all__ = ["run_shard_command"]


def run_shard_command(
    run: Path | None,
    shard: str | None,
    *,
    config: Path | None = None,
    data_dir: Path | None,
    wire_log: bool,
    console: Console,
    budgets: tuple[str | None, str | None] = (None, None),
    allow_unsafe_code: bool = False,
) -> None:
    """Parse ``--run``/``--shard``, run the shard, render; always raises ``typer.Exit``."""
    from ..cluster.shards import parse_shard, run_shard
    from ..runner import RunOptions, load_config, make_progress

    if run is None or shard is None:
        raise common.fail("a shard needs both --run RUN_DIR and --shard k/N (or slurm|indexed|env)")
    try:
        k, n = parse_shard(shard)
        from .eval import cost_options  # a budget is per process: this shard's own records

        cost = cost_options(False, None, *budgets)
        endpoints = load_config(config) if config is not None else None
        result = asyncio.run(
            run_shard(
                run,
                k,
                n,
                RunOptions(
                    data_dir=data_dir,
                    wire_log=wire_log,
                    cost=cost,
                    allow_unsafe_code=allow_unsafe_code,
                    on_stage=lambda text: console.print(f"[dim]{text}[/]"),
                ),
                tasks=common.tasks_for(run_dir=run),
                progress=make_progress(console),
                endpoints=endpoints,
            )
        )
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message, code=common.exit_code(exc)) from None
    except OSError as exc:  # the shard's records cannot be written: it did not run
        raise common.fail(f"shard {shard} of {run} could not run: {exc}") from None
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/]: rerun the same command to resume shard {k}")
        raise typer.Exit(130) from None
    failed = result.failed
    scored = sum(r.samples.scored for r in result.report.results) if result.report else 0
    Console(highlight=False, soft_wrap=True).print(
        f"shard {k}: {scored} scored, {failed} failed; when every shard is done: "
        f"sieval finalize {run}"
    )
    if result.stopped:
        console.print(f"[red]{result.stopped}[/]")
    raise typer.Exit(common.EXIT_FAILED_SAMPLES if result.stopped else common.EXIT_OK)
