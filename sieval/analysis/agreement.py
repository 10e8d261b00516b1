"""How much two judgments of the same answers agree: how much of a score is the judge's.

Read from the judged records of two runs (a run and its ``sieval rejudge``, or two runs that
judged the same answers): each record's ``ratings`` (MT-Bench: one per turn, None for a parse
error) or ``verdicts`` (Arena-Hard: one label per game). Only the judgments both runs could read
are paired; the parse errors of each are counted beside.

- **Ratings** (scores on a scale): the share rated the same, the share within one point, the
  mean absolute difference, and Spearman's rank correlation (average ranks for ties; None when
  either side is constant).
- **Verdicts** (pairwise labels): each label read as the model's standing (``A>>B`` ... ``B>>A``,
  the aliases ``B<A`` and the like folded in), then Cohen's κ over those five classes:
  ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from each judge's own label shares (None when
  ``p_e`` is 1: both judges always said the same one thing).
- **Krippendorff's α** (``krippendorff_alpha``), for any number of judges and missing verdicts:
  interval α for ratings, nominal α for verdicts; beside the figures above for two judgments.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

from ..store.records import Record

__all__ = ["cohen_kappa", "judge_agreement", "krippendorff_alpha", "spearman"]

_STANDING = {"A>>B": "A>>B", "A>B": "A>B", "B<A": "A>B", "A=B": "A=B", "B=A": "A=B",
             "B>A": "B>A", "A<B": "B>A", "B>>A": "B>>A", "A<<B": "B>>A",
             "B<<A": "A>>B"}  # fmt: skip
"""Each label as the canonical one of its class."""


def cohen_kappa(xs: Sequence[Hashable], ys: Sequence[Hashable]) -> float | None:
    """Cohen's κ of two raters' labels of the same items (None when chance agreement is 1)."""
    n = len(xs)
    if n == 0 or n != len(ys):
        return None
    observed = sum(x == y for x, y in zip(xs, ys, strict=True)) / n
    shares_x, shares_y = Counter(xs), Counter(ys)
    expected = sum(shares_x[k] * shares_y.get(k, 0) for k in shares_x) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(
    units: Sequence[Sequence[Hashable | None]], metric: str = "nominal"
) -> float | None:
    """Krippendorff's α of ``units`` (each item's values, one a judge, None where a judge gave
    none), ``metric`` ``nominal`` or ``interval``, from the coincidence matrix (Krippendorff,
    "Computing Krippendorff's Alpha-Reliability", 2011); None when there is no disagreement to
    expect (every pairable value the same) or nothing to pair."""
    coincidences: defaultdict[tuple[Any, Any], float] = defaultdict(float)
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidences[(c, k)] += 1 / (m - 1)
    totals: defaultdict[Any, float] = defaultdict(float)
    for (c, _), weight in coincidences.items():
        totals[c] += weight
    n = sum(totals.values())

    def delta(c: Any, k: Any) -> float:
        if metric == "interval":
            return float((c - k) ** 2)
        return 0.0 if c == k else 1.0

    observed = sum(w * delta(c, k) for (c, k), w in coincidences.items())
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in totals for k in totals)
    if n <= 1 or expected == 0:
        return None
    return float(1 - (n - 1) * observed / expected)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's ρ (Pearson's correlation of the average ranks); None for a constant side."""
    if len(xs) < 2 or len(xs) != len(ys):
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return float(sxy / (sxx * syy) ** 0.5)


def _judge_of(records: Sequence[Record]) -> Any:
    for record in records:
        judge = record.channels.get("judge")
        if judge is not None:
            return judge.get("model")
    return None


def judge_agreement(pairs: Sequence[tuple[Record, Record]]) -> dict[str, Any] | None:
    """The agreement of two judgments of paired records, or None when they hold no judgment."""
    ratings: list[tuple[float, float]] = []
    verdicts: list[tuple[str, str]] = []
    unread = [0, 0]
    judged = False
    for a, b in pairs:
        ra, rb = a.channels.get("ratings"), b.channels.get("ratings")
        if isinstance(ra, list) and isinstance(rb, list) and len(ra) == len(rb):
            judged = True
            for x, y in zip(ra, rb, strict=True):
                unread[0] += x is None
                unread[1] += y is None
                if x is not None and y is not None:
                    ratings.append((float(x), float(y)))
        va, vb = a.channels.get("verdicts"), b.channels.get("verdicts")
        if isinstance(va, dict) and isinstance(vb, dict):
            judged = True
            for game in sorted(set(va) & set(vb)):
                x, y = va[game], vb[game]
                unread[0] += x is None
                unread[1] += y is None
                if x in _STANDING and y in _STANDING:
                    verdicts.append((_STANDING[x], _STANDING[y]))
    if not judged:
        return None
    out: dict[str, Any] = {
        "judge_a": _judge_of([a for a, _ in pairs]),
        "judge_b": _judge_of([b for _, b in pairs]),
        "unparsed_a": unread[0],
        "unparsed_b": unread[1],
    }
    if ratings:
        xs, ys = [x for x, _ in ratings], [y for _, y in ratings]
        out["ratings"] = {
            "n": len(ratings),
            "same": sum(x == y for x, y in ratings) / len(ratings),
            "within_1": sum(abs(x - y) <= 1 for x, y in ratings) / len(ratings),
            "mean_abs_diff": sum(abs(x - y) for x, y in ratings) / len(ratings),
            "spearman": spearman(xs, ys),
            "alpha_interval": krippendorff_alpha(ratings, "interval"),
        }
    if verdicts:
        xs_, ys_ = [x for x, _ in verdicts], [y for _, y in verdicts]
        out["verdicts"] = {
            "n": len(verdicts),
            "same": sum(x == y for x, y in verdicts) / len(verdicts),
            "cohen_kappa": cohen_kappa(xs_, ys_),
            "alpha_nominal": krippendorff_alpha(verdicts),
        }
    return out
