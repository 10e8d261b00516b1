"""``sieval compare RUN_A RUN_B``: two runs sample by sample (``audit/compare.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import typer

from ..errors import ConfigError
from . import common
from .app import app

__all__ = ["render_comparison"]


@app.command("compare")
def compare_command(
    run_a: Path = typer.Argument(..., help="The run before the change."),
    run_b: Path = typer.Argument(..., help="The run after it."),
    html: str | None = typer.Option(
        None,
        "--html",
        help="Also write RUN_B's HTML report with the comparison to PATH (a directory: "
        "PATH/report.html).",
    ),
    form: str = typer.Option("table", "--format", help="table (default) or json."),
    flips: int = typer.Option(10, "--flips", min=0, help="List at most N flipped samples a task."),
) -> None:
    """Compare two runs sample by sample: paired differences, McNemar, flips, log-likelihoods.

    Per task: both runs' metrics, the paired difference with its 95% interval, McNemar's exact
    test, the flipped samples, and the per-choice log-likelihood differences."""
    from ..audit.compare import compare_runs

    if form not in ("table", "json"):
        raise common.fail(f"--format {form!r}: choose table or json")
    try:
        result = compare_runs(run_a, run_b)
    except ConfigError as exc:
        raise common.fail(exc.message) from None
    if html is not None:
        from ..runner import load_report
        from .report import write_html

        written = write_html(run_b, load_report(run_b), Path(html), compare_with=run_a)
        typer.echo(f"HTML report with the comparison: {written}", err=True)
    if form == "json":
        typer.echo(json.dumps(result, indent=2))
        return
    from rich.console import Console

    console = Console(highlight=False)
    for item in render_comparison(result, flips=flips):
        console.print(item)


def render_comparison(result: Mapping[str, Any], *, flips: int = 10) -> Iterable[Any]:
    from rich.markup import escape
    from rich.table import Table

    yield f"A: {escape(result['a']['dir'])}\nB: {escape(result['b']['dir'])}"
    changes = result.get("changes") or []
    if changes:
        yield f"what differs between the runs' inputs ({len(changes)}):"
        for line in changes[:20]:
            yield f"  {escape(line)}"
        if len(changes) > 20:
            yield f"  … {len(changes) - 20} more (--format json)"
    else:
        yield "the runs' inputs are identical (same configs, data, versions)"
    for task in result["tasks"]:
        models = task["model_a"] if task["model_a"] == task["model_b"] else (
            f"{task['model_a']} → {task['model_b']}"
        )  # fmt: skip
        table = Table(title=f"{escape(models)} / {escape(task['task'])}: {task['paired']} paired")
        for column in ("metric", "A", "B", "B − A", "95% CI", "McNemar p"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        for name, m in task["metrics"].items():
            ci = m["ci"]
            interval = "-" if None in ci else f"{ci[0]:+.4f} {ci[1]:+.4f}"
            test = m["mcnemar"]
            table.add_row(
                name + (" *" if name == task["headline"] else ""), f"{m['a']:.4f}",
                f"{m['b']:.4f}", f"{m['diff']:+.4f}", interval,
                "-" if test is None else f"{test['p_value']:.3g}",
            )  # fmt: skip
        yield table
        head = task["metrics"].get(task["headline"], {}).get("mcnemar")
        if head is not None:
            yield (
                f"  {task['headline']}: right only in A {head['a_only']}, only in B "
                f"{head['b_only']}, both {head['both']}, neither {head['neither']}"
            )
        counts = [f"failed A {task['failed_a']}, B {task['failed_b']}"]
        if task["only_a"] or task["only_b"]:
            counts.append(f"only in A {task['only_a']}, only in B {task['only_b']}")
        yield "  " + "; ".join(counts)
        loglik = task["loglik"]
        if loglik is not None:
            yield (
                f"  per-choice log-likelihood |B − A| over {loglik['n']}: p50 {loglik['p50']:.3g}"
                f", p90 {loglik['p90']:.3g}, p99 {loglik['p99']:.3g}, max {loglik['max']:.3g}"
                + (f" ({escape(loglik['max_at'])})" if loglik["max"] > 0 else "")
            )
        yield f"  flipped {task['flipped']} (headline {task['headline']} differs)"
        for flip in task["flips"][:flips]:
            yield (
                f"    {escape(flip['id'])}: A {flip['a']} ({escape(str(flip['prediction_a']))}), "
                f"B {flip['b']} ({escape(str(flip['prediction_b']))}), gold "
                f"{escape(str(flip['gold']))}"
            )
        if task["flipped"] > min(flips, len(task["flips"])):
            yield f"    … {task['flipped'] - min(flips, len(task['flips']))} more (--format json)"
    for gone in result["unmatched"]:
        yield f"only in run {gone['run']}: {escape(gone['model'])} / {escape(gone['task'])}"
