"""``sieval export RUN --to FORMAT [DEST]``: a finished run in a shape another tool reads
(lm-eval's result files, an Inspect log, Every Eval Ever records, a W&B or MLflow run); the
formats are ``sieval.export.FORMATS``. ``sieval eval --export FORMAT`` does the same when a run
ends."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import typer

from ..errors import ConfigError, StorageError
from . import common
from .app import app

__all__ = ["check_formats", "export_formats"]


@app.command("export")
def export_command(
    run_dir: Path = typer.Argument(..., help="A finished run directory written by 'sieval eval'."),
    dest: Path | None = typer.Argument(
        None, help="Where to write (default: RUN_DIR/exports/FORMAT/)."
    ),
    to: list[str] = typer.Option(
        ...,
        "--to",
        metavar="FORMAT",
        help="lm-eval, inspect, eee, wandb or mlflow (repeatable; with several, DEST/FORMAT/).",
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", metavar="DIR", help="Dataset directory (else as eval)."
    ),
) -> None:
    """Write a finished run as lm-eval's result files, an Inspect log, Every Eval Ever
    records, a W&B run (offline) or an MLflow run (local store)."""
    try:
        check_formats(to)
        for line in export_formats(run_dir, to, dest, data_dir=data_dir):
            typer.echo(line)
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message, code=common.exit_code(exc)) from None


def check_formats(formats: Sequence[str]) -> None:
    """``ConfigError`` for an unknown format or a missing library, before anything runs."""
    from ..export import FORMATS
    from ..export.extras import need

    needs = {"inspect": ("inspect_ai", "Inspect logs"), "wandb": ("wandb", "W&B runs"),
             "mlflow": ("mlflow", "MLflow runs")}  # fmt: skip
    for fmt in formats:
        if fmt not in FORMATS:
            raise ConfigError(
                f"--export/--to {fmt!r}: choose one of {', '.join(FORMATS)}", path="export"
            )
        if fmt in needs:
            need(*needs[fmt])


def export_formats(
    run_dir: Path,
    formats: Sequence[str],
    dest: Path | None = None,
    *,
    data_dir: Path | None = None,
) -> list[str]:
    """Export ``run_dir`` in each format; one line per format saying where it went. W&B and
    MLflow runs carry the HTML report, written here first."""
    from ..export import default_dest, export_source
    from ..export.source import load_source
    from .report import write_html

    source = load_source(run_dir, data_dir=data_dir, tasks=common.tasks_for(run_dir=run_dir))
    lines = []
    with tempfile.TemporaryDirectory(prefix="sieval-export-") as scratch:
        html: Path | None = None
        if {"wandb", "mlflow"} & set(formats):
            html = write_html(run_dir, source.report, Path(scratch) / "report.html")
        for fmt in formats:
            target = dest / fmt if dest is not None and len(formats) > 1 else dest
            target = target if target is not None else default_dest(run_dir, fmt)
            written = export_source(source, fmt, target, html=html)
            lines.append(f"{fmt}: {len(written)} file(s) in {target}")
    return lines
