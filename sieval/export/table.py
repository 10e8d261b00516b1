"""Several runs side by side, as a paper or a model card prints them: ``sieval report RUN [RUN
...] --md|--csv|--latex``.

One row per task and one column per model (``by="models"`` swaps them). Each cell is the task's
headline metric as its run reported it, with its 95% interval, its n (the samples it is over) and
its shots; the notes under the table name each task's headline metric and protocol, the interval
methods, and the models a run's tasks called besides the evaluated one (its ``roles:``, a
judge). Every figure is a ``report.json``'s: the table
computes nothing. A model that ran a task in two runs is refused (which would it be?), and two
runs' models of the same label are told apart by their run.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError
from ..results.shots import shots

if TYPE_CHECKING:
    from ..results.document import Report

__all__ = ["Cell", "PaperTable", "paper_table", "render_table"]


@dataclass(frozen=True)
class Cell:
    """One (model, task): the headline metric's figures, as the report has them."""

    metric: str
    value: float | None
    ci: tuple[float, float] | None
    n: int | None
    shots: int | None
    failed: int = 0


@dataclass
class PaperTable:
    models: list[str]
    tasks: list[str]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)
    """``(model, task)`` -> its cell; a missing key is a task the model did not run."""
    notes: list[str] = field(default_factory=list)
    by: Literal["tasks", "models"] = "tasks"
    """What the rows are: tasks (models as columns) or models (tasks as columns)."""


def paper_table(
    reports: Sequence[Report], *, by: Literal["tasks", "models"] = "tasks"
) -> PaperTable:
    """The runs' headline figures side by side (``ConfigError`` when a (model, task) is in two
    runs)."""
    labels = _labels(reports)
    table = PaperTable(models=[], tasks=[], by=by)
    protocols: dict[str, set[str]] = {}
    headlines: dict[str, set[str]] = {}
    methods: dict[str, set[str]] = {}
    for i, report in enumerate(reports):
        inputs = report.run.inputs
        for result in report.results:
            model = labels[(i, result.model)]
            task = result.task
            if (model, task) in table.cells:
                raise ConfigError(
                    f"model {model!r} ran {task!r} in two of the runs given; pass one run per "
                    "(model, task), or rename one model",
                    path="report",
                )
            table.models += [model] if model not in table.models else []
            table.tasks += [task] if task not in table.tasks else []
            headline = result.headline
            spread = result.spread
            low, high = spread.ci if spread is not None else (None, None)
            value = result.value
            n = spread.n if spread is not None else result.metrics.get("n")
            table.cells[(model, task)] = Cell(
                metric=headline,
                value=float(value) if isinstance(value, int | float) else None,
                ci=(low, high) if low is not None and high is not None else None,
                n=int(n) if isinstance(n, int | float) else None,
                shots=shots(report, task),
                failed=result.samples.failed,
            )
            protocol = ((inputs.get("tasks") or {}).get(task) or {}).get("protocol")
            if protocol:
                protocols.setdefault(task, set()).add(str(protocol))
            headlines.setdefault(task, set()).add(headline)
            if spread is not None and spread.estimator:
                methods.setdefault(spread.estimator, set()).add(task)
    for task in table.tasks:
        said = f"{task}: {' / '.join(sorted(headlines[task]))}"
        if task in protocols:
            said += f"; {' / '.join(sorted(protocols[task]))}"
        table.notes.append(said)
    for method, tasks in methods.items():
        table.notes.append(f"95% intervals of {', '.join(sorted(tasks))}: {method}")
    for report in reports:
        table.notes += _roles(report)
    if any(c.failed for c in table.cells.values()):
        table.notes.append(
            "n counts the scored samples; failed samples are never scored (the runs' reports "
            "count them)"
        )
    return table


def _run_id(report: Report) -> str:
    return report.run.identity.removeprefix("sha256:")[:8]


def _roles(report: Report) -> list[str]:
    """The run's models playing a role (``roles:``: a judge), as its inputs name them."""
    roles = report.run.inputs.get("roles") or {}
    said = _run_id(report)
    return [
        f"run {said}: roles.{role} is {entry.get('model')} at {entry.get('endpoint')}"
        for role, entry in sorted(roles.items())
        if isinstance(entry, Mapping)
    ]


def _labels(reports: Sequence[Report]) -> dict[tuple[int, str], str]:
    """Each run's model labels as columns: a label two runs share gets its run's id."""
    seen: dict[str, set[int]] = {}
    for i, report in enumerate(reports):
        for result in report.results:
            seen.setdefault(result.model, set()).add(i)
    out = {}
    for i, report in enumerate(reports):
        run = _run_id(report)
        for result in report.results:
            label = result.model
            out[(i, label)] = f"{label} ({run})" if len(seen[label]) > 1 else label
    return out


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def cell_text(cell: Cell | None) -> str:
    """``0.652 [0.611, 0.691] n=100 5-shot`` (``—`` for a task the model did not run)."""
    if cell is None:
        return "—"
    ci = f" [{cell.ci[0]:.3f}, {cell.ci[1]:.3f}]" if cell.ci else ""
    n = "" if cell.n is None else f" n={cell.n}"
    k = f" {'?' if cell.shots is None else cell.shots}-shot"
    return f"{_figure(cell.value)}{ci}{n}{k}"


def _grid(table: PaperTable) -> tuple[list[str], list[tuple[str, list[Cell | None]]]]:
    """The header and the rows (a label and its cells) in the table's orientation."""
    if table.by == "tasks":
        rows = [(t, [table.cells.get((m, t)) for m in table.models]) for t in table.tasks]
        return ["task", *table.models], rows
    rows = [(m, [table.cells.get((m, t)) for t in table.tasks]) for m in table.models]
    return ["model", *table.tasks], rows


def render_table(table: PaperTable, form: Literal["md", "csv", "latex"]) -> str:
    if form == "md":
        return _markdown(table)
    if form == "csv":
        return _csv(table)
    if form == "latex":
        return _latex(table)
    raise ValueError(f"unknown table format {form!r}")


def _markdown(table: PaperTable) -> str:
    header, rows = _grid(table)
    out = ["| " + " | ".join(_md(h) for h in header) + " |"]
    out.append("|---|" + "---:|" * (len(header) - 1))
    for label, cells in rows:
        out.append("| " + " | ".join([_md(label), *(_md(cell_text(c)) for c in cells)]) + " |")
    out.append("")
    out += [f"- {_md(note)}" for note in table.notes]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _csv(table: PaperTable) -> str:
    """One row per (task, model) would lose the layout; this keeps it: each column of the
    table is a group ``<column> value``, ``… ci_low``, ``… ci_high``, ``… n``, ``… shots``."""
    header, rows = _grid(table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    parts = ("value", "ci_low", "ci_high", "n", "shots", "metric")
    writer.writerow([header[0], *(f"{h} {p}" for h in header[1:] for p in parts)])
    for label, cells in rows:
        line: list[Any] = [label]
        for c in cells:
            if c is None:
                line += [""] * len(parts)
            else:
                low, high = c.ci if c.ci else ("", "")
                line += [
                    "" if c.value is None else c.value,
                    low,
                    high,
                    "" if c.n is None else c.n,
                    "" if c.shots is None else c.shots,
                    c.metric,
                ]
        writer.writerow(line)
    for note in table.notes:
        writer.writerow([f"# {note}"])
    return out.getvalue()


_LATEX = str.maketrans(
    {
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "\\": r"\textbackslash{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
        "|": r"\textbar{}",
    }
)


def _tex(text: str) -> str:
    return text.translate(_LATEX)


def _latex_cell(cell: Cell | None) -> str:
    if cell is None:
        return "---"
    ci = f" {{\\scriptsize [{cell.ci[0]:.3f}, {cell.ci[1]:.3f}]}}" if cell.ci else ""
    n = "" if cell.n is None else f"n={cell.n}, "
    k = f"{'?' if cell.shots is None else cell.shots}-shot"
    return f"{_figure(cell.value)}{ci} {{\\tiny ({n}{k})}}"


def _latex(table: PaperTable) -> str:
    header, rows = _grid(table)
    lines = [
        "\\begin{table}[t]",
        "\\centering",
        "\\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        "\\hline",
        " & ".join(_tex(h) for h in header) + " \\\\",
        "\\hline",
    ]
    for label, cells in rows:
        lines.append(" & ".join([_tex(label), *(_latex_cell(c) for c in cells)]) + " \\\\")
    lines += ["\\hline", "\\end{tabular}"]
    if table.notes:
        lines.append("\\caption{" + "; ".join(_tex(n) for n in table.notes) + ".}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"
