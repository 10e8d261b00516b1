"""Uncertainty of a report's numbers: the standard error and confidence interval of a mean, of a
figure made of sums (a perplexity), of a paired difference between two runs, and the tests of two
runs' 0/1 scores (McNemar's exact test on samples, the sign-flip test on rows).

The clustered standard error follows Evan Miller, "Adding Error Bars to Evals: A Statistical
Approach to Language Model Evaluations" (2024), https://arxiv.org/abs/2411.00640: questions that
share a passage or a subject are not independent, and treating them as such understates the
error; nor are the repeats of one row.

Every ``Estimate`` names the estimator that produced it in ``estimator``; by metric kind:

- a proportion (every value 0 or 1) over independent samples: ``"wilson"``, Wilson's score
  interval (never [p, p] at 0% or 100%; coverage near the nominal level at small n);
- a proportion over clustered samples (MMLU's subjects, the repeats of a row):
  ``"clustered(cr1, C clusters), clopper-pearson at effective n N"``: the CR1 standard error, and
  Korn and Graubard's interval (Survey Methodology 24, 1998): Clopper–Pearson's exact binomial
  interval at the effective n = n / DEFF, DEFF the CR1 variance over the binomial one, kept
  between 1 and Σm_c²/n (every cluster's samples alike: the most clustering can cost); at 0% or
  100% there is no variance to estimate DEFF from, so it is Σm_c²/n, the widest;
- a mean of values in a bounded range (``bounds``; TruthfulQA MC2's probability in [0, 1]) that
  are not all at its ends: ``"clopper-pearson at effective n N"`` (after ``"clustered(cr1, C
  clusters), "`` when clustered), the same interval on the values scaled to [0, 1], the effective
  n being u(1 − u)/se² (the n of a 0/1 metric with that mean and that error; the worst case, n or
  n²/Σm_c², when the values do not vary): it stays in the range and is exact at its ends;
- any other mean: ``"clt"`` (mean ± z·se) or ``"clustered(cr1, C clusters)"`` (mean ± z·se, the
  CR1 error), clipped to a half-bounded range when one is given (a log-likelihood is at most 0);
- a figure made of sums (``Derived``: a perplexity, bits per byte): the clt interval of the ratio
  of sums by its linearization (the delta method), mapped through the figure's monotone function
  (exp on the log scale: a perplexity's interval is exp(−x) of the mean log-likelihood's, so it
  stays positive and keeps the coverage of the mean's);
- ``"wilson (1 cluster: iid fallback)"`` / ``"clt (1 cluster: iid fallback)"``: clusters were
  given but there was only one, so the clustered error cannot be estimated and the samples were
  treated as independent;
- ``"none (no values)"``: nothing to estimate; every number is nan.

Pure functions over plain sequences of floats: ``math``, ``statistics.NormalDist`` and the
incomplete beta function (``beta.py``); numpy only for the sign-flip test's exact distribution;
msgspec for the result Structs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from statistics import NormalDist

import msgspec

from .beta import beta_quantile

__all__ = [
    "UNIT",
    "Bounds",
    "Derived",
    "Estimate",
    "McNemar",
    "SignFlip",
    "derived_estimate",
    "is_binary",
    "json_number",
    "mcnemar",
    "mean_estimate",
    "paired_difference",
    "quantiles",
    "sign_flip",
]

NAN = math.nan

Bounds = tuple[float, float]
"""A metric's range, (lowest, highest); ``-math.inf`` / ``math.inf`` for an open end."""
UNIT: Bounds = (0.0, 1.0)
"""The range of a proportion or a probability."""

# Up to this many discordant pairs the McNemar tail is summed in exact integers (about 0.5 s at
# the limit); beyond it, in floating point from log-space (see _half_binomial_cdf_log).
_EXACT_LIMIT = 100_000
# Up to this many array cells updated (Σ over magnitudes of (rows + 1) · the support so far), the
# sign-flip distribution is summed exactly (well under a second); beyond, the normal
# approximation (by then over thousands of rows, where it is close).
_FLIP_EXACT_WORK = 30_000_000


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
    effective_n: float | None = None
    """The n of independent 0/1 samples the interval was computed at (Clopper–Pearson at the
    effective n); None for the other estimators."""


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


class SignFlip(msgspec.Struct, frozen=True, kw_only=True):
    """The sign-flip test of two runs scored 0/1 on the same rows, each row scored several times
    (its repeats): the paired test on rows, not on samples.

    Each row c gives t_c = Σ (b − a) over its samples, an integer in [−m_c, m_c]. Under "the
    runs are equally accurate" the two runs' answers to a row are exchangeable, so swapping them
    (t_c → −t_c) is as likely as not, independently across rows: the statistic T = Σ_c t_c is
    distributed as Σ_c ±|t_c| with fair signs (Fisher's randomisation test of paired data, on
    the rows). The two-sided p-value is P[|T| >= |t|] under that distribution, summed exactly
    (``method`` "exact") unless the distribution is large (``_FLIP_EXACT_WORK``), then by its
    normal approximation with a continuity correction ("normal approximation").

    Why this test: it counts a row once however many repeats it has (McNemar's test over the
    samples counts a row's repeats as independent pairs and overstates the evidence); it is exact
    at any number of rows (a Wald test on the clustered difference, Obuchowski's clustered
    McNemar, is a normal approximation, anti-conservative with few discordant rows); and with one
    sample a row, or rows whose repeats agree, |t_c| is one value and T is a scaled binomial: the
    test is then exactly McNemar's exact test on the rows.
    """

    rows: int
    """Rows compared (clusters)."""
    b_better: int
    """Rows where ``b`` scored more than ``a`` (t_c > 0)."""
    a_better: int
    """Rows where ``a`` scored more than ``b``."""
    tied: int
    """Rows where the two runs scored the same total."""
    statistic: int
    """T = Σ (b − a) over every sample."""
    p_value: float
    """Two-sided p-value of "a and b are equally accurate"; 1.0 when T = 0."""
    method: str
    """``"exact"`` or ``"normal approximation"``."""


class Derived(msgspec.Struct, frozen=True, kw_only=True):
    """A task's figure that is a function of sums of per-sample metrics rather than the mean of
    one: R = Σ of / Σ per (``per`` None: the mean of ``of``; ``weighted``: Σ of·per / Σ per, a
    mean weighted by ``per``), then ``scale · R``, then ``exp`` of it when ``exp``. LAMBADA's
    perplexity is ``Derived(of="loglikelihood", scale=-1, exp=True)``; WikiText's word
    perplexity ``Derived(of="loglikelihood", per="words", scale=-1, exp=True)``; IFEval's
    instruction-level accuracy ``Derived(of="inst_level_strict_acc", per="n_instructions",
    weighted=True, bounds=UNIT)``. Its interval is ``derived_estimate``'s."""

    of: str
    """The per-sample metric summed above the line."""
    per: str | None = None
    """The per-sample metric summed below it; None: the number of samples."""
    weighted: bool = False
    """Sum ``of · per`` above the line: R is the mean of ``of`` weighted by ``per``."""
    scale: float = 1.0
    exp: bool = False
    bounds: Bounds | None = None
    """The range of R (finite: its interval is Clopper–Pearson's at the effective n, as a
    bounded mean's)."""

    def describe(self) -> str:
        """The figure as a formula: ``exp(-Σloglikelihood/Σwords)``."""
        if self.per is None:
            inner = f"mean {self.of}"
        elif self.weighted:
            inner = f"Σ{self.of}·{self.per}/Σ{self.per}"
        else:
            inner = f"Σ{self.of}/Σ{self.per}"
        if self.scale == -1:
            inner = f"-{inner}"
        elif self.scale != 1:
            inner = f"{self.scale:.6g}·{inner}"
        return f"exp({inner})" if self.exp else inner


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
    bounds: Bounds | None = None,
) -> Estimate:
    """The mean of ``values`` with its standard error and a ``level`` confidence interval.

    Independent samples (``clusters`` None): se = s / sqrt(n), with s the sample standard
    deviation (divisor n - 1). Clustered (``clusters[i]`` is the cluster of ``values[i]``, e.g.
    the MMLU subject or the row a repeat is of): the cluster-robust (CR1, "sandwich") standard
    error of the mean, as in Miller (2024): Var = C/(C-1) · Σ_c (Σ_{i∈c} (x_i - x̄))² / n² over
    the C clusters. With a single cluster the clustered error cannot be estimated; the samples
    are treated as independent and ``estimator`` says so.

    The interval depends on the metric's kind (this module's docstring): Wilson's for 0/1 values
    over independent samples; Clopper–Pearson at the effective n for 0/1 values over clusters
    and for values in a finite ``bounds`` that are not all 0/1; mean ± z·se otherwise, clipped to
    ``bounds`` when one end is open. ``bounds`` is the metric's range; None: 0/1 values are a
    proportion and anything else is unbounded. 0/1 values under ``bounds`` other than [0, 1] are
    not a proportion (a log-likelihood of 0 on every sample).

    n = 0 gives nan throughout. n = 1 gives se nan; the interval is Wilson's for a 0/1 value,
    Clopper–Pearson's at n = 1 for a value in a finite range and (nan, nan) otherwise.
    """
    proportion = is_binary(values) and bounds in (None, UNIT)
    return _estimate(values, clusters, level, proportion=proportion, bounds=bounds)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    level: float = 0.95,
    bounds: Bounds | None = None,
) -> Estimate:
    """The mean of ``b[i] - a[i]`` over matched samples (the same questions scored by two runs).

    The same standard errors as ``mean_estimate`` on the differences (independent or CR1
    clustered: pass the row each sample is a repeat of, so that repeats are not counted as
    independent pairs). Pairing removes the between-question variation both runs share, so this
    error is usually much smaller than that of the difference of two separate means. The
    interval is mean ± z·se, never Wilson's: differences are not proportions; with the metric's
    ``bounds`` (lo, hi) it is clipped to ±(hi − lo), the most two values in them can differ by.
    """
    if len(a) != len(b):
        raise ValueError(f"paired_difference needs matched samples: {len(a)} a but {len(b)} b")
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    estimate = _estimate(diffs, clusters, level, proportion=False, bounds=None)
    if bounds is None:
        return estimate
    width = bounds[1] - bounds[0]
    lo, hi = estimate.ci
    if lo >= -width and hi <= width:
        return estimate
    return msgspec.structs.replace(
        estimate, ci=(max(lo, -width), min(hi, width)),
        estimator=f"{estimate.estimator}, clipped to {_range_text((-width, width))}",
    )  # fmt: skip


def derived_estimate(
    figure: Derived,
    columns: Mapping[str, Sequence[float]],
    clusters: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> Estimate:
    """The figure ``figure`` stands for over the samples whose metrics ``columns`` holds (one
    sequence a metric, parallel), with its standard error and interval.

    The ratio R = Σ x / Σ w (x = ``of``, or ``of · per`` when weighted; w = ``per``, or 1) has
    the linearized (delta-method) variance Var(R) = n/(n−1) · Σ_i e_i² / (Σ w)²,
    e_i = x_i − R·w_i (with clusters: CR1, C/(C−1) · Σ_c (Σ_{i∈c} e_i)² / (Σ w)²); for a mean
    that is s²/n. The interval is R ± z·se, or, when ``bounds`` is finite, Clopper–Pearson's at
    the effective n (as ``mean_estimate``'s for a bounded mean; the worst case the weights'
    (Σ W_c)² / Σ W_c²); then mapped through the figure's function g (scale, then exp):
    monotone, so the mapped interval covers g(true R) exactly when R's covers the true R, and an
    exp-figure's interval is positive. ``se`` is |g'(R)|·se(R) (the delta method)."""
    z = _z(level)
    of = columns[figure.of]
    per = columns[figure.per] if figure.per is not None else [1.0] * len(of)
    n = len(of)
    if len(per) != n or (clusters is not None and len(clusters) != n):
        raise ValueError(f"derived_estimate needs parallel columns: {len(of)}, {len(per)}")
    num = [x * w for x, w in zip(of, per, strict=True)] if figure.weighted else list(of)
    n_clusters = None if clusters is None else len(set(clusters))
    total = math.fsum(per)
    if n == 0 or total == 0:
        return Estimate(value=NAN, se=NAN, ci=(NAN, NAN), n=n, estimator="none (no values)",
                        clusters=n_clusters)  # fmt: skip
    ratio = math.fsum(num) / total
    residuals = [x - ratio * w for x, w in zip(num, per, strict=True)]
    keys: Sequence[Hashable] = clusters if clusters is not None and n_clusters != 1 else range(n)
    if clusters is None or n_clusters == 1:
        var = n / (n - 1) * math.fsum(e * e for e in residuals) / total**2 if n > 1 else NAN
        base = "clt" + ("" if clusters is None else " (1 cluster: iid fallback)")
    else:
        var = _cr1_sum_of_squares(residuals, clusters) / total**2
        base = f"clustered(cr1, {n_clusters} clusters)"
    se_ratio = math.sqrt(var)
    effective_n = None
    bounds = figure.bounds
    if bounds is not None and all(map(math.isfinite, bounds)):
        lo, hi = bounds
        weights: dict[Hashable, float] = {}
        for key, w in zip(keys, per, strict=True):
            weights[key] = weights.get(key, 0.0) + w
        worst = total**2 / math.fsum(w * w for w in weights.values())
        u, se_u = (ratio - lo) / (hi - lo), se_ratio / (hi - lo)
        ok = 0 < u < 1 and se_u > 0
        effective_n = max(worst, u * (1 - u) / (se_u * se_u)) if ok else worst
        u_lo, u_hi = _clopper_pearson(min(max(u, 0.0), 1.0), effective_n, level)
        inner = (lo + (hi - lo) * u_lo, lo + (hi - lo) * u_hi)
        base += f", clopper-pearson at effective n {effective_n:.4g}"
    else:
        inner = (ratio - z * se_ratio, ratio + z * se_ratio)

    def g(x: float) -> float:
        y = figure.scale * x
        return math.exp(y) if figure.exp else y

    value = g(ratio)
    ends = sorted((g(inner[0]), g(inner[1])))
    slope = abs(figure.scale) * (value if figure.exp else 1.0)
    what = "the mean's" if figure.per is None else "the ratio's"
    if figure.exp:
        how = ", mapped (delta method on the log scale)"
    elif figure.scale != 1:
        how = ", mapped (delta method)"
    else:
        how = ""
    return Estimate(
        value=value, se=slope * se_ratio, ci=(ends[0], ends[1]), n=n,
        estimator=f"{figure.describe()}: {what} {base} interval{how}", clusters=n_clusters,
        effective_n=effective_n,
    )  # fmt: skip


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


def sign_flip(a: Sequence[float], b: Sequence[float], rows: Sequence[Hashable]) -> SignFlip:
    """The sign-flip test of two runs' 0/1 scores paired by row (see ``SignFlip``): ``rows[i]``
    is the row sample i is a repeat of."""
    if not len(a) == len(b) == len(rows):
        raise ValueError(f"sign_flip needs matched samples: {len(a)} a, {len(b)} b, {len(rows)} "
                         "rows")  # fmt: skip
    totals: dict[Hashable, int] = {}
    for i, (x, y, row) in enumerate(zip(a, b, rows, strict=True)):
        if x not in (0, 1) or y not in (0, 1):
            raise ValueError(f"sign_flip needs 0/1 scores, but sample {i} has a={x!r}, b={y!r}")
        totals[row] = totals.get(row, 0) + int(y) - int(x)
    t = list(totals.values())
    statistic = sum(t)
    magnitudes = Counter(abs(v) for v in t if v)
    if statistic == 0:
        p, method = 1.0, "exact"
    elif len(magnitudes) == 1:  # a scaled binomial: McNemar's exact test on the rows
        p, method = _mcnemar_p(sum(v > 0 for v in t), sum(v < 0 for v in t)), "exact"
    else:
        p, method = _sign_flip_p(magnitudes, abs(statistic))
    return SignFlip(
        rows=len(t),
        b_better=sum(v > 0 for v in t),
        a_better=sum(v < 0 for v in t),
        tied=sum(v == 0 for v in t),
        statistic=statistic,
        p_value=p,
        method=method,
    )


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), not {level!r}")
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def _estimate(
    values: Sequence[float],
    clusters: Sequence[Hashable] | None,
    level: float,
    *,
    proportion: bool,
    bounds: Bounds | None,
) -> Estimate:
    """The mean's estimate; ``proportion`` (every value 0 or 1) asks for Wilson's interval with
    independent samples and Korn–Graubard's with clusters; a finite ``bounds`` for
    Korn–Graubard's on the scaled values, a half-open one for clipping."""
    z = _z(level)
    n = len(values)
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"clusters must be parallel to the values: {len(clusters)} keys for {n}")
    n_clusters = None if clusters is None else len(set(clusters))
    if n == 0:
        return Estimate(value=NAN, se=NAN, ci=(NAN, NAN), n=0, estimator="none (no values)",
                        clusters=n_clusters)  # fmt: skip
    mean = math.fsum(values) / n
    clustered = clusters is not None and n_clusters != 1
    if clustered:
        assert clusters is not None
        se = math.sqrt(_cr1_sum_of_squares([x - mean for x in values], clusters)) / n
        basis = f"clustered(cr1, {n_clusters} clusters)"
        # the effective n if every cluster's samples were alike: n² / Σ m_c²
        worst = n * n / sum(m * m for m in Counter(clusters).values())
    else:
        se = _iid_se(values, mean)
        basis = "wilson" if proportion else "clt"
        if clusters is not None:
            basis += " (1 cluster: iid fallback)"
        worst = float(n)
    finite = bounds is not None and all(map(math.isfinite, bounds))
    if proportion and not clustered:
        return Estimate(value=mean, se=se, ci=_wilson(mean, n, z), n=n, estimator=basis,
                        clusters=n_clusters)  # fmt: skip
    if proportion or finite:
        lo, hi = bounds if finite and bounds is not None else UNIT
        u = (mean - lo) / (hi - lo)
        se_u = se / (hi - lo)
        if 0 < u < 1 and se_u > 0:  # n_eff: the n of 0/1 samples with this mean and this error
            n_eff = max(worst, u * (1 - u) / (se_u * se_u))
            if proportion:  # a design effect below 1 is noise (Korn and Graubard)
                n_eff = min(n_eff, float(n))
        elif proportion and 0 < u < 1:  # every cluster's mean the same: DEFF 0, taken as 1
            n_eff = float(n)
        else:  # no variance to read the design effect from: the worst case
            n_eff = worst
        u_lo, u_hi = _clopper_pearson(min(max(u, 0.0), 1.0), n_eff, level)
        prefix = f"{basis}, " if clustered else ""
        return Estimate(
            value=mean, se=se, ci=(lo + (hi - lo) * u_lo, lo + (hi - lo) * u_hi), n=n,
            estimator=f"{prefix}clopper-pearson at effective n {n_eff:.4g}",
            clusters=n_clusters, effective_n=n_eff,
        )  # fmt: skip
    ci = (mean - z * se, mean + z * se)
    if bounds is not None and not (bounds[0] <= ci[0] and ci[1] <= bounds[1]):
        ci = (max(ci[0], bounds[0]), min(ci[1], bounds[1]))
        basis += f", clipped to {_range_text(bounds)}"
    return Estimate(value=mean, se=se, ci=ci, n=n, estimator=basis, clusters=n_clusters)


def _range_text(bounds: Bounds) -> str:
    lo, hi = bounds
    if not math.isfinite(lo):
        return f"≤ {hi:g}"
    if not math.isfinite(hi):
        return f"≥ {lo:g}"
    return f"[{lo:g}, {hi:g}]"


def _cr1_sum_of_squares(residuals: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """C/(C-1) · Σ_c (Σ_{i∈c} e_i)²: n² times the CR1 variance of a mean."""
    by_cluster: dict[Hashable, list[float]] = {}
    for e, key in zip(residuals, clusters, strict=True):
        by_cluster.setdefault(key, []).append(e)
    c = len(by_cluster)
    return c / (c - 1) * math.fsum(math.fsum(r) ** 2 for r in by_cluster.values())


def _clopper_pearson(p: float, n: float, level: float) -> tuple[float, float]:
    """Clopper–Pearson's interval for x = p·n successes of n (n need not be whole: the effective
    n), from the Beta quantiles; exactly 0 (1) at p = 0 (1)."""
    alpha = 1 - level
    x = p * n
    lo = 0.0 if x <= 0 else beta_quantile(alpha / 2, x, n - x + 1)
    hi = 1.0 if x >= n else beta_quantile(1 - alpha / 2, x + 1, n - x)
    return lo, hi


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


def _sign_flip_p(magnitudes: Counter[int], statistic: int) -> tuple[float, str]:
    """P[|T| >= statistic] for T = Σ ±j over ``magnitudes[j]`` rows of each |t| = j, fair
    independent signs; ``statistic`` > 0. With H = (T + Σ j·r_j) / 2 = Σ_j j·X_j,
    X_j ~ Binomial(r_j, 1/2), and T symmetric: p = 2·P[H <= (Σ j·r_j − statistic) / 2]."""
    total = sum(j * r for j, r in magnitudes.items())
    work, support = 0, 1
    for j, r in magnitudes.items():
        support += j * r
        work += (r + 1) * support
    if work > _FLIP_EXACT_WORK:
        # T lies on a lattice of step 2g (g the magnitudes' gcd): a continuity correction of g
        gap = math.gcd(*magnitudes)
        variance = sum(j * j * r for j, r in magnitudes.items())
        tail = NormalDist().cdf((gap - statistic) / math.sqrt(variance))
        return min(1.0, 2 * tail), "normal approximation"
    import numpy as np  # the exact distribution is a few vector operations a magnitude

    pmf = np.ones(1)
    for j, r in sorted(magnitudes.items()):
        out = np.zeros(len(pmf) + j * r)
        for i in range(r + 1):  # X_j = i with probability C(r, i) / 2^r
            weight = math.exp(math.lgamma(r + 1) - math.lgamma(i + 1) - math.lgamma(r - i + 1)
                              - r * math.log(2))  # fmt: skip
            out[i * j : i * j + len(pmf)] += weight * pmf
        pmf = out
    cut = (total - statistic) // 2
    return min(1.0, 2 * math.fsum(pmf[: cut + 1])), "exact"


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
