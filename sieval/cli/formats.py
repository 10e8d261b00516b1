"""A report's figures as rows for pasting elsewhere: Markdown, CSV or JSON (``sieval report
--format``). One row per (model, task, metric); nested metrics (MMLU's subjects) are flattened
to dotted names, each with the n of its own group (``by_subject.anatomy.acc`` with the anatomy
questions' n). A generation task adds its headline's bounds over its censored answers
(``scoring/censored.py``) as ``censored.as_wrong.<headline>`` and ``censored.left_out.<headline>``
(n: the samples each is over), beside its ``censored_rate``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec import UnsetType

from ..results.shots import shots
from .text import magnitude

if TYPE_CHECKING:
    from ..results.document import Interval, Report, UnitResult

__all__ = ["FORMATS", "render_rows", "result_rows"]

FORMATS = ("table", "md", "csv", "json")

COLUMNS = ("model", "task", "metric", "value", "se", "ci_low", "ci_high", "n", "shots",
           "estimator", "scored", "failed", "missing", "marks", "marks_why")  # fmt: skip
"""``shots``: the shots the task ran with (``results/shots.py``; None when unknown). ``marks``: the
headline's marks (``partial``, ``exposed``: ``results/marks.py``) on every row of its (model,
task), since each figure of it shares the cause; ``marks_why``: their reasons."""


def result_rows(report: Report) -> list[dict[str, Any]]:
    from ..results.marks import result_marks

    rows = []
    for result in report.results:
        count = shots(report, result.task)
        samples = result.samples
        marks = result_marks(report, result)
        marked = {
            "marks": ", ".join(m.mark for m in marks) or None,
            "marks_why": " | ".join(f"{m.mark}: {m.why}" for m in marks) or None,
        }
        flat = _flat(result.metrics)
        for metric, value in flat.items():
            if metric == "n" or metric.endswith(".n"):
                continue  # each row carries its n: a 1-of-1 subject never reads as a score of 1
            spread = result.intervals.get(metric)
            group = metric.rpartition(".")[0]
            n = spread.n if spread else flat.get(f"{group}.n" if group else "n")
            ci = spread.ci if spread else [None, None]
            rows.append(
                {
                    "model": result.model,
                    "task": result.task,
                    "metric": metric,
                    "value": value,
                    "se": spread.se if spread else None,
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "n": None if n is None else int(n),
                    "shots": count,
                    "estimator": spread.estimator if spread else None,
                    "scored": samples.scored,
                    "failed": samples.failed,
                    "missing": samples.missing,
                    **marked,
                }
            )
        for bound, entry in _bounds(result):
            ci = entry.ci if entry else [None, None]
            rows.append(
                {
                    "model": result.model,
                    "task": result.task,
                    "metric": bound,
                    "value": entry.value if entry else None,
                    "se": entry.se if entry else None,
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "n": entry.n if entry else 0,
                    "shots": count,
                    "estimator": entry.estimator if entry else None,
                    "scored": samples.scored,
                    "failed": samples.failed,
                    "missing": samples.missing,
                    **marked,
                }
            )
    return rows


def _bounds(result: UnitResult) -> list[tuple[str, Interval | None]]:
    """The headline's bounds over the censored answers, each named for its row (left out of
    every sample, all censored: None, a row with no value and n 0)."""
    censored, headline = result.censored, result.headline
    if isinstance(censored, UnsetType):
        return []
    return [
        (f"censored.as_wrong.{headline}", censored.as_wrong),
        (f"censored.left_out.{headline}", censored.left_out),
    ]


def render_rows(rows: list[dict[str, Any]], form: str) -> str:
    if form == "json":
        return json.dumps(rows, indent=2) + "\n"
    if form == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
        return out.getvalue()
    if form == "md":
        lines = [
            "| model | task | metric | value | 95% CI | n | shots | failed | missing | marks |",
            "|---|---|---|---:|---|---:|---:|---:|---:|---|",
        ]
        why: dict[tuple[str, str], str] = {}
        for row in rows:
            ci = ""
            low, high = row["ci_low"], row["ci_high"]
            if low is not None and high is not None:
                scale = max(abs(low), abs(high))
                ci = f"{magnitude(low, 4, scale)} – {magnitude(high, 4, scale)}"
            n = "" if row["n"] is None else str(row["n"])
            value = "" if row["value"] is None else magnitude(float(row["value"]))
            k = "?" if row["shots"] is None else str(row["shots"])
            cells = [_cell(row["model"]), _cell(row["task"]), _cell(row["metric"]), value, ci, n,
                     k, str(row["failed"]), str(row["missing"]),
                     _cell(row["marks"] or "")]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
            if row["marks_why"]:
                why[(row["model"], row["task"])] = row["marks_why"]
        if why:  # the reasons once per (model, task), below the table
            lines.append("")
            lines += [f"- {_cell(m)} / {_cell(t)}: {_cell(said)}" for (m, t), said in why.items()]
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown format {form!r}; choose one of {', '.join(FORMATS)}")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _flat(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = float(value)
    return out
