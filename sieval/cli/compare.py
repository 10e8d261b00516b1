"""``sieval compare RUN_A RUN_B``: two runs sample by sample (``analysis/compare.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import typer

from ..errors import ConfigError, StorageError
from . import common
from .app import app
from .text import shown

__all__ = ["censored_difference", "judges_agreement", "render_comparison", "run_names"]

SHORT = 12
"""Directory names up to this long name the runs in the tables; longer ones would crowd them."""


def run_names(run_a: Path, run_b: Path, labels: str | None = None) -> tuple[str, str]:
    """What the runs are called on screen: ``--labels``, else their directory names when short
    and distinct, else before and after (never A and B: those are answer letters)."""
    if labels is not None:
        parts = [p.strip() for p in labels.split(",")]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise common.fail(f"--labels {labels!r}: give two distinct names, NAME_A,NAME_B")
        return parts[0], parts[1]
    a, b = run_a.resolve().name, run_b.resolve().name
    if a != b and len(a) <= SHORT and len(b) <= SHORT:
        return a, b
    return "before", "after"


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
    form: str = typer.Option(
        "table", "--format", metavar="table|json", help="table (default) or json."
    ),
    flips: int = typer.Option(10, "--flips", min=0, help="List at most N flipped samples a task."),
    labels: str | None = typer.Option(
        None,
        "--labels",
        metavar="NAME_A,NAME_B",
        help="What to call the two runs (default: their directory names when short, else "
        "before and after).",
    ),
    force: bool = typer.Option(
        False, "--force", help="With --html: overwrite an existing file that is not a report."
    ),
    power: float = typer.Option(
        0.8, "--power", help="The MDE's power: the probability of detecting it (default 0.8)."
    ),
    alpha: float = typer.Option(
        0.05, "--alpha", help="The MDE's two-sided test level (default 0.05)."
    ),
) -> None:
    """Compare two runs sample by sample: paired differences, McNemar, flips, log-likelihoods.

    Per task: both runs' metrics, the paired difference with its 95% interval, McNemar's exact
    test, the minimum detectable difference (MDE) at --power and --alpha, the flipped samples,
    and the per-choice log-likelihood differences."""
    from ..analysis.compare import compare_runs

    if form not in ("table", "json"):
        raise common.fail(f"--format {form!r}: choose table or json")
    for flag, value in (("--power", power), ("--alpha", alpha)):
        if not 0 < value < 1:
            raise common.fail(f"{flag} {value:g}: give a probability between 0 and 1")
    names = run_names(run_a, run_b, labels)
    try:
        result = compare_runs(run_a, run_b, power=power, alpha=alpha)
        if html is not None:
            from ..runner import load_report
            from .report import write_html

            written = write_html(
                run_b, load_report(run_b), Path(html), compare_with=run_a, force=force
            )
            typer.echo(f"HTML report with the comparison: {written}", err=True)
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    if form == "json":
        typer.echo(json.dumps(result, indent=2))
        return
    from rich.console import Console

    console = Console(highlight=False, emoji=False)  # a model's ":smile:" stays as written
    for item in render_comparison(result, flips=flips, names=names):
        console.print(hanging(item))


def hanging(item: Any) -> Any:
    """An indented line wraps under its own indent, not at the screen's edge."""
    if not isinstance(item, str) or not item.startswith(" "):
        return item
    from rich.padding import Padding
    from rich.text import Text

    text = item.lstrip(" ")
    return Padding(Text.from_markup(text, emoji=False), (0, 0, 0, len(item) - len(text)))


def render_comparison(
    result: Mapping[str, Any], *, flips: int = 10, names: tuple[str, str] = ("before", "after")
) -> Iterable[Any]:
    from rich.table import Table

    from .inert import markup as escape  # inert: controls shown as escapes, markup escaped
    from .text import figure, interval

    a, b = (escape(n) for n in names)
    yield f"{a}: {escape(result['a']['dir'])}\n{b}: {escape(result['b']['dir'])}"
    yield from render_serving_differences(result.get("serving") or [], (a, b))
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
        paired = f"{task['paired']} paired"
        if task.get("repeats"):
            paired += f" samples ({task['rows']} rows)"
        table = Table(
            title=f"{escape(models)} / {escape(task['task'])}: {paired}",
            caption=_caption(task, (a, b)),
            caption_justify="left",
        )
        # the metric's name (and the headline's star) is never cut nor wrapped; the difference's
        # header stacks, so that at 80 columns the numbers give way, not the names
        table.add_column("metric", no_wrap=True)
        for column in (a, b, f"{b} −\n{a}", "95% CI", "MDE", "p"):
            table.add_column(column, justify="right")
        for name, m in task["metrics"].items():
            test = m.get("test") or m["mcnemar"]
            mde = (m.get("mde") or {}).get("value")
            table.add_row(
                escape(name) + (" *" if name == task["headline"] else ""), figure(m["a"]),
                figure(m["b"]), f"{m['diff']:+.4f}", interval(m["ci"]),
                "-" if mde is None else f"±{mde:.4f}",
                "-" if test is None else f"{test['p_value']:.3g}",
            )  # fmt: skip
        yield table
        if task.get("mde_note"):
            yield "  " + escape(task["mde_note"])
        head = task["metrics"].get(task["headline"], {})
        if head.get("mcnemar") is not None:
            counts = head["mcnemar"]
            yield (
                f"  {task['headline']}: right only in {a} {counts['a_only']}, only in {b} "
                f"{counts['b_only']}, in both {counts['both']}, in neither {counts['neither']}"
            )
        elif (head.get("test") or {}).get("unit") == "rows":
            rows = head["test"]
            yield (
                f"  {task['headline']} by row (a row's repeats summed): more right in {a} "
                f"{rows['a_better']}, in {b} {rows['b_better']}, tied {rows['tied']}"
            )
        for name, key in ((a, "marks_a"), (b, "marks_b")):
            for mark in task.get(key) or []:
                yield f"  [yellow]{escape(mark['mark'])} in {name}[/]: {escape(mark['why'])}"
        counts = [f"failed in {a} {task['failed_a']}, in {b} {task['failed_b']}"]
        if task["only_a"] or task["only_b"]:
            counts.append(f"only in {a} {task['only_a']}, only in {b} {task['only_b']}")
        yield "  " + "; ".join(counts)
        line = censored_difference(task.get("censored"), (a, b))
        if line is not None:
            yield line
        loglik = task["loglik"]
        if loglik is not None:
            yield (
                f"  per-choice log-likelihood |{b} − {a}| over {loglik['n']}: p50 "
                f"{loglik['p50']:.3g}, p90 {loglik['p90']:.3g}, p99 {loglik['p99']:.3g}, max "
                f"{loglik['max']:.3g}"
                + (f" ({escape(loglik['max_at'])})" if loglik["max"] > 0 else "")
            )
        yield from judges_agreement(task.get("judges"), (a, b))
        yield (
            f"  samples whose {task['headline']} differs between the runs (flipped): "
            f"{task['flipped']}"
        )
        for flip in task["flips"][:flips]:
            yield (
                f"    {escape(flip['id'])}: {a} {flip['a']} (picked "
                f"{escape(shown(flip['prediction_a']))}), {b} {flip['b']} (picked "
                f"{escape(shown(flip['prediction_b']))}), gold {escape(shown(flip['gold']))}"
            )
        if task["flipped"] > min(flips, len(task["flips"])):
            yield f"    … {task['flipped'] - min(flips, len(task['flips']))} more (--format json)"
    for gone in result["unmatched"]:
        run = a if gone["run"] == "A" else b
        yield f"only in {run}: {escape(gone['model'])} / {escape(gone['task'])}"


def judges_agreement(judges: Mapping[str, Any] | None, names: tuple[str, str]) -> Iterable[str]:
    """The lines saying how far two judgments of the same answers agree (``agreement.py``)."""
    if not judges:
        return
    from .inert import markup as escape

    a, b = names
    yield (
        f"  judges: {a} {escape(str(judges['judge_a']))}, {b} {escape(str(judges['judge_b']))}; "
        f"unparsed verdicts: {a} {judges['unparsed_a']}, {b} {judges['unparsed_b']}"
    )
    ratings = judges.get("ratings")
    if ratings:
        rho = ratings["spearman"]
        yield (
            f"  judges' agreement over {ratings['n']} ratings both read: same "
            f"{ratings['same']:.0%}, within 1 point {ratings['within_1']:.0%}, mean |difference| "
            f"{ratings['mean_abs_diff']:.2f}, Spearman's rho "
            + ("-" if rho is None else f"{rho:.3f}")
            + f", Krippendorff's alpha (interval) {_maybe(ratings.get('alpha_interval'))}"
        )
    verdicts = judges.get("verdicts")
    if verdicts:
        kappa = verdicts["cohen_kappa"]
        yield (
            f"  judges' agreement over {verdicts['n']} verdicts both read: same "
            f"{verdicts['same']:.0%}, Cohen's kappa "
            + ("-" if kappa is None else f"{kappa:.3f}")
            + f", Krippendorff's alpha (nominal) {_maybe(verdicts.get('alpha_nominal'))}"
        )


def _maybe(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def censored_difference(censored: Mapping[str, Any] | None, names: tuple[str, str]) -> str | None:
    """A line when the runs' shares of censored answers differ (markup-safe: ``names`` are
    escaped already), else None."""
    if not censored or not censored.get("differ"):
        return None
    a, b = names
    shares = [
        f"{name} {c['share']:.1%} ({c['count']}/{c['of']})"
        for name, c in ((a, censored["a"]), (b, censored["b"]))
    ]
    return (
        f"  [yellow]censored answers differ[/]: {shares[0]}, {shares[1]}; the budget cut them "
        "before they answered, so part of the difference is the budget's (sieval report: the "
        "bounds)"
    )


def _caption(task: Mapping[str, Any], names: tuple[str, str]) -> str:
    """What the columns are: the paired subset's means, the interval, the test and the MDE."""
    a, b = names
    over = f"the {task['paired']} samples scored in both runs"
    if task.get("repeats"):
        over = f"the {task['paired']} samples ({task['rows']} rows) scored in both runs"
    lines = [
        f"{a}, {b}: each run's mean over {over} (a run's own report also counts the samples "
        "the other failed or lacks)",
        "* the headline metric; 95% CI: the paired difference's"
        + (", clustered by row (a row's repeats are not independent)" if task.get("repeats")
           else ""),
    ]  # fmt: skip
    tests = {(m.get("test") or {}).get("name") for m in task["metrics"].values()} - {None}
    if "sign-flip" in tests:
        lines.append("p: the sign-flip test on rows (exact; McNemar's on rows when one sample a "
                     "row), 0/1 metrics")  # fmt: skip
    elif "mcnemar" in tests:
        lines.append("p: McNemar's exact test on the samples, 0/1 metrics")
    mdes = [m["mde"] for m in task["metrics"].values() if m.get("mde")]
    if mdes:
        lines.append(
            f"MDE: the smallest difference detected with probability {mdes[0]['power']:g} "
            f"(α {mdes[0]['alpha']:g}, two-sided)"
        )
    return "\n".join(lines)


def render_serving_differences(
    serving: Iterable[Mapping[str, Any]], names: tuple[str, str]
) -> Iterable[str]:
    """Whether the two runs' servers computed the same numbers, before any score (markup-safe:
    ``names`` are escaped already)."""
    from .inert import markup as escape

    a, b = names
    for entry in serving:
        model = escape(str(entry["model_a"]))
        if not entry.get("compared"):
            yield f"serving ({model}): not compared: {escape(str(entry.get('said')))}"
        elif entry.get("same"):
            yield f"serving ({model}): the same engine, model and numerics in both runs"
        else:
            yield (
                f"[yellow]serving ({model}): the runs' numerics differ[/] "
                f"({escape(str(entry['said']))}), so every score difference below includes the "
                "server's:"
            )
            yield f"  {a}: {escape(str(entry.get('a')))}\n  {b}: {escape(str(entry.get('b')))}"
            for line in entry.get("changes") or []:
                yield f"  {escape(str(line))}"
