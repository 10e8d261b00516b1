"""What a results view shows of a run (the HTML report, ``sieval samples``), as plain data.

Everything comes from the run directory: ``report.json`` for the figures (so the view and the
report never disagree), the records for the samples, each request's body and ledger expanded to
exactly what was sent and decided.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..store.paths import results_dirname
from ..store.records import Record, Shared, expand_requests, read_records, records_path, shared_path
from .explain import answer_label, explain, prompt_text
from .shots import shots
from .snapshot import snapshot

__all__ = ["Unit", "build_view", "outcome", "sample_view", "sandboxes", "units"]


class Unit(msgspec.Struct, kw_only=True):
    """One (model, task) of a run: its report entry and its records."""

    result: dict[str, Any]
    records: list[Record]
    shared: Shared


def units(run_dir: Path, report: dict[str, Any] | None = None) -> Iterator[Unit]:
    """Each (model, task) of the run in report order, with its latest record per sample (a run
    without a current report.json: as far as it is recorded, ``snapshot``)."""
    report = report or snapshot(run_dir)
    for result in report["results"]:
        path = records_path(run_dir, results_dirname(result["model"]), result["task"])
        records = list(read_records(path).records.values())
        shared = Shared.load(shared_path(path))
        yield Unit(result=result, records=records, shared=shared)


def outcome(record: Record, headline: str) -> str:
    """``correct`` / ``wrong`` by the headline metric, ``censored`` (the token budget cut the
    answer before it gave one: ``scoring/censored.py``), or ``failed`` (never scored)."""
    if record.status != "ok":
        return "failed"
    if record.metrics.get("censored") == 1.0:
        return "censored"
    return "correct" if record.metrics.get(headline) == 1.0 else "wrong"


def sample_view(record: Record, shared: Shared, headline: str) -> dict[str, Any]:
    requests = expand_requests(record.requests, shared)
    first = next(iter(requests.values()), None)
    told = explain(record, headline)
    error = None
    if record.error is not None:
        error = {
            "class": str(record.error.get("class", "Unknown")),
            "message": str(record.error.get("message", "")),
            "status": record.error.get("status"),
        }
    return {
        "id": record.sample_id,
        "model": record.model,
        "task": record.task,
        "group": record.group,
        "outcome": outcome(record, headline),
        "headline": headline,
        "metrics": record.metrics,
        "query": told.query,
        "prompt": prompt_text(first) if first is not None else None,
        "choices": msgspec.to_builtins(told.choices),
        "why": told.why,
        "generation": told.generation,
        "extracted": told.extracted,
        "prediction": record.prediction,
        "gold": record.gold,
        "prediction_label": answer_label(record.sample, record.prediction),
        "gold_label": answer_label(record.sample, record.gold),
        "execution": _execution(record.channels.get("execution")),
        "error": error,
        "rerun": record.rerun,
        "requests": [
            {
                "key": key,
                "status": r.status,
                "body": r.body,
                "ledger": r.ledger,
                "usage": r.usage,
                "timings": r.timings,
                "finish": r.finish,
                "error": r.error,
                "reply": r.reply,
            }
            for key, r in requests.items()
        ],
    }


def build_view(run_dir: Path, report: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole view of a run: summary, request distributions, margins, samples."""
    report = report or snapshot(run_dir)
    summary, traffic, margins, samples = [], [], [], []
    for unit in units(run_dir, report):
        result = unit.result
        headline = result["headline"]
        summary.append({**_summary(result), "shots": shots(report, str(result["task"]))})
        latency, tokens_in, tokens_out = [], [], []
        gaps = []
        for record in unit.records:
            for request in record.requests.values():
                if "total_s" in request.timings:
                    latency.append(request.timings["total_s"])
                if "input_tokens" in request.usage:
                    tokens_in.append(request.usage["input_tokens"])
                if "output_tokens" in request.usage:
                    tokens_out.append(request.usage["output_tokens"])
            view = sample_view(record, unit.shared, headline)
            gap = _margin(view["choices"])
            if gap is not None and record.status == "ok":
                gaps.append(gap)
            samples.append(view)
        key = {"model": result["model"], "task": result["task"]}
        traffic.append(
            {**key, "latency_s": latency, "input_tokens": tokens_in, "output_tokens": tokens_out}
        )
        if gaps:
            margins.append({**key, "metric": headline, "values": gaps})
    run = report.get("run", {})
    timings = report.get("timings", {})
    return {
        "title": f"sieval run {Path(run.get('dir', run_dir)).name}",
        "run": {
            "dir": str(run.get("dir", run_dir)),
            "identity": run.get("identity"),
            "started": timings.get("started"),
            "sieval_version": report.get("sieval_version"),
            "resumed": bool(run.get("resumed")),
        },
        "denominator": report.get("denominator"),
        "partial": report.get("partial"),
        "budget": report.get("budget"),
        "sandboxes": sandboxes(report),
        "summary": summary,
        "requests": traffic,
        "margins": margins,
        "samples": samples,
        "compare": None,
    }


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    intervals = result.get("intervals") or {}
    headline = result["headline"]
    metrics = {}
    for name, value in result.get("metrics", {}).items():
        if isinstance(value, int | float) and name != "n":
            spread = intervals.get(name) or {}
            metrics[name] = {"value": value, "se": spread.get("se"), "ci": spread.get("ci")}
    top = intervals.get(headline) or {}
    provenance = result.get("provenance", {})
    return {
        "model": result["model"],
        "task": result["task"],
        "protocol": result.get("protocol"),
        "headline": headline,
        "value": result.get("metrics", {}).get(headline),
        "se": top.get("se"),
        "ci": top.get("ci"),
        "estimator": top.get("estimator"),
        "metrics": metrics,
        "samples": result["samples"],
        "failures": result.get("failures", {}),
        "censored": result.get("censored"),
        "dialect": provenance.get("dialect"),
        "endpoint": provenance.get("endpoint"),
        "cost": result.get("cost"),
    }


def _margin(choices: list[dict[str, Any]]) -> float | None:
    """The gold choice's score minus the best other choice's: above 0 the gold was picked with
    that much to spare, below 0 it lost by that much."""
    gold = [c["score"] for c in choices if c["gold"] and c["score"] is not None]
    others = [c["score"] for c in choices if not c["gold"] and c["score"] is not None]
    if len(gold) != 1 or not others:
        return None
    return float(gold[0] - max(others))


def _execution(channel: Any) -> dict[str, Any] | None:
    """How a code task's program ended (its ``execution`` channel), as the views show it."""
    if not isinstance(channel, dict):
        return None
    return {
        "status": channel.get("status"),
        "reason": channel.get("reason"),
        "mode": channel.get("mode"),
        "wall_seconds": channel.get("wall_seconds"),
        "stderr": channel.get("stderr") or "",
    }


def sandboxes(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Where the code tasks ran their programs (``report.json``: ``ready``), one entry a mode."""
    found: dict[str, dict[str, Any]] = {}
    for task, record in (report.get("ready") or {}).items():
        box = record.get("sandbox") if isinstance(record, dict) else None
        if isinstance(box, dict):
            entry = found.setdefault(
                str(box.get("mode")),
                {
                    "mode": str(box.get("mode")),
                    "unsafe": bool(box.get("unsafe")),
                    "memory": box.get("memory"),
                    "tasks": [],
                },
            )
            entry["tasks"].append(str(task))
    return list(found.values())
