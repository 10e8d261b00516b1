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
from ..store.records import (
    Record,
    RequestRecord,
    Shared,
    expand_requests,
    read_records,
    records_path,
    shared_path,
)
from .document import Report, UnitResult
from .explain import answer_label, explain, prompt_text
from .marks import result_marks
from .shots import shots
from .snapshot import snapshot

__all__ = ["Unit", "build_view", "conversation", "outcome", "sample_view", "sandboxes", "units"]


class Unit(msgspec.Struct, kw_only=True):
    """One (model, task) of a run: its report entry and its records."""

    result: UnitResult
    records: list[Record]
    shared: Shared


def units(run_dir: Path, report: Report | None = None) -> Iterator[Unit]:
    """Each (model, task) of the run in report order, with its latest record per sample (a run
    without a current report.json: as far as it is recorded, ``snapshot``)."""
    report = report or snapshot(run_dir)
    for result in report.results:
        path = records_path(run_dir, results_dirname(result.model), result.task)
        records = list(read_records(path).records.values())
        shared = Shared.load(shared_path(path))
        yield Unit(result=result, records=records, shared=shared)


def outcome(record: Record, headline: str) -> str:
    """``correct`` / ``wrong`` by the headline metric, ``censored`` (the token budget cut the
    answer before it gave one: ``scoring/censored.py``), ``failed`` (never scored), or
    ``budget_exhausted``: a tool loop a bound stopped (its own outcome, not a wrong answer)."""
    if record.status != "ok":
        return "failed"
    if record.channels.get("stop_reason") == "budget_exhausted":
        return "budget_exhausted"
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
        "tool_calls": record.channels.get("tool_calls") or [],
        "calls": _calls(record.channels, record.gold),
        "error": error,
        "conversation": conversation(requests),
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


def _calls(channels: dict[str, Any], gold: Any) -> dict[str, Any] | None:
    """A tool-calling sample's calls (the BFCL tasks' channels): the calls made, the expected
    ones, and the miss's class and reason; None for any other sample."""
    if "miss" not in channels or "made" not in channels:
        return None
    return {
        "made": channels.get("made"),
        "expected": gold,
        "miss": channels.get("miss"),
        "reason": channels.get("reason"),
        "lost": channels.get("lost"),
        "text": channels.get("text"),
    }


def conversation(requests: dict[str, RequestRecord]) -> list[dict[str, Any]]:
    """A conversational sample's calls in the order made, each with the messages it added (the
    earlier answers it sent back left out: they are the turns before) and the answer it got:
    empty for a one-shot sample, whose records keep neither."""
    out = []
    for key, r in requests.items():
        if r.messages is None and r.output is None:
            continue
        added = r.messages or []
        if r.turn > 1:
            added = [m for m in added if m.get("role") != "assistant"]
        out.append(
            {
                "key": key,
                "role": r.role,
                "turn": r.turn,
                "messages": added,
                "output": r.output or [],
                "error": r.error,
            }
        )
    return out


def build_view(run_dir: Path, report: Report | None = None) -> dict[str, Any]:
    """The whole view of a run: summary, request distributions, margins, samples."""
    report = report or snapshot(run_dir)
    summary, traffic, margins, samples = [], [], [], []
    for unit in units(run_dir, report):
        result = unit.result
        headline = result.headline
        summary.append(
            {
                **_summary(result),
                "shots": shots(report, result.task),
                "marks": _plain(result_marks(report, result)),
            }
        )
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
        key = {"model": result.model, "task": result.task}
        traffic.append(
            {**key, "latency_s": latency, "input_tokens": tokens_in, "output_tokens": tokens_out}
        )
        if gaps:
            margins.append({**key, "metric": headline, "values": gaps})
    run = report.run
    return {
        "title": f"sieval run {Path(run.dir or run_dir).name}",
        "run": {
            "dir": run.dir or str(run_dir),
            "identity": run.identity,
            "started": report.timings.started,
            "sieval_version": report.sieval_version,
            "resumed": run.resumed,
        },
        "denominator": report.denominator,
        "partial": _plain(report.partial),
        "budget": _plain(report.budget),
        "sandboxes": sandboxes(report),
        "summary": summary,
        "requests": traffic,
        "margins": margins,
        "samples": samples,
        "compare": None,
    }


def _plain(part: object) -> Any:
    """A report's optional part as plain data for the page (None when absent)."""
    return None if part is msgspec.UNSET else msgspec.to_builtins(part)


def _summary(result: UnitResult) -> dict[str, Any]:
    metrics = {}
    for name, value in result.metrics.items():
        if isinstance(value, int | float) and name != "n":
            spread = result.intervals.get(name)
            metrics[name] = {
                "value": value,
                "se": spread.se if spread else None,
                "ci": spread.ci if spread else None,
            }
    top = result.spread
    return {
        "model": result.model,
        "task": result.task,
        "protocol": result.protocol,
        "headline": result.headline,
        "value": result.value,
        "se": top.se if top else None,
        "ci": top.ci if top else None,
        "estimator": top.estimator if top else None,
        "metrics": metrics,
        "samples": msgspec.to_builtins(result.samples),
        "failures": result.failures,
        "censored": _plain(result.censored),
        "dialect": result.provenance.dialect,
        "endpoint": result.provenance.endpoint,
        "cost": _plain(result.cost),
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


def sandboxes(report: Report) -> list[dict[str, Any]]:
    """Where the code tasks ran their programs (``report.json``: ``ready``), one entry a mode."""
    found: dict[str, dict[str, Any]] = {}
    for task, record in report.ready.items():
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
