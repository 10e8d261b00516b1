"""Two runs of the same tasks, sample by sample: what changed when the server, the dialect, the
quantisation or the prompt did.

Samples are matched by id within each task. Only samples scored in both runs are paired; those
failed or missing in either are counted, never scored. Per metric: both runs' means over the
paired samples (the subset scored in both, not each run's own headline when a sample failed in
one), the paired difference ``B - A`` with its standard error and 95% interval (clustered like
the task's own intervals: by group where the task clusters, by row when the samples are repeats
of their rows, ``<id>#r<i>``), for 0/1 metrics a test (``test``): McNemar's exact test on the
samples, or, when the samples are repeats, the sign-flip test on the rows
(``uncertainty.SignFlip``: a row counts once however many repeats it has), and the minimum
detectable difference (MDE): the smallest true difference this comparison's test detects with
80% probability at α 0.05 two-sided, from its n (rows, for repeats) and how its differences
varied (``scoring/power.py``). The flipped samples are those whose headline metric differs.
For scoring tasks, every per-choice log-likelihood both runs recorded is compared: the
distribution of ``|B - A|`` and where it is largest.

Models are paired by label; when each run has one model, those two are paired whatever their
labels (the usual case: the same model behind a changed server). ``changes`` lists what differs
between the runs' inputs (task configs, data checksums, model configs, versions), one line each,
as ``--resume`` names them; ``serving`` whether their serving fingerprints (engine, model,
numerics) agree, said before any score. Per generation task, ``censored``: each run's share of
answers the token budget cut before they answered, and whether the shares differ.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UnsetType

from ..errors import ConfigError
from ..results.document import UnitResult
from ..results.explain import answer_label
from ..results.marks import result_marks
from ..results.snapshot import snapshot
from ..results.view import Unit, outcome, units
from ..scoring.power import ALPHA, TARGET, Design, detectable_difference, icc_from_design_effect
from ..scoring.uncertainty import (
    UNIT,
    Bounds,
    Estimate,
    is_binary,
    json_number,
    mcnemar,
    paired_difference,
    quantiles,
    sign_flip,
)
from ..serving import compare as compare_fingerprints
from ..serving.fingerprint import plainly
from ..serving.fingerprint_history import stored_fingerprints
from ..store.identity import changed_inputs
from ..store.records import Record
from ..store.rundir import read_run_json
from ..tasks.families.checked import item_of
from ..tasks.registry import TASKS
from .agreement import judge_agreement

__all__ = [
    "FLIPS_SHOWN",
    "censored_shares",
    "compare_runs",
    "detectable",
    "loglik_pairs",
    "mde_note",
    "serving_differences",
]

FLIPS_SHOWN = 50
"""Flipped samples listed per task in the comparison (all are counted)."""


def compare_runs(
    run_a: Path, run_b: Path, *, power: float = TARGET, alpha: float = ALPHA
) -> dict[str, Any]:
    """The comparison as plain data; each metric's MDE is at ``power``, two-sided ``alpha``."""
    report_a, report_b = snapshot(run_a), snapshot(run_b)  # a partial run: what it recorded
    units_a = {(u.result.model, u.result.task): u for u in units(run_a, report_a)}
    units_b = {(u.result.model, u.result.task): u for u in units(run_b, report_b)}
    models_a = sorted({m for m, _ in units_a})
    models_b = sorted({m for m, _ in units_b})
    if len(models_a) == 1 and len(models_b) == 1:
        pairing = {models_a[0]: models_b[0]}
    else:
        pairing = {m: m for m in models_a if m in models_b}
    if not pairing:
        raise ConfigError(
            f"the runs share no model label (the first has {', '.join(models_a)}; the second "
            f"{', '.join(models_b)})",
            path="compare",
        )
    tasks = []
    unmatched = []
    across: set[tuple[str, str]] = set()  # B's units paired with another task of A's
    for (model, task), unit_a in units_a.items():
        unit_b = units_b.get((pairing.get(model, ""), task))
        other = _other_protocol(task)
        if unit_b is None and other and (model, other) not in units_a:
            unit_b = units_b.get((pairing.get(model, ""), other))
            if unit_b is not None:
                across.add((pairing[model], other))
        if unit_b is None:
            unmatched.append({"run": "A", "model": model, "task": task})
            continue
        compared = _compare_unit(unit_a, unit_b, power, alpha)
        if unit_b.result.task != task:  # the same samples under two protocols (FC, Prompt)
            compared["task"] = f"{task} vs {unit_b.result.task}"
        compared["mde_note"] = mde_note(compared)
        compared["censored"] = censored_shares(unit_a.result, unit_b.result)
        # what each run's headline is marked with (partial, exposed): a difference between two
        # marked headlines carries their causes
        compared["marks_a"] = msgspec.to_builtins(result_marks(report_a, unit_a.result))
        compared["marks_b"] = msgspec.to_builtins(result_marks(report_b, unit_b.result))
        tasks.append(compared)
    matched_b = {(pairing[m], t) for m, t in units_a if m in pairing} | across
    unmatched += [
        {"run": "B", "model": m, "task": t} for m, t in units_b if (m, t) not in matched_b
    ]
    return {
        "a": {"dir": str(run_a), "identity": report_a.run.identity},
        "b": {"dir": str(run_b), "identity": report_b.run.identity},
        "serving": serving_differences(run_a, run_b, pairing),
        "changes": _changes(report_a.run.inputs, report_b.run.inputs, pairing),
        "tasks": tasks,
        "unmatched": unmatched,
    }


def _other_protocol(task: str) -> str | None:
    """The task that runs ``task``'s samples under another protocol (``Task.pairs_with``)."""
    found = TASKS.get(task)
    return getattr(found, "pairs_with", None) if found is not None else None


def _changes(a: dict[str, Any], b: dict[str, Any], pairing: dict[str, str]) -> list[str]:
    """What differs between two runs' inputs, over the tasks both ran and the paired models (B's
    model under A's label, so a renamed model shows only what really changed)."""
    tasks_a, tasks_b = a.get("tasks") or {}, b.get("tasks") or {}
    shared = tasks_a.keys() & tasks_b.keys()
    models_a, models_b = a.get("models") or {}, b.get("models") or {}
    left = {**a, "tasks": {t: tasks_a[t] for t in shared},
            "models": {m: models_a.get(m) for m in pairing}}  # fmt: skip
    right = {**b, "tasks": {t: tasks_b[t] for t in shared},
             "models": {m: models_b.get(pairing[m]) for m in pairing}}  # fmt: skip
    return changed_inputs(left, right)


def serving_differences(run_a: Path, run_b: Path, pairing: dict[str, str]) -> list[dict[str, Any]]:
    """Per paired model, whether the two runs' serving fingerprints (``run.json``) say the same
    engine, model and numerics; the lines that differ and why, in a user's words. Said before any
    score, since a difference in numerics is in every score difference."""
    fingerprints = []
    for run in (run_a, run_b):
        try:
            fingerprints.append(stored_fingerprints(read_run_json(run)))
        except ConfigError:
            fingerprints.append({})
    out = []
    for model_a, model_b in pairing.items():
        kept_a, kept_b = fingerprints[0].get(model_a), fingerprints[1].get(model_b)
        entry: dict[str, Any] = {"model_a": model_a, "model_b": model_b}
        if not kept_a or not kept_b:
            missing = "the first" if not kept_a else "the second"
            entry.update(compared=False, said=f"{missing} run holds no serving fingerprint")
        else:
            lines = compare_fingerprints(kept_a[-1], kept_b[-1])
            entry.update(
                compared=True,
                same=not lines,
                changes=lines,
                said=plainly(lines) if lines else "",
                a=kept_a[-1].headline(),
                b=kept_b[-1].headline(),
                spans_a=len(kept_a),
                spans_b=len(kept_b),
            )
        out.append(entry)
    return out


def _compare_unit(unit_a: Unit, unit_b: Unit, power: float, alpha: float) -> dict[str, Any]:
    headline = unit_a.result.headline
    by_id_b = {r.sample_id: r for r in unit_b.records}
    pairs = [
        (a, by_id_b[a.sample_id])
        for a in unit_a.records
        if a.sample_id in by_id_b and a.status == "ok" and by_id_b[a.sample_id].status == "ok"
    ]
    ids_a = {r.sample_id for r in unit_a.records}
    task = TASKS.get(unit_a.result.task)
    ranges: dict[str, Bounds] = dict(getattr(task, "metric_ranges", None) or {})
    rows = [item_of(a.sample_id) for a, _ in pairs]
    repeated = any(row != a.sample_id for row, (a, _) in zip(rows, pairs, strict=True))
    clusters: list[str] | None = None
    if getattr(task, "cluster_by", None) == "group":
        clusters = [a.group or "" for a, _ in pairs]
    elif repeated:  # a row's repeats are not independent pairs
        clusters = rows
    metrics = {}
    names = [k for k in (pairs[0][0].metrics if pairs else {}) if _in_all(k, pairs)]
    for name in names:
        xs = [a.metrics[name] for a, _ in pairs]
        ys = [b.metrics[name] for _, b in pairs]
        binary = is_binary(xs) and is_binary(ys) and ranges.get(name, UNIT) == UNIT
        bounds = UNIT if binary else ranges.get(name)
        diff = paired_difference(xs, ys, clusters, bounds=bounds)
        entry: dict[str, Any] = {
            "a": sum(xs) / len(xs),
            "b": sum(ys) / len(ys),
            "diff": diff.value,
            "se": json_number(diff.se),
            "ci": [json_number(diff.ci[0]), json_number(diff.ci[1])],
            "estimator": diff.estimator,
            "mcnemar": None,
            "test": None,
            "mde": detectable(
                xs, ys, clusters, diff, power, alpha, rows=rows if repeated else None
            ),
        }
        if binary and repeated:
            flip = sign_flip(xs, ys, rows)
            entry["test"] = {
                "name": "sign-flip", "unit": "rows", "n": flip.rows, "method": flip.method,
                "p_value": flip.p_value, "b_better": flip.b_better, "a_better": flip.a_better,
                "tied": flip.tied,
            }  # fmt: skip
        elif binary:
            test = mcnemar(xs, ys)
            entry["mcnemar"] = {
                "b_only": test.b_only, "a_only": test.a_only, "both": test.both,
                "neither": test.neither, "p_value": test.p_value,
            }  # fmt: skip
            entry["test"] = {
                "name": "mcnemar", "unit": "samples", "n": len(xs), "method": "exact",
                "p_value": test.p_value, "b_better": test.b_only, "a_better": test.a_only,
                "tied": test.both + test.neither,
            }  # fmt: skip
        metrics[name] = entry
    flips = [
        {
            "id": a.sample_id,
            "a": outcome(a, headline),
            "b": outcome(b, headline),
            "prediction_a": answer_label(a.sample, a.prediction),
            "prediction_b": answer_label(b.sample, b.prediction),
            "gold": answer_label(a.sample, a.gold),
        }
        for a, b in pairs
        if a.metrics.get(headline) != b.metrics.get(headline)
    ]
    diffs = [(abs(y - x), where) for where, x, y in loglik_pairs(pairs)]
    return {
        "model_a": unit_a.result.model,
        "model_b": unit_b.result.model,
        "task": unit_a.result.task,
        "headline": headline,
        "paired": len(pairs),
        "rows": len(set(rows)),
        "repeats": repeated,
        "failed_a": sum(r.status != "ok" for r in unit_a.records),
        "failed_b": sum(r.status != "ok" for r in unit_b.records),
        "only_a": len(ids_a - set(by_id_b)),
        "only_b": len(set(by_id_b) - ids_a),
        "metrics": metrics,
        "flipped": len(flips),
        "flips": flips[:FLIPS_SHOWN],
        "loglik": _distribution(diffs),
        "judges": judge_agreement(pairs),
    }


def censored_shares(a: UnitResult, b: UnitResult) -> dict[str, Any] | None:
    """Each run's share of censored answers (``report.json``'s ``censored``: the token budget cut
    them before they answered) and whether they differ: a difference in budget cuts is in the
    headline's difference. None when either run does not count them."""
    ca, cb = a.censored, b.censored
    if isinstance(ca, UnsetType) or isinstance(cb, UnsetType):
        return None
    return {
        "a": {"count": ca.count, "of": ca.of, "share": ca.share},
        "b": {"count": cb.count, "of": cb.of, "share": cb.share},
        "differ": ca.share != cb.share,
    }


def mde_note(task: Mapping[str, Any]) -> str | None:
    """What the headline's MDE means for this comparison (``task`` as ``compare_runs`` gives
    it): said when the observed difference is below it, or when there is none; None when the
    difference is larger."""
    headline = task["headline"]
    metric = task["metrics"].get(headline) or {}
    mde = metric.get("mde")
    if not mde:
        return None
    if mde["value"] is None:
        return f"{headline}: no minimum detectable difference: {mde['why']}"
    if abs(metric["diff"]) >= mde["value"]:
        return None
    if mde["method"] == "mcnemar":
        how = f"McNemar's exact test, {mde['discordance']:.1%} of {mde['n']} pairs discordant"
    elif mde["method"] == "rows":
        test = "the sign-flip test" if mde["discordance"] is not None else "the row interval"
        how = (
            f"{test} on {mde['n']} rows of {mde['repeats']} repeats, design effect of the "
            f"repeats {mde['design_effect']:.2f}"
        )
    elif mde["method"] == "clustered":
        how = f"the clustered interval, design effect {mde['design_effect']:.2f}"
    else:
        how = f"the paired interval, SD of the differences {mde['sd']:.3g}"
    return (
        f"{headline}: this comparison could not have detected a difference smaller than "
        f"{mde['value']:.4f} (found with probability {mde['power']:g} at α {mde['alpha']:g}, "
        f"two-sided; {how}); the observed {metric['diff']:+.4f} is below it, so it is no "
        "evidence that the runs are equal"
    )


def detectable(
    xs: Sequence[float],
    ys: Sequence[float],
    clusters: Sequence[str] | None,
    diff: Estimate,
    power: float = TARGET,
    alpha: float = ALPHA,
    rows: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The smallest true difference this comparison detects with probability ``power`` by the
    test it reports: McNemar's exact test for a 0/1 metric over the observed discordance, else
    the paired interval over the observed SD of the differences; clustered, with the design
    effect the clusters gave (the CR1 variance over the independent one, ``diff`` being the
    clustered estimate). With ``rows`` (each sample's row, the samples being repeats, ``diff``
    clustered by them) n counts rows and the test is the one on rows (``Design.method``
    ``"rows"``), with the design effect of the repeats. ``value`` is None, and ``why`` says why,
    when no difference can be."""
    n = len(xs)
    binary = is_binary(xs) and is_binary(ys)
    out: dict[str, Any] = {
        "value": None, "power": power, "alpha": alpha, "method": None, "n": n,
        "discordance": None, "sd": None, "design_effect": None, "icc": None, "why": None,
        "repeats": None, "samples": n,
    }  # fmt: skip
    diffs = [y - x for x, y in zip(xs, ys, strict=True)]
    if binary:
        out["discordance"] = sum(d != 0 for d in diffs) / n
    elif n < 2:
        out["why"] = "one pair: how the differences vary is unknown"
        return out
    else:
        mean = math.fsum(diffs) / n
        out["sd"] = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1))
    grouped = None
    repeats = 1
    if clusters is not None and (diff.clusters or 0) > 1:
        iid = paired_difference(xs, ys)
        deff = (diff.se / iid.se) ** 2 if iid.se > 0 else 1.0
        out["design_effect"] = deff
        sizes = Counter(rows if rows is not None else clusters).values()
        out["icc"] = icc_from_design_effect(deff, sizes)
        if rows is not None:
            out["n"] = len(sizes)
            repeats = out["repeats"] = max(1, round(n / len(sizes)))
        else:
            grouped = tuple(clusters)
    design = Design(discordance=out["discordance"], sd=out["sd"], clusters=grouped,
                    icc=out["icc"] or 0.0, repeats=repeats)  # fmt: skip
    out["method"] = design.method
    value = detectable_difference(design, out["n"], power, alpha)
    test = {"mcnemar": "McNemar's test", "rows": f"the sign-flip test on {out['n']} rows"}.get(
        design.method, "the clustered interval"
    )
    if value is not None:
        out["value"] = value
    elif binary and out["discordance"] == 0:
        out["why"] = (
            "the runs score every sample the same: with no discordant samples there is no "
            "variation to size a difference by"
        )
    elif binary:
        out["why"] = (
            f"{sum(d != 0 for d in diffs)} discordant samples are too few for {test} to detect "
            f"any difference with probability {power:g}"
        )
    else:
        out["why"] = "the differences do not vary: every sample differs by the same amount"
    return out


def loglik_pairs(pairs: list[tuple[Record, Record]]) -> Iterator[tuple[str, float, float]]:
    """Each per-choice log-likelihood both records hold, as ``(where, a, b)``: the scored and
    the unconditional continuations of PPL tasks, the letters of CLP tasks."""
    for a, b in pairs:
        for channel in ("choices", "unconditional"):
            ca, cb = a.channels.get(channel), b.channels.get(channel)
            if isinstance(ca, list) and isinstance(cb, list) and len(ca) == len(cb):
                for i, (x, y) in enumerate(zip(ca, cb, strict=True)):
                    lx, ly = x.get("logprob_sum"), y.get("logprob_sum")
                    if isinstance(lx, int | float) and isinstance(ly, int | float):
                        yield f"{a.sample_id} {channel}[{i}]", float(lx), float(ly)
        la, lb = a.channels.get("letter_logprobs"), b.channels.get("letter_logprobs")
        if isinstance(la, dict) and isinstance(lb, dict):
            for letter in la.keys() & lb.keys():
                yield f"{a.sample_id} letter {letter}", float(la[letter]), float(lb[letter])


def _distribution(diffs: list[tuple[float, str]]) -> dict[str, Any] | None:
    if not diffs:
        return None
    worst = max(diffs, key=lambda d: d[0])
    return {"n": len(diffs), **quantiles([d for d, _ in diffs]), "max_at": worst[1]}


def _in_all(name: str, pairs: list[tuple[Record, Record]]) -> bool:
    return all(name in a.metrics and name in b.metrics for a, b in pairs)
