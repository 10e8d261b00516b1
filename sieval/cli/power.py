"""``sieval power``: the samples a paired comparison needs to detect a difference, or the
smallest difference n samples detect (``analysis/sample_size.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import typer

from ..errors import ConfigError, StorageError
from . import common
from .app import app

__all__ = ["SHOWN", "render_power"]

SHOWN = 10
"""Lines of what differs between the runs' inputs printed (all are in --format json)."""


@app.command("power")
def power_command(
    task: str | None = typer.Option(
        None, "--task", help="The task: its dataset's size and, where it clusters, its groups."
    ),
    delta: float | None = typer.Option(
        None, "--delta", help="The difference to detect (B − A): prints the samples needed."
    ),
    n: int | None = typer.Option(
        None,
        "--n",
        help="Samples (rows, with repeats): prints the smallest difference they detect.",
    ),
    baseline: float | None = typer.Option(
        None, "--baseline", help="Run A's accuracy (0/1 metrics); the runs taken as independent."
    ),
    discordance: float | None = typer.Option(
        None, "--discordance", help="The share of samples the two runs score differently (0/1)."
    ),
    sd: float | None = typer.Option(
        None, "--sd", help="The SD of the per-sample differences (a metric that is not 0/1)."
    ),
    icc: float | None = typer.Option(
        None, "--icc", help="A clustered task: the correlation of differences within a group."
    ),
    runs: tuple[Path, Path] | None = typer.Option(
        None,
        "--from",
        metavar="RUN_A RUN_B",
        help="Read the discordance or SD (and ICC) from a previous pair of runs.",
    ),
    metric: str | None = typer.Option(
        None, "--metric", help="The metric (default: the task's headline)."
    ),
    model: str | None = typer.Option(
        None, "--model", help="With --from: the model, when the runs hold several."
    ),
    repeats: int | None = typer.Option(
        None,
        "--repeats",
        help="Samples a row (the repeats option): n then counts rows (default: 1, or the runs').",
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="The two-sided test's level."),
    power: float = typer.Option(0.8, "--power", help="The probability of detecting."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", metavar="DIR", help="Dataset directory (else SIEVAL_DATA_DIR)."
    ),
    form: str = typer.Option(
        "table", "--format", metavar="table|json", help="table (default) or json."
    ),
) -> None:
    """Samples two runs need to detect a difference on a task, or the smallest one n detect.

    \b
    Examples:
    sieval power --task arc_easy_kshot_ppl --baseline 0.62 --delta 0.02
    sieval power --task mmlu_kshot_clp --from RUN_A RUN_B --delta 0.02
    sieval power --task arc_easy_kshot_ppl --discordance 0.1 --n 500"""
    from ..analysis.sample_size import Question, answer

    if form not in ("table", "json"):
        raise common.fail(f"--format {form!r}: choose table or json")
    question = Question(
        task=task, metric=metric, delta=delta, n=n, baseline=baseline, discordance=discordance,
        sd=sd, icc=icc, runs=runs, model=model, alpha=alpha, power=power, data_dir=data_dir,
        repeats=repeats,
    )  # fmt: skip
    try:
        result = answer(question)
    except (ConfigError, StorageError, ValueError) as exc:
        raise common.fail(getattr(exc, "message", None) or str(exc)) from None
    if form == "json":
        typer.echo(json.dumps(result, indent=2))
        return
    from .text import console

    out = console()
    for line in render_power(result):
        out.print(line)


def render_power(result: Mapping[str, Any]) -> Iterable[str]:
    """The answer as lines: what was computed and how, then the figures."""
    from .inert import markup as escape

    r = result
    what = escape(r["task"]) if r["task"] else "a paired comparison"
    if r.get("metric"):
        what += f" ({escape(r['metric'])})"
    yield what
    yield f"  method: {r['method_text']}"
    yield f"  test: α {r['alpha']:g} two-sided; power {r['power']:g} (--alpha, --power)"
    if r["discordance"] is not None:
        yield f"  discordance ψ: {r['discordance']:.4f}, {escape(r['spread_from'])}"
    else:
        yield f"  SD of the differences: {r['sd']:.4g}, {escape(r['spread_from'])}"
    if r.get("icc") is not None:
        yield f"  ICC: {r['icc']:.4g}, {escape(r['icc_from'])}"
    if r.get("runs"):
        runs = r["runs"]
        mde = "-" if runs["mde"] is None else f"{runs['mde']:.4f}"
        pairs = f"{runs['paired']} pairs"
        if runs.get("repeats"):
            pairs += f" ({runs['rows']} rows of {runs['repeats']} repeats)"
        yield (
            f"  the runs: {escape(runs['a'])} → {escape(runs['b'])} ({escape(runs['model'])}), "
            f"{pairs}, observed difference {runs['diff']:+.4f}, MDE {mde}"
        )
        yield from _changes(runs)
    size = (r.get("dataset") or {}).get("size")
    if size is not None:
        yield f"  dataset: {size:,} {'rows' if r.get('repeats') else 'samples'}"
    if r.get("delta") is not None:
        yield from _needed(r, size)
    if "mde" in r:
        yield from _detectable(r)
    for note in r["notes"]:
        yield f"  note: {escape(note)}"


def _changes(runs: Mapping[str, Any]) -> Iterable[str]:
    """What differs between the two runs whose spread the answer reads (as compare says it)."""
    from .inert import markup as escape

    for entry in runs.get("serving") or []:
        if entry.get("compared") and not entry.get("same"):
            yield f"  the runs' numerics differ: {escape(str(entry.get('said')))}"
    changes = runs.get("changes") or []
    if not changes:
        yield "  the runs' inputs are identical (same configs, data, versions)"
        return
    yield f"  what differs between the runs' inputs ({len(changes)}):"
    for line in changes[:SHOWN]:
        yield f"    {escape(line)}"
    if len(changes) > SHOWN:
        yield f"    … {len(changes) - SHOWN} more (--format json)"


def _needed(r: Mapping[str, Any], size: int | None) -> Iterable[str]:
    delta, needed = r["delta"], r["needed"]
    unit = r.get("unit", "samples")
    head = f"{unit} needed to detect Δ = {delta:+g}"
    if needed is not None:
        facts = [f"design effect {r['design_effect']:.3f}"] if "design_effect" in r else []
        if r.get("repeats"):
            facts.append(f"{needed * r['repeats']:,} samples at {r['repeats']} repeats a row")
        if size is not None and needed <= size:
            facts.append(f"the task's data holds {size:,}")
        line = f"{head}: {needed:,}" + (f" ({'; '.join(facts)})" if facts else "")
        if size is not None and needed > size:
            line += f": more than the {size:,} {unit} the task's data holds"
        yield line
    else:
        yield (
            f"{head}: not reachable within the task's {size:,} samples (with a positive ICC "
            "more samples of the same groups cannot remove the groups' own variation)"
        )
    at = r.get("at_dataset")
    if at:
        mde = "none" if at["mde"] is None else f"{at['mde']:.4f}"
        yield (
            f"  with all {at['n']:,} {unit}: power {at['power']:.3f} for Δ = {delta:+g}; the "
            f"smallest difference detected with probability {r['power']:g}: {mde}"
        )


def _detectable(r: Mapping[str, Any]) -> Iterable[str]:
    from .inert import markup as escape

    n, mde = r["n"], r["mde"]
    unit = r.get("unit", "samples")
    deff = f" (design effect {r['design_effect_at_n']:.3f})" if "design_effect_at_n" in r else ""
    if mde is None:
        why = r.get("mde_why") or f"too few samples differ to reach power {r['power']:g}"
        yield f"smallest detectable difference with {n:,} {unit}{deff}: none: {escape(why)}"
    else:
        yield f"smallest detectable difference with {n:,} {unit}{deff}: {mde:.4f}"
    if r.get("power_at_n") is not None:
        yield f"  power for Δ = {r['delta']:+g} with {n:,} {unit}: {r['power_at_n']:.3f}"
