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
from typing import Any

from ..results.shots import shots
from .text import magnitude

__all__ = ["FORMATS", "render_rows", "result_rows"]

FORMATS = ("table", "md", "csv", "json")

COLUMNS = ("model", "task", "metric", "value", "se", "ci_low", "ci_high", "n", "shots",
           "estimator", "scored", "failed", "missing")  # fmt: skip


def result_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for result in report["results"]:
        count = shots(report, str(result["task"]))
        spreads = result.get("intervals") or {}
        samples = result["samples"]
        flat = _flat(result.get("metrics") or {})
        for metric, value in flat.items():
            if metric == "n" or metric.endswith(".n"):
                continue  # each row carries its n: a 1-of-1 subject never reads as a score of 1
            spread = spreads.get(metric) or {}
            group = metric.rpartition(".")[0]
            n = spread.get("n", flat.get(f"{group}.n" if group else "n"))
            ci = spread.get("ci") or [None, None]
            rows.append(
                {
                    "model": result["model"],
                    "task": result["task"],
                    "metric": metric,
                    "value": value,
                    "se": spread.get("se"),
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "n": None if n is None else int(n),
                    "shots": count,
                    "estimator": spread.get("estimator"),
                    "scored": samples["scored"],
                    "failed": samples["failed"],
                    "missing": samples["missing"],
                }
            )
        for bound, entry in _bounds(result):
            ci = entry.get("ci") or [None, None]
            row = {"model": result["model"], "task": result["task"], "metric": bound}
            row.update(value=entry.get("value"), se=entry.get("se"), ci_low=ci[0], ci_high=ci[1])
            row.update(n=entry.get("n"), shots=count, estimator=entry.get("estimator"))
            row.update((k, samples[k]) for k in ("scored", "failed", "missing"))
            rows.append(row)
    return rows


def _bounds(result: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The headline's bounds over the censored answers, each named for its row."""
    censored = result.get("censored")
    if not isinstance(censored, Mapping):
        return []
    headline = result["headline"]
    return [  # left out of every sample (all censored): a row with no value
        (f"censored.{key}.{headline}", censored.get(key) or {"n": 0})
        for key in ("as_wrong", "left_out")
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
        lines = ["| model | task | metric | value | 95% CI | n | shots | failed | missing |",
                 "|---|---|---|---:|---|---:|---:|---:|---:|"]  # fmt: skip
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
                     k, str(row["failed"]), str(row["missing"])]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
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
