"""``sieval eval``, ``sieval tasks`` and ``sieval report``: parse, call the runner, render.

Exit codes of ``sieval eval``: 0 every sample scored; 1 the run finished but some samples failed
(they are recorded and counted in report.json, never scored); 2 bad input (config, arguments,
data, capability mismatch, unreachable endpoint, resume mismatch), detected before any directory
is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ..errors import ConfigError
from ..runner import RunOptions, load_report, make_progress, run_eval
from ..runner.config import load_config
from ..tasks.base import Task
from . import common
from .app import app

__all__ = ["render_report", "render_tasks"]


def _fail(exc: ConfigError) -> typer.Exit:
    return common.fail(exc.message)


@app.command("eval")
def eval_command(
    config: Path = typer.Argument(..., help="The YAML config (models: and tasks:)."),
    model: list[str] = typer.Option([], "--model", help="Run only this model (repeatable)."),
    task: list[str] = typer.Option([], "--task", help="Run only this task (repeatable)."),
    limit: int | None = typer.Option(None, "--limit", help="At most N samples per task."),
    resume: Path | None = typer.Option(None, "--resume", help="Complete this run directory."),
    out: Path | None = typer.Option(None, "--out", help="Create the run directory in DIR."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Dataset directory (else SIEVAL_DATA_DIR)."
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", help="Global cap on requests in flight."
    ),
    wire_log: bool = typer.Option(False, "--wire-log", help="Log every exchange (redacted)."),
) -> None:
    """Evaluate the config's models on its tasks; exit 0 ok, 1 failed samples, 2 bad input."""
    console = Console(stderr=True, soft_wrap=True)
    try:
        result = run_eval(
            load_config(config),
            RunOptions(
                out=out,
                resume=resume,
                data_dir=data_dir,
                limit=limit,
                concurrency=concurrency,
                models=tuple(model),
                tasks=tuple(task),
                wire_log=wire_log,
            ),
            tasks=common.task_registry(),
            progress=make_progress(console),
        )
    except ConfigError as exc:
        raise _fail(exc) from None
    out_console = Console(width=160)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for table in render_report(result.report, brief=True):
        out_console.print(table)
    out_console.print(f"run directory: {result.run_dir}", highlight=False)
    if result.failed:
        console.print(
            f"[yellow]{result.failed} sample(s) failed[/]: recorded with their error class, "
            "counted in report.json, not scored",
            highlight=False,
        )
    raise typer.Exit(result.exit_code)


@app.command("tasks")
def tasks_command() -> None:
    """List the tasks with their protocol, requirements and defaults."""
    try:
        registry = common.task_registry()
    except ConfigError as exc:
        raise _fail(exc) from None
    Console(width=200).print(render_tasks(registry))


@app.command("report")
def report_command(
    run_dir: Path = typer.Argument(..., help="A run directory written by 'sieval eval'."),
) -> None:
    """Print a run's report.json as tables."""
    try:
        report = load_report(run_dir)
    except ConfigError as exc:
        raise _fail(exc) from None
    console = Console(width=160)
    for table in render_report(report):
        console.print(table)


# -- rendering -----------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _scalars(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        if isinstance(value, Mapping):
            out.update(_scalars(value, f"{prefix}{key}."))
        elif isinstance(value, int | float | str | bool):
            out[f"{prefix}{key}"] = value
    return out


BRIEF_GROUP = 12
"""``sieval eval`` folds a metric group with more entries than this (MMLU's 57 subjects) into a
one-line pointer; ``sieval report`` prints everything."""


def _brief(metrics: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    kept: dict[str, Any] = {}
    folded: list[str] = []
    for key, value in metrics.items():
        if isinstance(value, Mapping) and len(value) > BRIEF_GROUP:
            folded.append(f"{key} ({len(value)} entries)")
        else:
            kept[key] = value
    return kept, folded


def render_report(report: Mapping[str, Any], *, brief: bool = False) -> list[Table]:
    """The summary table, one metrics table per (model, task), and the provenance table."""
    summary = Table(title=f"sieval run {report['run']['identity'][:19]}")
    for column in ("model", "task", "headline", "value", "scored", "failed", "missing", "failures"):
        summary.add_column(column, justify="right" if column in {"value", "scored"} else "left")
    tables = [summary]
    provenance = Table(title="provenance")
    for column in ("model", "dialect", "requested", "reported", "endpoint", "server"):
        provenance.add_column(column)
    seen_models: set[str] = set()
    for result in report["results"]:
        samples = result["samples"]
        headline = result["headline"]
        metrics = result.get("metrics") or {}
        summary.add_row(
            result["model"],
            result["task"],
            headline,
            _fmt(metrics[headline]) if headline in metrics else "-",
            f"{samples['scored']}/{samples['total']}",
            str(samples["failed"]),
            str(samples["missing"]),
            ", ".join(f"{k}={v}" for k, v in result["failures"].items()) or "-",
        )
        shown, folded = _brief(metrics) if brief else (metrics, [])
        flat = _scalars(shown)
        if len(flat) > 1:
            caption = (
                f"{', '.join(folded)}: see sieval report RUN_DIR or report.json" if folded else None
            )
            detail = Table(title=f"{result['model']} / {result['task']}", caption=caption)
            detail.add_column("metric")
            detail.add_column("value", justify="right")
            for key, value in flat.items():
                detail.add_row(key, _fmt(value))
            tables.append(detail)
        prov = result["provenance"]
        if result["model"] not in seen_models:
            seen_models.add(result["model"])
            server = prov.get("server_version")
            provenance.add_row(
                result["model"],
                prov["dialect"],
                prov["requested_model"],
                ", ".join(prov["reported_models"]) or "-",
                str(prov.get("endpoint")),
                _fmt(server.get("version", server)) if isinstance(server, dict) else str(server),
            )
    tables.append(provenance)
    timings = report.get("timings", {})
    footer = Table(title="timings", show_header=False)
    footer.add_column("what")
    footer.add_column("value", justify="right")
    footer.add_row("wall", f"{timings.get('wall_s', 0.0):.2f} s")
    footer.add_row("requests", str(timings.get("requests", 0)))
    footer.add_row("requests/s", f"{timings.get('requests_per_s', 0.0):.1f}")
    footer.add_row("denominator", str(report.get("denominator", "")))
    tables.append(footer)
    return tables


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
