"""``sieval report RUN_DIR``: a run's ``report.json`` as tables (``sieval eval`` prints the brief
form when a run ends)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import ConfigError
from . import common
from .app import app

__all__ = ["render_failures", "render_finishes", "render_report"]


@app.command("report")
def report_command(
    run_dir: Path = typer.Argument(..., help="A run directory written by 'sieval eval'."),
    form: str = typer.Option(
        "table", "--format", help="table (default), md, csv or json: one row per metric."
    ),
    html: str | None = typer.Option(
        None,
        "--html",
        help="Also write the HTML report (one self-contained file) to PATH "
        "(a directory: PATH/report.html).",
    ),
    compare: Path | None = typer.Option(
        None, "--compare", help="With --html: add the comparison with this earlier run."
    ),
) -> None:
    """Print a run's report.json as tables, or as md, csv or json rows; --html writes a page.

    The HTML report is one self-contained file: summary, plots and a per-sample browser."""
    from ..runner import load_report
    from .formats import FORMATS, render_rows, result_rows

    if form not in FORMATS:
        raise common.fail(f"--format {form!r}: choose one of {', '.join(FORMATS)}")
    try:
        report = load_report(run_dir)
    except ConfigError as exc:
        raise common.fail(exc.message) from None
    if html is not None:
        written = write_html(run_dir, report, Path(html), compare_with=compare)
        typer.echo(f"HTML report: {written}", err=form != "table")
    if form != "table":
        typer.echo(render_rows(result_rows(report), form), nl=False)
        return
    console = Console()
    for table in render_report(report):
        console.print(table)
    for line in render_finishes(report):
        console.print(f"finished: {line}", highlight=False)
    for line in render_failures(report):
        console.print(line, highlight=False)


def write_html(
    run_dir: Path, report: Mapping[str, Any], target: Path, *, compare_with: Path | None = None
) -> Path:
    """Build the run's view and write it as one self-contained HTML file at ``target``."""
    from ..runner.view import build_view
    from .html import render_html

    view = build_view(run_dir, dict(report))
    if compare_with is not None:
        from ..audit.compare import compare_runs

        try:
            view["compare"] = compare_runs(compare_with, run_dir)
        except ConfigError as exc:
            raise common.fail(exc.message) from None
    if target.is_dir():
        target = target / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(render_html(view), encoding="utf-8")
    tmp.replace(target)
    return target


def render_finishes(report: Mapping[str, Any]) -> list[str]:
    """How the answers ended, per (model, task), in the servers' words (reported, not scored)."""
    lines = []
    for result in report["results"]:
        reasons = result.get("finish_reasons") or {}
        if not reasons:
            continue  # nothing answered, or a run recorded before finish reasons were
        ended = ", ".join(f"{reason} {count}" for reason, count in reasons.items())
        empty = result.get("empty_answers", 0)
        lines.append(
            f"{result['model']}/{result['task']}: {ended}" + (f"; {empty} empty" if empty else "")
        )
    return lines


def render_failures(report: Mapping[str, Any]) -> list[str]:
    """The first failure messages of each error class, per (model, task): what went wrong."""
    lines = []
    for result in report["results"]:
        seen: set[str] = set()
        for example in result.get("failure_examples", []):
            kind = str(example.get("class"))
            if kind in seen:
                continue
            seen.add(kind)
            count = result["failures"].get(kind, 1)
            lines.append(
                f"{result['model']}/{result['task']}: {count} {kind}, e.g. sample "
                f"{example.get('sample_id')}: {example.get('message')}"
            )
    return lines


def _ci(spread: Mapping[str, Any]) -> str:
    ci = spread.get("ci")
    if not spread:
        return ""
    if not ci or ci[0] is None or ci[1] is None:
        return "-"
    return f"{ci[0]:.3f}–{ci[1]:.3f}"


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


def render_report(report: Mapping[str, Any], *, brief: bool = False) -> list[Table | Text]:
    """The summary, one metrics table per (model, task), provenance per model, and timings:
    narrow tables (two to six columns) that stay readable at 80 columns."""
    summary = Table(title=f"sieval run {report['run']['identity'][:19]}")
    summary.add_column("model", overflow="fold")
    summary.add_column("task", no_wrap=True)  # task names are what a reader scans for
    for column in ("headline\n95% CI", "scored", "failed", "missing"):
        summary.add_column(column, justify="right", overflow="fold")
    tables: list[Table | Text] = [summary]
    provenance = Table(title="provenance", show_header=False)
    provenance.add_column("what", style="dim")
    provenance.add_column("value", overflow="fold")
    seen_models: set[str] = set()
    for result in report["results"]:
        samples = result["samples"]
        headline = result["headline"]
        metrics = result.get("metrics") or {}
        value = _fmt(metrics[headline]) if headline in metrics else "-"
        spread = (result.get("intervals") or {}).get(headline) or {}
        failures = ", ".join(f"{k} {v}" for k, v in result["failures"].items())
        summary.add_row(
            result["model"],
            Text(result["task"]) + Text(f"\n{headline}", style="dim"),
            f"{value}\n{_ci(spread)}",
            f"{samples['scored']}/{samples['total']}",
            f"{samples['failed']}" + (f" ({failures})" if failures else ""),
            str(samples["missing"]),
        )
        shown, folded = _brief(metrics) if brief else (metrics, [])
        flat = _scalars(shown)
        if len(flat) > 1:
            caption = (
                f"{', '.join(folded)}: see sieval report RUN_DIR or report.json" if folded else None
            )
            detail = Table(title=f"{result['model']} / {result['task']}", caption=caption)
            detail.add_column("metric", overflow="fold")
            detail.add_column("value", justify="right")
            detail.add_column("± se", justify="right")
            detail.add_column("95% CI", justify="right")
            spreads = result.get("intervals") or {}
            for key, item in flat.items():
                spread = spreads.get(key) or {}
                se = spread.get("se")
                detail.add_row(key, _fmt(item), "" if se is None else f"{se:.4f}", _ci(spread))
            tables.append(detail)
            estimators = {str(x.get("estimator")) for x in spreads.values()}
            if estimators:
                tables.append(Text(f"intervals: {', '.join(sorted(estimators))}", style="dim"))
        prov = result["provenance"]
        if result["model"] not in seen_models:
            seen_models.add(result["model"])
            server = prov.get("server_version")
            version = server.get("version", server) if isinstance(server, dict) else server
            provenance.add_row("model", result["model"], style="bold")
            provenance.add_row("dialect", prov["dialect"])
            provenance.add_row("requested", prov["requested_model"])
            provenance.add_row("reported", ", ".join(prov["reported_models"]) or "-")
            provenance.add_row("endpoint", str(prov.get("endpoint")))
            provenance.add_row("server", str(version))
    tables.append(provenance)
    timings = report.get("timings", {})
    footer = Table(title="timings", show_header=False)
    footer.add_column("what", style="dim")
    footer.add_column("value", justify="right")
    footer.add_row("wall", f"{timings.get('wall_s', 0.0):.2f} s")
    footer.add_row("requests", str(timings.get("requests", 0)))
    footer.add_row("requests/s", f"{timings.get('requests_per_s', 0.0):.1f}")
    if len(timings.get("sessions", [])) > 1:
        footer.add_row("sessions", str(len(timings["sessions"])))
    tables.append(footer)
    if report.get("denominator"):
        tables.append(Text(f"note: {report['denominator']}", style="dim"))
    return tables
