"""Statistical power of a paired comparison: two runs scored on the same samples.

Two questions, at a two-sided level ``alpha`` (0.05) and a probability ``target`` (0.80) of
detecting: how many samples a comparison needs to detect a difference Δ (``samples_needed``),
and the smallest difference a comparison of n samples detects (``detectable_difference``, its
minimum detectable effect, MDE). "Detect" means that the test ``sieval compare`` reports for the
metric rejects "no difference" (``analysis/compare.py``), so each figure is a claim about that test.
``Design.method`` names which:

- ``"mcnemar"``: a 0/1 metric on independent samples, McNemar's exact test (rejects at
  p <= alpha). Only the discordant samples (those the runs score differently, a share ψ of them:
  the *discordance*) carry information: their number M is Binomial(n, ψ), and given M the count
  B scores right is Binomial(M, q), q = (ψ + Δ) / (2ψ). The power is summed exactly over M:
  Σ_M P[M] · P[the test rejects | M], each M's rejection region from the Binomial(M, 1/2) tails
  and its probability from the Binomial(M, q) tails. Beyond ``EXACT_LIMIT`` expected discordant
  samples, where the exact test's discreteness no longer shows, it is Connor's normal
  approximation (R. J. Connor, "Sample size for testing differences in proportions for the
  paired-sample design", Biometrics 43, 1987): power = Φ((√n·Δ − z·√ψ) / √(ψ − Δ²)), within
  0.002 of the exact power there. Below it the approximation is not good enough: at ψ 0.02,
  Δ 0.01 its n (1,568) has power 0.765, and the exact n is 1,686.
- ``"paired"``: any other metric on independent samples, the z-test of the mean difference (the
  95% interval compare prints): Var(d̄) = σ²/n, σ the standard deviation of the per-sample
  differences; power = Φ(√n·Δ/σ − z) + Φ(−√n·Δ/σ − z).
- ``"clustered"``: samples in clusters (MMLU's subjects), the cluster-robust (CR1) interval
  compare prints, by the same normal approximation with Var(d̄) = σ²/n · DEFF. The design effect
  DEFF = 1 + (Σ_c m_c²/n − 1)·ICC (Kish's, for clusters of unequal sizes m_c) holds exactly when
  differences within a cluster share a correlation ICC; m_c are the clusters' sizes among the
  first n samples in the task's order. For a 0/1 metric σ² = ψ − Δ².
- ``"rows"``: each row scored k times (the ``repeats`` option), so the row is the unit and n
  counts rows (a comparison of n rows is n·k samples). A row's mean difference over its k repeats
  has the variance σ_r² = σ²·DEFF/k, DEFF = 1 + (k − 1)·ICC the design effect of repeats whose
  differences correlate by ICC (σ² = ψ − Δ² for a 0/1 metric, ψ the share of samples the runs
  score differently). For a 0/1 metric the test is compare's sign-flip test on rows
  (``uncertainty.SignFlip``), by its normal approximation, which divides by the null's SD
  √(σ_r² + Δ²): power = Φ((√n·Δ − z·√(σ_r² + Δ²)) / σ_r) + Φ((−√n·Δ − z·√(σ_r² + Δ²)) / σ_r),
  Connor's formula when k = 1; for another metric the z-test of the row-clustered interval,
  Var(d̄) = σ_r²/n.

Pure functions: ``math`` and ``statistics.NormalDist`` only (and msgspec for ``Design``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from statistics import NormalDist

import msgspec

from .beta import betainc as _betainc

__all__ = [
    "ALPHA",
    "EXACT_LIMIT",
    "TARGET",
    "Design",
    "design_effect",
    "detectable_difference",
    "discordance_range",
    "icc_from_design_effect",
    "independent_discordance",
    "power_at",
    "samples_needed",
]

ALPHA = 0.05
"""The default level of the two-sided test."""
TARGET = 0.80
"""The default power: the probability of detecting the difference."""
EXACT_LIMIT = 20_000
"""Expected discordant samples (n·ψ) up to which McNemar's power is summed exactly."""

_NORMAL = NormalDist()


class Design(msgspec.Struct, frozen=True, kw_only=True):
    """How a paired comparison's per-sample differences vary: what its power depends on besides
    n and Δ. Exactly one of ``discordance`` and ``sd`` is given."""

    discordance: float | None = None
    """A 0/1 metric: ψ, the share of samples the two runs score differently (0 to 1)."""
    sd: float | None = None
    """Any other metric: σ, the standard deviation of the per-sample differences ``b − a``."""
    clusters: tuple[str, ...] | None = None
    """A clustered task: each sample's cluster in the task's order; a comparison of n samples
    holds the first n. None: the samples are independent."""
    icc: float = 0.0
    """With ``clusters``: the intra-cluster correlation of the differences; with ``repeats``: the
    correlation of the differences among a row's repeats."""
    repeats: int = 1
    """Samples a row (each row scored ``repeats`` times): above 1 the row is the unit, and n
    counts rows."""

    def __post_init__(self) -> None:
        if (self.discordance is None) == (self.sd is None):
            raise ValueError("a Design takes exactly one of discordance (0/1 metrics) and sd")
        if self.discordance is not None and not 0 <= self.discordance <= 1:
            raise ValueError(f"discordance must be between 0 and 1, not {self.discordance!r}")
        if self.sd is not None and not (math.isfinite(self.sd) and self.sd >= 0):
            raise ValueError(f"sd must be a finite number >= 0, not {self.sd!r}")
        if not math.isfinite(self.icc):
            raise ValueError(f"icc must be a finite number, not {self.icc!r}")
        if not (isinstance(self.repeats, int) and self.repeats >= 1):
            raise ValueError(f"repeats must be a whole number >= 1, not {self.repeats!r}")
        if self.repeats > 1 and self.clusters is not None:
            raise ValueError("a Design clusters by group or by row (repeats), not both")
        if self.icc != 0 and self.clusters is None and self.repeats == 1:
            raise ValueError("an icc needs the clusters (or the repeats) it is the correlation "
                             "within")  # fmt: skip

    @property
    def method(self) -> str:
        """``"clustered"``, ``"rows"``, ``"mcnemar"`` or ``"paired"`` (this module's
        docstring)."""
        if self.clusters is not None:
            return "clustered"
        if self.repeats > 1:
            return "rows"
        return "mcnemar" if self.discordance is not None else "paired"


def power_at(design: Design, n: int, delta: float, alpha: float = ALPHA) -> float:
    """The probability that a comparison of ``n`` samples detects a true difference ``delta``
    (either sign) at two-sided level ``alpha``."""
    _check_level(alpha, "alpha")
    _check_n(design, n)
    d = _check_delta(design, delta)
    if design.method == "mcnemar":
        psi = _discordance(design)
        if n * psi > EXACT_LIMIT:
            return _connor_power(n, psi, d, alpha)
        return _ExactMcNemar(n, psi, alpha).power(d)
    if design.method == "rows":
        return _rows_power(design, n, d, alpha)
    return _normal_power(math.sqrt(n) * d, math.sqrt(_variance(design, d) * _deff(design, n)),
                         alpha)  # fmt: skip


def samples_needed(
    design: Design, delta: float, target: float = TARGET, alpha: float = ALPHA
) -> int | None:
    """The smallest n whose comparison detects ``delta`` with probability ``target``. None for a
    clustered design that does not reach it within its clusters' samples (with a positive ICC
    more samples of the same clusters cannot shrink the clusters' own variation)."""
    _check_level(alpha, "alpha")
    _check_level(target, "target")
    d = _check_delta(design, delta)
    if d == 0:
        raise ValueError("delta must not be 0: no n detects no difference more often than alpha")
    if design.clusters is not None:
        return _first_clustered_n(design, d, target, alpha)
    z_a, z_b = _NORMAL.inv_cdf(1 - alpha / 2), _NORMAL.inv_cdf(target)
    if design.method == "rows":
        row = math.sqrt(_row_variance(design, d))
        if row == 0:
            return 1
        null = math.sqrt(row * row + d * d) if design.discordance is not None else row
        return _first_n(lambda n: _rows_power(design, n, d, alpha), target,
                        math.ceil(((z_a * null + z_b * row) / d) ** 2))  # fmt: skip
    if design.method == "mcnemar":
        psi = _discordance(design)
        # Connor's closed form, z_α·√ψ + z_β·√(ψ − Δ²) = √n·Δ, is where the search starts
        guess = math.ceil(((z_a * math.sqrt(psi) + z_b * math.sqrt(psi - d * d)) / d) ** 2)
        if guess * psi > EXACT_LIMIT:
            return _first_n(lambda n: _connor_power(n, psi, d, alpha), target, guess)
        return _first_n(lambda n: _ExactMcNemar(n, psi, alpha).power(d), target, guess)
    sd = _sd(design)
    if sd == 0:
        return 1  # every difference is delta: one sample shows it
    return _first_n(lambda n: _normal_power(math.sqrt(n) * d, sd, alpha), target,
                    math.ceil(((z_a + z_b) * sd / d) ** 2))  # fmt: skip


def detectable_difference(
    design: Design, n: int, target: float = TARGET, alpha: float = ALPHA
) -> float | None:
    """The smallest difference a comparison of ``n`` samples detects with probability ``target``
    (its minimum detectable effect). None when none can be: no discordant samples, differences
    that do not vary, or (0/1 metrics) too few discordant samples for even Δ = ψ, every one of
    them won by the same run."""
    _check_level(alpha, "alpha")
    _check_level(target, "target")
    _check_n(design, n)
    if design.method == "mcnemar":
        psi = _discordance(design)
        if psi == 0:
            return None
        if n * psi > EXACT_LIMIT:
            return _solve(lambda d: _connor_power(n, psi, d, alpha), target, psi)
        exact = _ExactMcNemar(n, psi, alpha)
        return _solve(exact.power, target, psi)
    if design.method == "rows":
        if design.discordance is not None:
            psi = design.discordance
            if psi == 0 or _row_variance(design, 0.0) <= 0:
                return None
            return _solve(lambda d: _rows_power(design, n, d, alpha), target, psi)
        row = math.sqrt(_row_variance(design, 0.0))
        if row == 0:
            return None
        upper = (_NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(target)) * row / math.sqrt(n)
        return _solve(lambda d: _rows_power(design, n, d, alpha), target, upper)
    deff = _deff(design, n)
    if design.discordance is not None:
        psi = design.discordance
        if psi == 0 or deff <= 0:
            return None
        return _solve(lambda d: _normal_power(math.sqrt(n) * d, math.sqrt((psi - d * d) * deff),
                                              alpha), target, psi)  # fmt: skip
    sigma = _sd(design) * math.sqrt(max(deff, 0.0))
    if sigma == 0:
        return None
    # the far tail only adds power, so the one-tail closed form bounds the answer from above
    upper = (_NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(target)) * sigma / math.sqrt(n)
    return _solve(lambda d: _normal_power(math.sqrt(n) * d, sigma, alpha), target, upper)


def design_effect(sizes: Iterable[int], icc: float) -> float:
    """1 + (Σ m²/n − 1)·icc for clusters of sizes m (n = Σ m): how much clustering multiplies
    the variance of a mean over independent samples."""
    sizes = list(sizes)
    n = sum(sizes)
    if n == 0:
        raise ValueError("design_effect needs at least one sample")
    return 1 + (sum(m * m for m in sizes) / n - 1) * icc


def icc_from_design_effect(deff: float, sizes: Iterable[int]) -> float:
    """The ICC that gives design effect ``deff`` with clusters of these sizes (the inverse of
    ``design_effect``); 0 when every cluster holds one sample, where the ICC has no effect."""
    sizes = list(sizes)
    n = sum(sizes)
    if n == 0:
        raise ValueError("icc_from_design_effect needs at least one sample")
    spread = sum(m * m for m in sizes) / n - 1
    return 0.0 if spread == 0 else (deff - 1) / spread


def independent_discordance(baseline: float, delta: float) -> float:
    """ψ if the runs' answers were independent, run A right with probability ``baseline`` and
    run B with ``baseline + delta``: p_a(1 − p_b) + p_b(1 − p_a). Runs of one model, or of
    related models, agree more than that, so a design built on it overstates n."""
    p_a, p_b = baseline, baseline + delta
    for name, p in (("baseline", p_a), ("baseline + delta", p_b)):
        if not 0 <= p <= 1:
            raise ValueError(f"{name} must be an accuracy between 0 and 1, not {p!r}")
    return p_a * (1 - p_b) + p_b * (1 - p_a)


def discordance_range(baseline: float, delta: float) -> tuple[float, float]:
    """The discordances possible for runs right on shares ``baseline`` and ``baseline + delta``
    of the samples: at least |delta| (B's extra right answers are discordant samples), at most
    the share on which they can disagree, min(1 − p_a, p_b) + min(p_a, 1 − p_b)."""
    p_a, p_b = baseline, baseline + delta
    independent_discordance(baseline, delta)  # checks both are accuracies
    return abs(delta), min(1 - p_a, p_b) + min(p_a, 1 - p_b)


# --- the methods -------------------------------------------------------------------------


def _normal_power(shift: float, sigma: float, alpha: float, sigma0: float | None = None) -> float:
    """P[|Z'| > z] for the statistic (√n·d̄) / sigma0 where √n·d̄ ~ Normal(shift, sigma²);
    sigma0 is the SD the test divides by (sigma unless the test assumes the null's)."""
    z = _NORMAL.inv_cdf(1 - alpha / 2)
    s0 = sigma if sigma0 is None else sigma0
    if sigma == 0:
        return 1.0 if shift > z * s0 else 0.0
    return _NORMAL.cdf((shift - z * s0) / sigma) + _NORMAL.cdf((-shift - z * s0) / sigma)


def _row_variance(design: Design, d: float) -> float:
    """The variance of a row's mean difference over its repeats: σ²·(1 + (k − 1)·ICC)/k."""
    k = design.repeats
    return _variance(design, d) * max(1 + (k - 1) * design.icc, 0.0) / k


def _rows_power(design: Design, n: int, d: float, alpha: float) -> float:
    """n rows: the sign-flip test's normal approximation for a 0/1 metric (its statistic divides
    by the null's SD, √(σ_r² + Δ²)), the row-clustered interval's z-test otherwise."""
    row = math.sqrt(_row_variance(design, d))
    null = math.sqrt(row * row + d * d) if design.discordance is not None else None
    return _normal_power(math.sqrt(n) * d, row, alpha, sigma0=null)


def _connor_power(n: int, psi: float, d: float, alpha: float) -> float:
    """McNemar's test by its normal approximation: the statistic (B − C)/√(B + C) divides by
    the null's SD √ψ; under Δ the difference's SD is √(ψ − Δ²)."""
    return _normal_power(math.sqrt(n) * d, math.sqrt(max(psi - d * d, 0.0)), alpha,
                         sigma0=math.sqrt(psi))  # fmt: skip


class _ExactMcNemar:
    """The power of McNemar's exact test over n samples of discordance ψ, as a function of Δ:
    what does not depend on Δ (each discordant count's probability and rejection region) is
    computed once."""

    def __init__(self, n: int, psi: float, alpha: float) -> None:
        self.psi = psi
        mean, sd = n * psi, math.sqrt(n * psi * (1 - psi))
        self.first = max(0, int(mean - 9 * sd) - 2)  # P[M = m] outside is below 1e-17
        last = min(n, int(mean + 9 * sd) + 2)
        self.weights = [_binomial_pmf(m, n, psi) for m in range(self.first, last + 1)]
        self.critical = _critical_values(alpha, last)

    def power(self, delta: float) -> float:
        """Σ_m P[M = m] · (P[B <= k_m] + P[B >= m − k_m]), B ~ Binomial(m, q). The two tails are
        computed once at the first m and then carried from m to m + 1 (one more discordant
        sample: B gains one with probability q), which keeps each step to two or four binomial
        probabilities; the carried error stays near 1e-13."""
        q = (self.psi + delta) / (2 * self.psi) if self.psi > 0 else 0.5
        m, ks = self.first, self.critical
        if q >= 1:  # every discordant sample won by B: rejected whenever m can reject
            return math.fsum(w for i, w in enumerate(self.weights) if ks[m + i] >= 0)
        log_q, log_p = math.log(q), math.log1p(-q)

        def pmf(x: int, trials: int) -> float:
            if not 0 <= x <= trials:
                return 0.0
            return math.exp(
                math.lgamma(trials + 1) - math.lgamma(x + 1) - math.lgamma(trials - x + 1)
                + x * log_q + (trials - x) * log_p
            )  # fmt: skip

        k = ks[m]
        lower = _betainc(m - k, k + 1, 1 - q) if k >= 0 else 0.0  # P[B <= k]
        upper = _betainc(m - k, k + 1, q) if k >= 0 else 0.0  # P[B >= m - k]
        terms = [self.weights[0] * (lower + upper)]
        for weight in self.weights[1:]:
            j = m - k
            lower -= q * pmf(k, m)  # over m + 1: P[B <= k] loses B = k then a win
            upper -= (1 - q) * pmf(j, m)  # P[B >= j + 1] = P[B >= j] − P[B = j then a loss]
            if ks[m + 1] > k:  # k_{m+1} is k or k + 1
                lower += pmf(k + 1, m + 1)
                upper += pmf(j, m + 1)
                k += 1
            m += 1
            lower, upper = max(lower, 0.0), max(upper, 0.0)
            terms.append(weight * (lower + upper))
        return math.fsum(terms)


_CRITICAL: dict[float, list[int]] = {}
"""For each alpha, k_m for m = 0, 1, 2, ... as far as a power has needed."""
_ANCHOR = 1024  # every this many m the carried tail is computed afresh


def _critical_values(alpha: float, last: int) -> list[int]:
    """k_m for every m up to ``last``: the largest k with 2·P[X <= k] <= alpha for
    X ~ Binomial(m, 1/2) (McNemar's exact test rejects when the smaller discordant count is at
    most k), -1 when no k is; computed once per alpha and kept.

    k_m never falls and rises by at most 1 from m to m + 1, so the tail P[X <= k] and P[X = k]
    are carried along (one more trial: P[X <= k] loses half of P[X = k]) instead of summed anew;
    a comparison too close to call that way is made from the incomplete beta function, which
    also re-anchors the carried values every ``_ANCHOR`` steps."""
    ks = _CRITICAL.setdefault(alpha, [-1])  # m = 0 never rejects
    m, k = len(ks) - 1, ks[-1]
    tail, point = (_betainc(m - k, k + 1, 0.5), _binomial_pmf(k, m, 0.5)) if k >= 0 else (0, 0)
    while m < last:
        m += 1
        if k >= 0:
            tail -= point / 2  # P[X <= k] over m trials
            point *= m / (2 * (m - k))  # P[X = k] over m trials
        while True:
            following = point * (m - k) / (k + 1) if k >= 0 else 0.5**m  # P[X = k + 1]
            widened = tail + following
            if abs(2 * widened - alpha) < 1e-9 * alpha:
                widened = _betainc(m - k - 1, k + 2, 0.5)
            if 2 * widened > alpha:
                break
            tail, point, k = widened, following, k + 1
        if m % _ANCHOR == 0 and k >= 0:
            tail, point = _betainc(m - k, k + 1, 0.5), _binomial_pmf(k, m, 0.5)
        ks.append(k)
    return ks


def _variance(design: Design, d: float) -> float:
    """The per-sample variance of the differences under a true difference d."""
    if design.discordance is not None:
        return max(design.discordance - d * d, 0.0)
    return _sd(design) ** 2


def _deff(design: Design, n: int) -> float:
    if design.clusters is None:
        return 1.0
    return design_effect(Counter(design.clusters[:n]).values(), design.icc)


def _first_clustered_n(design: Design, d: float, target: float, alpha: float) -> int | None:
    """Each n in turn over the clusters' samples, the sizes' Σ m² kept as n grows."""
    assert design.clusters is not None
    sigma = math.sqrt(_variance(design, d))
    sizes: Counter[str] = Counter()
    squares = 0
    for n, cluster in enumerate(design.clusters, start=1):
        squares += 2 * sizes[cluster] + 1  # (m + 1)² − m²
        sizes[cluster] += 1
        deff = 1 + (squares / n - 1) * design.icc
        if _normal_power(math.sqrt(n) * d, sigma * math.sqrt(max(deff, 0.0)), alpha) >= target:
            return n
    return None


# --- searches ------------------------------------------------------------------------------


def _probit(p: float) -> float:
    return _NORMAL.inv_cdf(min(max(p, 1e-15), 1 - 1e-15))


def _first_n(power_of: Callable[[int], float], target: float, guess: int) -> int:
    """The smallest n >= 1 with ``power_of(n) >= target``, for a power that rises with n: a
    bracket from ``guess``, then regula falsi (Illinois) in √n on the power's probit, which is
    nearly linear there, so a few evaluations of an expensive power suffice."""
    goal = _probit(target)

    def gap(n: int) -> float:
        return _probit(power_of(n)) - goal

    n = max(1, guess)
    g = gap(n)
    if g < 0:  # step up until the power is reached
        lo, g_lo = n, g
        while True:
            n = math.ceil(n * 1.1) + 1
            g = gap(n)
            if g >= 0:
                hi, g_hi = n, g
                break
            lo, g_lo = n, g
    else:  # step down until it is not (n = 0 has no power)
        hi, g_hi = n, g
        lo, g_lo = 0, -math.inf
        while hi > 1:
            n = max(1, math.floor(hi / 1.1) - 1)
            g = gap(n)
            if g < 0:
                lo, g_lo = n, g
                break
            hi, g_hi = n, g
    kept = 0  # which end was kept last: -1 lo, +1 hi
    while hi - lo > 1:
        if math.isinf(g_lo):
            n = (lo + hi) // 2
        else:
            x_lo, x_hi = math.sqrt(lo), math.sqrt(hi)
            x = x_lo + (x_hi - x_lo) * (-g_lo) / (g_hi - g_lo)
            n = min(max(round(x * x), lo + 1), hi - 1)
        g = gap(n)
        if g >= 0:
            hi, g_hi = n, g
            if kept == -1:
                g_lo /= 2  # Illinois: lo kept twice, so its weight halves
            kept = -1
        else:
            lo, g_lo = n, g
            if kept == 1:
                g_hi /= 2
            kept = 1
    return hi


def _solve(power_of: Callable[[float], float], target: float, upper: float) -> float | None:
    """The smallest d in (0, upper] with ``power_of(d) >= target`` (to within 1e-9 of
    ``upper``), for a power rising with d; None when even ``upper`` falls short. Regula falsi
    (Illinois) on the power's probit, nearly linear in d."""
    goal = _probit(target)
    lo, hi = 0.0, upper
    g_lo, g_hi = _probit(power_of(lo)) - goal, _probit(power_of(hi)) - goal
    if g_hi < 0:
        return None
    if g_lo >= 0:
        return 0.0
    kept = 0
    while hi - lo > 1e-9 * upper:
        d = lo + (hi - lo) * (-g_lo) / (g_hi - g_lo)
        if not lo < d < hi:
            d = (lo + hi) / 2
        g = _probit(power_of(d)) - goal
        if g >= 0:
            hi, g_hi = d, g
            if kept == -1:
                g_lo /= 2
            kept = -1
        else:
            lo, g_lo = d, g
            if kept == 1:
                g_hi /= 2
            kept = 1
    return hi


# --- numerics ------------------------------------------------------------------------------


def _binomial_pmf(k: int, n: int, p: float) -> float:
    if p in (0.0, 1.0):
        return 1.0 if k == (0 if p == 0 else n) else 0.0
    return math.exp(
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        + k * math.log(p) + (n - k) * math.log1p(-p)
    )  # fmt: skip


# --- checks --------------------------------------------------------------------------------


def _check_level(value: float, name: str) -> None:
    if not (isinstance(value, int | float) and 0 < value < 1):
        example = ALPHA if name == "alpha" else TARGET
        raise ValueError(f"{name} must be between 0 and 1 (e.g. {example}), not {value!r}")


def _check_n(design: Design, n: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n!r}")
    if design.clusters is not None and n > len(design.clusters):
        raise ValueError(
            f"n = {n} is more than the {len(design.clusters)} samples whose clusters are known"
        )


def _check_delta(design: Design, delta: float) -> float:
    d = abs(delta)
    if not math.isfinite(d):
        raise ValueError(f"delta must be a finite number, not {delta!r}")
    psi = design.discordance
    if psi is not None and d > psi:
        raise ValueError(
            f"a difference of {d:g} needs a discordance of at least {d:g}: runs that disagree "
            f"on a share {psi:g} of the samples differ by at most {psi:g}"
        )
    return d


def _discordance(design: Design) -> float:
    assert design.discordance is not None
    return design.discordance


def _sd(design: Design) -> float:
    assert design.sd is not None
    return design.sd
