"""Uncertainty of a report's numbers: the standard error and confidence interval of a mean, of a
paired difference between two runs, and McNemar's exact test on two runs' 0/1 scores.

The clustered standard error follows Evan Miller, "Adding Error Bars to Evals: A Statistical
Approach to Language Model Evaluations" (2024), https://arxiv.org/abs/2411.00640: questions that
share a passage or a subject are not independent, and treating them as such understates the
error.

Every ``Estimate`` names the estimator that produced it in ``estimator``:

- ``"wilson"``: the mean of 0/1 values with independent samples; the interval is Wilson's.
- ``"clt"``: any other mean or a paired difference with independent samples; mean ± z·se.
- ``"clustered(cr1, C clusters)"``: the cluster-robust (CR1) standard error over C clusters;
  mean ± z·se.
- ``"wilson (1 cluster: iid fallback)"`` / ``"clt (1 cluster: iid fallback)"``: clusters were
  given but there was only one, so the clustered error cannot be estimated and the samples were
  treated as independent.
- ``"none (no values)"``: nothing to estimate; every number is nan.

Pure functions over plain sequences of floats: ``math`` and ``statistics.NormalDist`` only (and
msgspec for the result Structs).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from statistics import NormalDist

import msgspec

__all__ = [
    "Estimate",
    "McNemar",
    "is_binary",
    "json_number",
    "mcnemar",
    "mean_estimate",
    "paired_difference",
    "quantiles",
]

NAN = math.nan

# Up to this many discordant pairs the McNemar tail is summed in exact integers (about 0.5 s at
# the limit); beyond it, in floating point from log-space (see _half_binomial_cdf_log).
_EXACT_LIMIT = 100_000


class Estimate(msgspec.Struct, frozen=True, kw_only=True):
    """A point estimate with its standard error and confidence interval."""

    value: float
    """The mean (or mean difference); nan when there are no values."""
    se: float
    """Its standard error; nan when it cannot be estimated (fewer than two values)."""
    ci: tuple[float, float]
    """The (lower, upper) confidence interval at the requested level (0.95 by default); (nan, nan)
    when it cannot be computed."""
    n: int
    """Number of values (samples, or matched pairs for a difference)."""
    estimator: str
    """What produced ``se`` and ``ci``: one of the names listed in this module's docstring."""
    clusters: int | None
    """Number of distinct clusters when clusters were given; None for independent samples."""


class McNemar(msgspec.Struct, frozen=True, kw_only=True):
    """McNemar's exact test of two runs scored 0/1 on the same samples.

    Only the discordant pairs carry information about which run is better; under the null
    hypothesis each of them is equally likely to favour either run, so ``b_only`` is
    Binomial(b_only + a_only, 1/2) and the two-sided p-value is
    ``min(1, 2·P[X <= min(b_only, a_only)])``.

    The exact binomial p-value is valid at any count. The chi-square approximation (with or
    without continuity correction) is poor when there are few discordant pairs, and for many
    pairs the exact value is still cheap, so only the exact value is given. The mid-p variant
    is not given either: unlike the exact test, it does not guarantee the nominal error rate.
    """

    b_only: int
    """Samples where ``a`` scored 0 and ``b`` scored 1."""
    a_only: int
    """Samples where ``a`` scored 1 and ``b`` scored 0."""
    both: int
    """Samples where both scored 1."""
    neither: int
    """Samples where both scored 0."""
    p_value: float
    """Exact two-sided p-value of "a and b are equally accurate"; 1.0 with no discordant pairs."""


def json_number(value: float) -> float | None:
    """``value``, or ``None`` where it is nan or infinite (what a report writes for "cannot be
    estimated": JSON has no nan)."""
    return value if math.isfinite(value) else None


def quantiles(values: Sequence[float]) -> dict[str, float]:
    """p50, p90, p99 and max of ``values`` (the element at rank ``int(q * n)``, no
    interpolation); all 0.0 when there are none."""
    if not values:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": ordered[-1]}


def is_binary(values: Sequence[float]) -> bool:
    """Whether every value is 0 or 1 (``True``/``False`` count), so the values are a proportion.

    False for an empty sequence: no values say nothing about the metric.
    """
    return bool(values) and all(v == 0 or v == 1 for v in values)


def mean_estimate(
    values: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> Estimate:
    """The mean of ``values`` with its standard error and a ``level`` confidence interval.

    Independent samples (``clusters`` None): se = s / sqrt(n), with s the sample standard
    deviation (divisor n - 1). When every value is 0 or 1 the interval is the Wilson score
    interval: unlike mean ± z·se it never collapses to [p, p] when every answer is right (or
    wrong), and its coverage stays close to the nominal level at small n, where the normal
    approximation's does not. Otherwise the interval is mean ± z·se.

    Clustered (``clusters[i]`` is the cluster of ``values[i]``, e.g. the MMLU subject): the
    cluster-robust (CR1, "sandwich") standard error of the mean, as in Miller (2024):
    Var = C/(C-1) · Σ_c (Σ_{i∈c} (x_i - x̄))² / n² over the C clusters; the interval is
    mean ± z·se, clipped to [0, 1] when every value is 0 or 1. With a single cluster the
    clustered error cannot be estimated; the samples are treated as independent and
    ``estimator`` says so.

    n = 0 gives nan throughout. n = 1 gives se nan; the interval is Wilson's for a 0/1 value and
    (nan, nan) otherwise.
    """
    return _estimate(values, clusters, level, proportion=is_binary(values))


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> Estimate:
    """The mean of ``b[i] - a[i]`` over matched samples (the same questions scored by two runs).

    The same standard errors as ``mean_estimate`` on the differences (independent or CR1
    clustered). Pairing removes the between-question variation both runs share, so this error is
    usually much smaller than that of the difference of two separate means. The interval is
    always mean ± z·se, never Wilson's and never clipped: differences are not proportions.
    """
    if len(a) != len(b):
        raise ValueError(f"paired_difference needs matched samples: {len(a)} a but {len(b)} b")
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    return _estimate(diffs, clusters, level, proportion=False)


def mcnemar(a: Sequence[float], b: Sequence[float]) -> McNemar:
    """McNemar's exact test on two runs' 0/1 scores of the same samples (see ``McNemar``)."""
    if len(a) != len(b):
        raise ValueError(f"mcnemar needs matched samples: {len(a)} a but {len(b)} b")
    counts = {(0, 0): 0, (0, 1): 0, (1, 0): 0, (1, 1): 0}
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x not in (0, 1) or y not in (0, 1):
            raise ValueError(f"mcnemar needs 0/1 scores, but sample {i} has a={x!r}, b={y!r}")
        counts[int(x), int(y)] += 1
    b_only, a_only = counts[0, 1], counts[1, 0]
    return McNemar(
        b_only=b_only,
        a_only=a_only,
        both=counts[1, 1],
        neither=counts[0, 0],
        p_value=_mcnemar_p(b_only, a_only),
    )


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), not {level!r}")
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def _estimate(
    values: Sequence[float], clusters: Sequence[Hashable] | None, level: float, *, proportion: bool
) -> Estimate:
    """The mean's estimate; ``proportion`` (every value 0 or 1) asks for Wilson's interval with
    independent samples and for clipping to [0, 1] with clusters."""
    z = _z(level)
    n = len(values)
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"clusters must be parallel to the values: {len(clusters)} keys for {n}")
    n_clusters = None if clusters is None else len(set(clusters))
    if n == 0:
        return Estimate(value=NAN, se=NAN, ci=(NAN, NAN), n=0, estimator="none (no values)",
                        clusters=n_clusters)  # fmt: skip
    mean = math.fsum(values) / n
    if clusters is None or n_clusters == 1:
        se = _iid_se(values, mean)
        # mean ± z·se is (nan, nan) at n = 1; Wilson's interval is not
        ci = _wilson(mean, n, z) if proportion else (mean - z * se, mean + z * se)
        estimator = "wilson" if proportion else "clt"
        if clusters is not None:
            estimator += " (1 cluster: iid fallback)"
        return Estimate(value=mean, se=se, ci=ci, n=n, estimator=estimator, clusters=n_clusters)
    by_cluster: dict[Hashable, list[float]] = {}
    for x, key in zip(values, clusters, strict=True):
        by_cluster.setdefault(key, []).append(x - mean)
    c = len(by_cluster)
    # CR1: Var = C/(C-1) · Σ_c (Σ_{i∈c} (x_i - x̄))² / n²
    se = math.sqrt(c / (c - 1) * math.fsum(math.fsum(r) ** 2 for r in by_cluster.values())) / n
    lo, hi = mean - z * se, mean + z * se
    if proportion:  # a proportion cannot leave [0, 1]
        lo, hi = max(0.0, lo), min(1.0, hi)
    estimator = f"clustered(cr1, {c} clusters)"
    return Estimate(value=mean, se=se, ci=(lo, hi), n=n, estimator=estimator, clusters=c)


def _iid_se(values: Sequence[float], mean: float) -> float:
    """s / sqrt(n), with s the sample standard deviation (divisor n - 1); nan for n < 2."""
    n = len(values)
    if n < 2:
        return NAN
    return math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1)) / math.sqrt(n)


def _wilson(p: float, n: int, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion p observed over n samples."""
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # The bounds lie in [0, 1], and at p = 0 (p = 1) the lower (upper) one is exactly 0 (1); in
    # floats center ∓ half can land a few ulps either side, so both are pinned.
    lo = 0.0 if p == 0 else max(0.0, center - half)
    hi = 1.0 if p == 1 else min(1.0, center + half)
    return lo, hi


def _mcnemar_p(b01: int, b10: int) -> float:
    m, k = b01 + b10, min(b01, b10)
    if m == 0:
        return 1.0
    cdf = _half_binomial_cdf(k, m) if m <= _EXACT_LIMIT else _half_binomial_cdf_log(k, m)
    return min(1.0, 2 * cdf)


def _half_binomial_cdf(k: int, m: int) -> float:
    """P[X <= k] for X ~ Binomial(m, 1/2), summed exactly in integers and rounded once."""
    term = total = 1  # C(m, 0)
    for i in range(k):
        term = term * (m - i) // (i + 1)  # C(m, i + 1), exact
        total += term
    return total / (1 << m)  # int / int is correctly rounded, even for huge ints


def _half_binomial_cdf_log(k: int, m: int) -> float:
    """P[X <= k] for X ~ Binomial(m, 1/2) for large m, without big integers: P[X = k] from
    log-gamma (relative error about 1e-16 times lgamma(m), ~1e-9 at m = 10⁶), times the sum of
    the terms below it relative to it, which shrink by the factor i / (m - i + 1)."""
    log_pmf = math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1) - m * math.log(2)
    ratio = total = 1.0
    for i in range(k, 0, -1):
        ratio *= i / (m - i + 1)
        total += ratio
        if ratio < total * 1e-17:
            break
    return math.exp(log_pmf + math.log(total))
