"""How many samples a comparison of two runs needs to detect a difference on a task, or the
smallest difference n samples detect: ``sieval power`` (the statistics: ``scoring/power.py``).

What the answer depends on, and where each comes from:

- how the per-sample differences vary: for a 0/1 metric the discordance ψ (the share of samples
  the runs score differently) given, or read from a previous pair of runs (``compare_runs``), or,
  from a baseline accuracy alone, the discordance of independent runs (an upper bound: runs of
  one model or related models agree more); for another metric the SD of the differences, given
  or read from a pair;
- the task: its dataset's size (an n beyond it cannot be run), and for a task whose samples
  cluster (``cluster_by = "group"``: MMLU's subjects) each sample's group in the task's order, so
  that the first n samples' cluster sizes give the design effect at n;
- the intra-cluster correlation (ICC) of the differences: given, or the one a pair of runs
  showed (negative estimates taken as 0), or assumed 0 and said so;
- repeats: when each row is scored k times (the ``repeats`` option; ``--repeats``, or what a
  pair of runs holds), the row is the unit: n counts rows, set against the task's rows, and the
  ICC is the correlation of the differences among a row's repeats (the design effect of repeats
  1 + (k − 1)·ICC).

With ``--from``, the answer also says what differs between the two runs' inputs (as ``sieval
compare`` does), since the spread it reads is that pair's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..scoring.power import (
    ALPHA,
    EXACT_LIMIT,
    TARGET,
    Design,
    design_effect,
    detectable_difference,
    discordance_range,
    independent_discordance,
    power_at,
    samples_needed,
)
from ..tasks.base import TaskConfig
from ..tasks.registry import get_task

__all__ = ["Question", "answer"]


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """What ``sieval power`` was asked; its flags, one field each."""

    task: str | None = None
    metric: str | None = None
    delta: float | None = None
    """The difference to detect (either sign): asks for the n needed."""
    n: int | None = None
    """A number of samples: asks for the smallest difference they detect."""
    baseline: float | None = None
    discordance: float | None = None
    sd: float | None = None
    icc: float | None = None
    runs: tuple[Path, Path] | None = None
    """A previous pair of runs whose paired data sets the discordance or SD (and ICC)."""
    model: str | None = None
    """With ``runs`` holding several models: which one's comparison."""
    repeats: int | None = None
    """Samples a row (each row scored that many times); None: 1, or what ``runs`` hold."""
    alpha: float = ALPHA
    power: float = TARGET
    data_dir: Path | None = None


def answer(q: Question) -> dict[str, Any]:
    """The answer as plain data (``sieval power --format json``); ``ConfigError`` names the flag
    to change when the question cannot be answered."""
    _check(q)
    out: dict[str, Any] = {
        "task": q.task, "metric": q.metric, "alpha": q.alpha, "power": q.power,
        "delta": q.delta, "n": q.n, "baseline": q.baseline, "runs": None, "notes": [],
    }  # fmt: skip
    observed = _observed(q, out) if q.runs is not None else None
    data = _dataset(out, q.data_dir) if out["task"] is not None else None
    design = _design(q, out, observed, data)
    out["method"] = design.method
    out["unit"] = "rows" if design.method == "rows" else "samples"
    out["method_text"] = _method_text(design, out)
    _figures(q, out, design, data)
    return out


# --- inputs --------------------------------------------------------------------------------


def _check(q: Question) -> None:
    for flag, value in (("--alpha", q.alpha), ("--power", q.power)):
        if not 0 < value < 1:
            raise ConfigError(f"{flag} {value:g}: give a probability between 0 and 1", path=flag)
    if q.delta is None and q.n is None and q.runs is None:
        raise ConfigError(
            "say what to compute: --delta D for the samples needed to detect D, or --n N for "
            "the smallest difference N samples detect (or --from RUN_A RUN_B for that pair's)",
            path="--delta",
        )
    if q.delta is not None and q.delta == 0:
        raise ConfigError("--delta 0: give the difference to detect, e.g. 0.02", path="--delta")
    if q.n is not None and q.n < 1:
        raise ConfigError(f"--n {q.n}: give a number of samples, at least 1", path="--n")
    if q.repeats is not None and q.repeats < 1:
        raise ConfigError(f"--repeats {q.repeats}: give the samples a row, at least 1",
                          path="--repeats")  # fmt: skip
    if q.runs is not None:
        given = [f for f, v in (("--baseline", q.baseline), ("--discordance", q.discordance),
                                ("--sd", q.sd)) if v is not None]  # fmt: skip
        if given:
            raise ConfigError(
                f"--from reads how the differences vary from the runs; drop {', '.join(given)}",
                path=given[0],
            )
    elif q.sd is not None and (q.baseline is not None or q.discordance is not None):
        raise ConfigError(
            "--sd is for a metric that is not 0/1; --baseline and --discordance are for 0/1 "
            "metrics: give one kind",
            path="--sd",
        )
    elif q.sd is None and q.discordance is None and q.baseline is None:
        raise ConfigError(
            "say how the two runs' scores differ: --baseline P (run A's accuracy; the runs "
            "taken as independent), --discordance X (the share of samples they score "
            "differently), --sd S for a metric that is not 0/1, or --from RUN_A RUN_B",
            path="--baseline",
        )
    if q.icc is not None and not 0 <= q.icc <= 1:  # 1: repeats that always agree (greedy)
        raise ConfigError(f"--icc {q.icc:g}: give a correlation from 0 to 1", path="--icc")
    if q.discordance is not None and not 0 < q.discordance <= 1:
        raise ConfigError(
            f"--discordance {q.discordance:g}: give the share of samples the runs score "
            "differently, above 0 and at most 1",
            path="--discordance",
        )
    if q.sd is not None and not q.sd > 0:
        raise ConfigError(f"--sd {q.sd:g}: give a standard deviation above 0", path="--sd")


def _observed(q: Question, out: dict[str, Any]) -> dict[str, Any]:
    """The metric's paired data from the runs' comparison (its ``mde`` entry)."""
    from .compare import compare_runs

    assert q.runs is not None
    result = compare_runs(*q.runs, power=q.power, alpha=q.alpha)
    units = [
        t for t in result["tasks"]
        if (q.task is None or t["task"] == q.task) and (q.model is None or t["model_a"] == q.model)
    ]  # fmt: skip
    if len(units) != 1:
        held = ", ".join(f"{t['model_a']}/{t['task']}" for t in result["tasks"]) or "none"
        fix = "choose one with --task (and --model)" if units else "name one the runs hold"
        raise ConfigError(
            f"the runs' comparison holds {held}: {fix}", path="--task" if units else "--from"
        )
    unit = units[0]
    metric = q.metric or unit["headline"]
    if metric not in unit["metrics"]:
        raise ConfigError(
            f"--metric {metric!r}: the runs' {unit['task']} has {', '.join(unit['metrics'])}",
            path="--metric",
        )
    entry = unit["metrics"][metric]
    out.update(task=unit["task"], metric=metric, baseline=entry["a"])
    out["runs"] = {
        "a": str(q.runs[0]), "b": str(q.runs[1]), "model": unit["model_a"],
        "paired": unit["paired"], "rows": unit.get("rows"), "repeats": entry["mde"]["repeats"],
        "diff": entry["diff"], "mde": entry["mde"]["value"], "mde_why": entry["mde"]["why"],
        "changes": result["changes"], "serving": result["serving"],
    }  # fmt: skip
    observed: dict[str, Any] = entry["mde"]
    return observed


def _dataset(out: dict[str, Any], data_dir: Path | None) -> dict[str, Any]:
    """The task's dataset: its size and, for a clustered task, each sample's group in order."""
    from ..data.source import find_data_dir

    task = get_task(out["task"])
    out["metric"] = out["metric"] or task.headline
    clustered = getattr(task, "cluster_by", None) == "group"
    where = find_data_dir(data_dir)
    try:
        samples = list(task.load(where, TaskConfig(name=task.name)))
    except ConfigError as exc:
        if clustered:  # the clusters' sizes are the answer's input
            raise ConfigError(
                f"{task.name}'s samples cluster by group, and their sizes come from its data: "
                f"{exc.message}",
                path="--data-dir",
            ) from exc
        out["notes"].append(f"the dataset's size is unknown: {exc.message}")
        return {"size": None, "groups": None}
    groups = tuple(s.group or "" for s in samples) if clustered else None
    out["dataset"] = {"size": len(samples), "clusters": len(set(groups)) if groups else None}
    if groups:  # what a group is, as the task's per-group breakdown names it: MMLU's subject
        names = [k[3:] for k in getattr(getattr(task, "spec", None), "breakdowns", {})]
        out["dataset"]["cluster_name"] = next((k for k in names if k), "group")
    return {"size": len(samples), "groups": groups}


def _design(
    q: Question, out: dict[str, Any], observed: dict[str, Any] | None, data: dict[str, Any] | None
) -> Design:
    groups = data["groups"] if data else None
    notes: list[str] = out["notes"]
    repeats = q.repeats or (observed or {}).get("repeats") or 1
    if observed is not None:
        psi, sd = observed["discordance"], observed["sd"]
        source = f"from the runs ({out['runs']['paired']} pairs)"
        if observed.get("repeats"):
            source = (f"from the runs ({out['runs']['paired']} pairs: {observed['n']} rows of "
                      f"{observed['repeats']} repeats)")  # fmt: skip
    else:
        psi, sd, source = q.discordance, q.sd, "given (--discordance)"
        if psi is None and sd is None:
            assert q.baseline is not None
            for name, p in (("run A's", q.baseline), ("run B's", q.baseline + (q.delta or 0))):
                if not 0 <= p <= 1:
                    raise ConfigError(
                        f"--baseline {q.baseline:g} with --delta {q.delta or 0:g}: {name} "
                        f"accuracy would be {p:g}; accuracies lie between 0 and 1",
                        path="--baseline",
                    )
            psi = independent_discordance(q.baseline, q.delta or 0.0)
            source = (
                "as if the runs' answers were independent (from --baseline"
                + ("" if q.delta else ", at equal accuracies")
                + "): two runs of one "
                "model or of related models disagree on fewer samples, so this overstates n; "
                "--discordance or --from give the real one"
            )
        elif sd is not None:
            source = "given (--sd)"
    if psi is not None and q.baseline is not None and q.delta is not None and observed is None:
        low, high = discordance_range(q.baseline, q.delta)
        if not low <= psi <= high + 1e-12:
            raise ConfigError(
                f"--discordance {psi:g} is impossible for accuracies {q.baseline:g} and "
                f"{q.baseline + q.delta:g}: it lies between {low:g} and {high:g}",
                path="--discordance",
            )
    if psi is None and sd is None:  # a pair's metric of one sample
        why = observed["why"] if observed else "none given"
        raise ConfigError(f"the spread of {out['metric']}'s differences is unknown: {why}",
                          path="--from")  # fmt: skip
    out.update(discordance=psi, sd=sd, spread_from=source)
    icc = 0.0
    out["repeats"] = repeats if repeats > 1 else None
    if groups is not None and repeats > 1:
        raise ConfigError(
            f"{out['task']} clusters its samples by group, and the power of repeats within "
            "groups is not modelled: drop --repeats",
            path="--repeats",
        )
    if groups is None and repeats == 1:
        if q.icc is not None:
            notes.append(f"--icc is ignored: {out['task'] or 'no task'} does not cluster and "
                         "a row is scored once (--repeats)")  # fmt: skip
        out["icc"] = None
    else:
        within = "a row's repeats" if repeats > 1 else "a group"
        if q.icc is not None:
            icc, out["icc_from"] = q.icc, "given (--icc)"
        elif observed is not None and observed["icc"] is not None:
            icc = min(1.0, max(0.0, observed["icc"]))
            if observed["icc"] < 0:
                out["icc_from"] = (f"from the runs ({observed['icc']:.4g}, taken as 0: a "
                                   "negative estimate is noise)")  # fmt: skip
            elif observed["icc"] > 1:
                out["icc_from"] = (f"from the runs ({observed['icc']:.4g}, taken as 1: a "
                                   "correlation above 1 is noise)")  # fmt: skip
            else:
                out["icc_from"] = (f"from the runs (the correlation of the differences within "
                                   f"{within}; an estimate from few samples is noisy)")  # fmt: skip
        else:
            out["icc_from"] = (
                f"assumed 0 (not given): differences within {within} that correlate need more "
                "samples, so this n is a lower bound; --icc or --from give one"
            )
        out["icc"] = icc
    return Design(discordance=psi, sd=sd, clusters=groups, icc=icc, repeats=repeats)


# --- figures -------------------------------------------------------------------------------


def _figures(q: Question, out: dict[str, Any], design: Design, data: dict[str, Any] | None) -> None:
    size = data["size"] if data else None
    runs = out["runs"]
    paired = None if runs is None else (runs["rows"] if runs["repeats"] else runs["paired"])
    n = q.n if q.n is not None else (paired if q.delta is None else None)
    if design.clusters is not None and n is not None and n > len(design.clusters):
        raise ConfigError(
            f"--n {n}: {out['task']} has {len(design.clusters)} samples, and a clustered task's "
            "design effect needs the clusters of the samples that would be run",
            path="--n",
        )
    if q.delta is not None:
        _check_delta(design, q.delta)
        needed = samples_needed(design, q.delta, q.power, q.alpha)
        out["needed"] = needed
        out["fits"] = needed is not None and (size is None or needed <= size)
        if not out["fits"] and size:
            out["at_dataset"] = {
                "n": size, "power": power_at(design, size, q.delta, q.alpha),
                "mde": detectable_difference(design, size, q.power, q.alpha),
            }  # fmt: skip
        if needed is not None and design.clusters is not None:
            out["design_effect"] = _deff(design, needed)
        elif design.method == "rows":
            out["design_effect"] = _deff(design, needed or 1)
    if n is not None:
        out["n"] = n
        out["mde"] = detectable_difference(design, n, q.power, q.alpha)
        if out["mde"] is None:
            out["mde_why"] = (
                runs["mde_why"] if runs is not None and n == paired and runs["mde_why"]
                else f"too few samples differ for the test to reach power {q.power:g}"
            )  # fmt: skip
        if q.delta is not None:
            out["power_at_n"] = power_at(design, n, q.delta, q.alpha)
        if size is not None and n > size:
            unit = "rows" if design.method == "rows" else "samples"
            out["notes"].append(f"n = {n} is more than the {size} {unit} the task's data holds")
        if design.clusters is not None or design.method == "rows":
            out["design_effect_at_n"] = _deff(design, n)


def _check_delta(design: Design, delta: float) -> None:
    psi = design.discordance
    if psi is not None and abs(delta) > psi:
        raise ConfigError(
            f"--delta {delta:g} is more than the discordance {psi:g}: runs that score a share "
            f"{psi:g} of the samples differently differ by at most {psi:g}; detecting "
            f"{abs(delta):g} takes runs that disagree more (--discordance)",
            path="--delta",
        )


def _deff(design: Design, n: int) -> float:
    """The design effect at n: of the clusters among the first n samples, or of the repeats
    (1 + (k − 1)·ICC, whatever n)."""
    if design.clusters is None:
        return design_effect([design.repeats], design.icc)
    return design_effect(Counter(design.clusters[:n]).values(), design.icc)


def _method_text(design: Design, out: dict[str, Any]) -> str:
    if design.method == "mcnemar":
        return (
            "paired: McNemar's exact test of the two runs' 0/1 scores on the same samples (as "
            "sieval compare reports it), its power summed exactly over the number of discordant "
            f"samples (Connor's normal approximation beyond {EXACT_LIMIT:,} of them); samples "
            "independent"
        )
    if design.method == "rows":
        test = (
            "the sign-flip test on rows (as sieval compare reports it for repeats), normal "
            "approximation; 0/1 scores, SD² = ψ − Δ²"
            if design.discordance is not None
            else "the z-test of the row-clustered interval sieval compare prints; SD of the "
            "differences"
        )
        return (
            f"paired by row, each row scored {design.repeats} times: {test}; a row's mean "
            f"difference has variance SD²·(1 + ({design.repeats} − 1)·ICC)/{design.repeats} "
            "(the design effect of repeats), n counts rows"
        )
    if design.method == "paired":
        return (
            "paired: the z-test of the mean per-sample difference (the 95% interval sieval "
            "compare prints), normal approximation; samples independent"
        )
    kind = "0/1 scores, SD² = ψ − Δ²" if design.discordance is not None else "SD of the differences"
    name, count = out["dataset"]["cluster_name"], out["dataset"]["clusters"]
    return (
        f"paired, clustered by {name} ({count} in the task's data): the cluster-robust (CR1) "
        "interval sieval compare prints, normal approximation with the design effect "
        f"1 + (Σ m_c²/n − 1)·ICC, m_c the size of each {name} among the first n samples in the "
        f"task's order ({kind})"
    )
