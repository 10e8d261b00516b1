"""Standard errors, intervals and McNemar's test: hand-worked cases, then scipy and statsmodels.

The hand-worked cases write the arithmetic out, so a wrong formula (n for n - 1, a missing
C/(C-1), the CLT interval where Wilson's belongs, a one-sided p-value) changes a number here.
The library comparisons use hypothesis for many random cases at relative tolerance 1e-9; the
absolute tolerance beside it (1e-12 times the values' scale) only absorbs float rounding where
the exact answer is 0, e.g. the se of equal values.

What each library computes, as compared against here:

- ``statsmodels.stats.proportion.proportion_confint(k, n, alpha, method="wilson")``: Wilson's
  score interval, with z = norm.isf(alpha / 2).
- ``scipy.stats.sem(x)``: std(x, ddof=1) / sqrt(n).
- ``OLS(x, ones).fit(cov_type="cluster")``: the sandwich (X'X)⁻¹ B (X'X)⁻¹ with
  B = Σ_c (Σ_{i∈c} e_i)², times the CR1 factor C/(C-1) · (n-1)/(n-k)
  (``statsmodels.stats.sandwich_covariance.cov_cluster``, use_correction=True). On a constant
  k = 1, so (X'X)⁻¹ = 1/n, the factor is C/(C-1), and Var = C/(C-1) · B / n²: Miller's formula.
  ``use_t=False`` makes its ``conf_int`` mean ± z·se, as ours.
- ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``: 2 · Binomial(m, 1/2).cdf
  of the smaller discordant count, capped at 1; ``scipy.stats.binomtest(k, m).pvalue``: the
  two-sided exact test, which at p = 1/2 is the same by symmetry.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from sieval.scoring import Estimate, is_binary, mcnemar, mean_estimate, paired_difference
from sieval.scoring import uncertainty as unc

Z = 1.959963984540054  # the 0.975 normal quantile
Z2 = Z * Z  # 3.841458820694124


def close(x: float, y: float, scale: float = 1.0) -> bool:
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12 * scale)


def test_z_is_the_normal_quantile() -> None:
    assert close(NormalDist().inv_cdf(0.975), Z)
    assert close(stats.norm.ppf(0.975), Z)


# --- hand-worked cases ---------------------------------------------------------------------


def test_binary_mean_uses_wilson() -> None:
    # [1, 0, 1, 1]: mean 3/4 = 0.75; deviations 0.25, -0.75, 0.25, 0.25;
    # squares 0.0625·3 + 0.5625 = 0.75; s² = 0.75 / (4 - 1) = 0.25; s = 0.5; se = 0.5 / √4 = 0.25
    est = mean_estimate([1, 0, 1, 1])
    assert (est.value, est.se, est.n, est.clusters) == (0.75, 0.25, 4, None)
    assert est.estimator == "wilson"
    # Wilson: denom = 1 + z²/n = 1 + 3.841459/4 = 1.960365
    #   center = (p + z²/2n) / denom = (0.75 + 3.841459/8) / 1.960365 = 1.230182 / 1.960365
    #          = 0.627527
    #   half   = z / denom · √(p(1-p)/n + z²/4n²) = 1.959964 / 1.960365 · √(0.1875/4 + 3.841459/64)
    #          = 0.999795 · √0.106898 = 0.326886
    denom = 1 + Z2 / 4
    center = (0.75 + Z2 / 8) / denom
    half = Z / denom * math.sqrt(0.75 * 0.25 / 4 + Z2 / 64)
    assert close(est.ci[0], center - half)
    assert close(est.ci[1], center + half)
    assert est.ci == pytest.approx((0.300642, 0.954413), abs=1e-6)
    # the CLT interval would be 0.75 ± 1.96·0.25 = (0.260, 1.240): not what a 0/1 metric gets
    assert est.ci[1] < 1


def test_non_binary_mean_uses_the_clt_interval() -> None:
    # [1, 3, 2, 4, 5]: mean 3; squared deviations 4 + 0 + 1 + 1 + 4 = 10; s² = 10/4 = 2.5;
    # se = √2.5 / √5 = √0.5 = 0.707107; ci = 3 ± 1.959964 · 0.707107 = 3 ± 1.385904
    est = mean_estimate([1, 3, 2, 4, 5])
    assert est.estimator == "clt"
    assert (est.value, est.n) == (3.0, 5)
    assert close(est.se, math.sqrt(0.5))
    assert close(est.ci[0], 3 - Z * math.sqrt(0.5))
    assert close(est.ci[1], 3 + Z * math.sqrt(0.5))
    assert est.ci == pytest.approx((1.614096, 4.385904), abs=1e-6)


def test_level_changes_z() -> None:
    # 90%: z = 1.644854; ci = 3 ± 1.644854 · 0.707107
    est = mean_estimate([1, 3, 2, 4, 5], level=0.9)
    assert est.ci == pytest.approx((3 - 1.644854 * 0.707107, 3 + 1.644854 * 0.707107), abs=1e-6)
    with pytest.raises(ValueError, match="level"):
        mean_estimate([1, 2], level=95)


def test_clustered_cr1_by_hand() -> None:
    # clusters A: [1, 3], B: [2], C: [4, 5]; n = 5, mean 3
    # residual sums A: -2 + 0 = -2, B: -1, C: 1 + 2 = 3; squares 4 + 1 + 9 = 14
    # Var = C/(C-1) · 14 / n² = 3/2 · 14 / 25 = 0.84; se = √0.84 = 0.916515
    # (larger than the iid √0.5 = 0.707107: the clusters' members move together)
    est = mean_estimate([1, 3, 2, 4, 5], ["A", "A", "B", "C", "C"])
    assert (est.value, est.n, est.clusters) == (3.0, 5, 3)
    assert est.estimator == "clustered(cr1, 3 clusters)"
    assert close(est.se, math.sqrt(0.84))
    assert close(est.ci[0], 3 - Z * math.sqrt(0.84))
    assert close(est.ci[1], 3 + Z * math.sqrt(0.84))


def test_clustered_binary_is_clipped_to_0_1() -> None:
    # A: [1, 1], B: [1, 0], C: [0, 0]; mean 3/6 = 0.5; residual sums A: 1, B: 0, C: -1
    # Var = 3/2 · (1 + 0 + 1) / 36 = 1/12; se = 0.288675; 0.5 ± 0.565792 → clipped to (0, 1)
    est = mean_estimate([1, 1, 1, 0, 0, 0], ["A", "A", "B", "B", "C", "C"])
    assert close(est.se, math.sqrt(1 / 12))
    assert est.ci == (0.0, 1.0)
    # A: [1, 1, 1], B: [1, 1, 0]; mean 5/6; residual sums A: 3·(1/6) = 0.5, B: 2·(1/6) - 5/6 = -0.5
    # Var = 2/1 · (0.25 + 0.25) / 36 = 1/36; se = 1/6; ci = 5/6 ± z/6 = (0.506673, 1.159994)
    # → the upper bound is clipped to 1
    est = mean_estimate([1, 1, 1, 1, 1, 0], ["A", "A", "A", "B", "B", "B"])
    assert close(est.se, 1 / 6)
    assert close(est.ci[0], 5 / 6 - Z / 6)
    assert est.ci[1] == 1.0


def test_one_cluster_per_sample_is_the_iid_se() -> None:
    # C = n: C/(C-1) · Σ e² / n² = Σ e² / ((n - 1) n) = s² / n exactly
    values = [0.2, 0.9, 0.4, 0.4, 0.7, 0.1]
    clustered = mean_estimate(values, list(range(len(values))))
    assert close(clustered.se, mean_estimate(values).se)


def test_paired_difference_by_hand() -> None:
    # d = b - a = [1, 0, 1, 1]: mean 0.75, se 0.25 (as in test_binary_mean_uses_wilson), but a
    # difference is not a proportion: 0.75 ± 1.959964 · 0.25 = (0.260009, 1.239991), no clip
    est = paired_difference([0, 0, 0, 0], [1, 0, 1, 1])
    assert (est.value, est.se, est.estimator) == (0.75, 0.25, "clt")
    assert close(est.ci[0], 0.75 - Z * 0.25)
    assert close(est.ci[1], 0.75 + Z * 0.25)
    assert est.ci[1] > 1


def test_paired_difference_clustered_by_hand() -> None:
    # d = [2-1, 2-2, 5-3, 4-4] = [1, 0, 2, 0], mean 0.75; residuals 0.25, -0.75, 1.25, -0.75
    # sums A: -0.5, B: 0.5; Var = 2/1 · 0.5 / 16 = 1/16; se = 0.25
    est = paired_difference([1, 2, 3, 4], [2, 2, 5, 4], ["A", "A", "B", "B"])
    assert (est.value, est.clusters, est.estimator) == (0.75, 2, "clustered(cr1, 2 clusters)")
    assert close(est.se, 0.25)


def test_mcnemar_by_hand() -> None:
    # b01 = 1, b10 = 6: m = 7, P[X <= 1] = (C(7,0) + C(7,1)) / 2⁷ = (1 + 7) / 128; p = 2 · 8/128
    a = [0] + [1] * 6 + [1, 1, 0]
    b = [1] + [0] * 6 + [1, 1, 0]
    result = mcnemar(a, b)
    assert (result.b_only, result.a_only, result.both, result.neither) == (1, 6, 2, 1)
    assert result.p_value == 0.125
    # the order of the runs does not matter
    assert mcnemar(b, a).p_value == 0.125
    # b01 = 0, b10 = 3: 2 · 1/8 = 0.25; b01 = b10 = 2: 2 · (1 + 4 + 6)/16 = 1.375 → 1
    assert mcnemar([1, 1, 1], [0, 0, 0]).p_value == 0.25
    assert mcnemar([0, 0, 1, 1], [1, 1, 0, 0]).p_value == 1.0


# --- edge cases ----------------------------------------------------------------------------


def is_nan_estimate(est: Estimate) -> bool:
    return all(math.isnan(x) for x in (est.value, est.se, *est.ci))


def test_no_values() -> None:
    est = mean_estimate([])
    assert is_nan_estimate(est)
    assert (est.n, est.estimator, est.clusters) == (0, "none (no values)", None)
    assert mean_estimate([], []).clusters == 0
    assert is_nan_estimate(paired_difference([], []))
    empty = mcnemar([], [])
    assert (empty.b_only, empty.a_only, empty.both, empty.neither, empty.p_value) == (0, 0, 0, 0, 1)


def test_one_value() -> None:
    # Wilson at n = 1, p = 1: center = (1 + z²/2)/(1 + z²), half = z²/2 / (1 + z²),
    # lower = 1/(1 + z²) = 1/4.841459 = 0.206549, upper = 1; at p = 0: (0, z²/(1 + z²))
    one = mean_estimate([1])
    assert math.isnan(one.se)
    assert (one.value, one.n, one.estimator) == (1.0, 1, "wilson")
    assert close(one.ci[0], 1 / (1 + Z2))
    assert one.ci[1] == 1.0
    zero = mean_estimate([0])
    assert zero.ci[0] == 0.0
    assert close(zero.ci[1], Z2 / (1 + Z2))
    # a value that is not 0/1: nothing to build an interval from
    half = mean_estimate([0.5])
    assert half.value == 0.5
    assert math.isnan(half.se)
    assert all(math.isnan(x) for x in half.ci)
    paired = paired_difference([0.25], [0.5])
    assert paired.value == 0.25
    assert math.isnan(paired.se)
    assert all(math.isnan(x) for x in paired.ci)


def test_all_equal() -> None:
    flat = mean_estimate([0.5] * 4)
    assert (flat.se, flat.ci, flat.estimator) == (0.0, (0.5, 0.5), "clt")
    # all right: the CLT would give [1, 1]; Wilson's lower bound is n/(n + z²) = 5/8.841459
    right = mean_estimate([1] * 5)
    assert right.se == 0.0
    assert close(right.ci[0], 5 / (5 + Z2))
    assert right.ci == pytest.approx((0.565518, 1.0), abs=1e-6)
    # all wrong: upper bound z²/(n + z²) = 3.841459/8.841459 = 0.434482
    wrong = mean_estimate([0] * 5)
    assert wrong.ci[0] == 0.0
    assert close(wrong.ci[1], Z2 / (5 + Z2))
    # mathematically those bounds are exactly 1 and 0; in floats center ± half can miss them
    # (n = 16: upper 1.0000000000000002; n = 27: lower -6.9e-18), and a report must not show it
    for n in range(1, 100):
        assert mean_estimate([1] * n).ci[1] == 1.0
        assert mean_estimate([0] * n).ci[0] == 0.0


def test_one_cluster_falls_back_to_iid() -> None:
    iid = mean_estimate([1, 0, 1, 1])
    one = mean_estimate([1, 0, 1, 1], ["x"] * 4)
    assert (one.value, one.se, one.ci) == (iid.value, iid.se, iid.ci)
    assert (one.estimator, one.clusters) == ("wilson (1 cluster: iid fallback)", 1)
    paired = paired_difference([1, 2, 3], [2, 2, 5], ["x"] * 3)
    assert paired.estimator == "clt (1 cluster: iid fallback)"
    assert paired.se == paired_difference([1, 2, 3], [2, 2, 5]).se


def test_misuse_is_refused() -> None:
    with pytest.raises(ValueError, match="parallel"):
        mean_estimate([1, 0], ["a"])
    with pytest.raises(ValueError, match="matched"):
        paired_difference([1, 0], [1])
    with pytest.raises(ValueError, match="matched"):
        mcnemar([1, 0], [1])
    with pytest.raises(ValueError, match="sample 1 has a=0.5"):
        mcnemar([1, 0.5], [1, 1])


def test_is_binary() -> None:
    assert is_binary([0, 1, 1.0, 0.0, True, False])
    assert not is_binary([])
    assert not is_binary([0, 1, 0.5])
    assert not is_binary([math.nan])
    assert not is_binary([2])


def test_huge_mcnemar_is_finite_and_exact() -> None:
    # 14,100 discordant pairs: 2^14100 is far beyond a float, the exact sum is not
    a = [0] * 7000 + [1] * 7100
    b = [1] * 7000 + [0] * 7100
    result = mcnemar(a, b)
    assert (result.b_only, result.a_only) == (7000, 7100)
    assert math.isfinite(result.p_value)
    assert close(result.p_value, stats.binomtest(7000, 14100).pvalue)
    assert close(result.p_value, sm_mcnemar([[0, 7000], [7100, 0]], exact=True).pvalue)


def test_log_space_tail_agrees_with_the_exact_sum() -> None:
    # the log-space path serves m > _EXACT_LIMIT; check it where the exact sum is cheap.
    # Its error comes from lgamma(m) (≈ 1.2e5 here, ulp 1.5e-11), so 1e-9 holds.
    for k, m in [(0, 30), (3, 30), (15, 30), (7000, 14100), (6800, 14100), (50, 14100)]:
        exact = unc._half_binomial_cdf(k, m)
        assert close(unc._half_binomial_cdf_log(k, m), exact), (k, m)


def test_mcnemar_beyond_the_exact_limit() -> None:
    # m = 301,000 takes the log-space path; lgamma(m) ≈ 3.5e6 there, so allow 1e-7
    b01, b10 = 150_000, 151_000
    assert b01 + b10 > unc._EXACT_LIMIT
    p = unc._mcnemar_p(b01, b10)
    assert math.isclose(p, stats.binomtest(b01, b01 + b10).pvalue, rel_tol=1e-7)
    assert 0 < p < 0.1


# --- against scipy and statsmodels ---------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))  # fmt: skip
def test_wilson_matches_statsmodels(n_k: tuple[int, int], level: float) -> None:
    n, k = n_k
    est = mean_estimate([1] * k + [0] * (n - k), level=level)
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert est.estimator == "wilson"
    assert close(est.ci[0], lo), (est.ci, lo)
    assert close(est.ci[1], hi), (est.ci, hi)


finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, min_size=2, max_size=200) | st.lists(st.sampled_from([0, 1]), min_size=2))
def test_iid_se_matches_scipy(values: list[float]) -> None:
    est = mean_estimate(values)
    assert close(est.value, float(np.mean(values)), scale=10)
    assert close(est.se, float(stats.sem(values)), scale=10)
    if est.estimator == "clt":
        assert close(est.ci[0], est.value - Z * est.se, scale=10)
        assert close(est.ci[1], est.value + Z * est.se, scale=10)


@st.composite
def clustered_samples(draw: st.DrawFn) -> tuple[list[float], list[int]]:
    value = st.sampled_from([0.0, 1.0]) if draw(st.booleans()) else finite
    pairs = draw(st.lists(st.tuples(value, st.integers(0, 6)), min_size=2, max_size=80))
    return [v for v, _ in pairs], [c for _, c in pairs]


def statsmodels_cluster_fit(values: list[float], groups: list[int]):  # type: ignore[no-untyped-def]
    exog = np.ones((len(values), 1))
    return OLS(np.asarray(values), exog).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(groups)}, use_t=False
    )


@settings(max_examples=300, deadline=None)
@given(clustered_samples())
def test_clustered_se_matches_statsmodels(sample: tuple[list[float], list[int]]) -> None:
    values, groups = sample
    assume(len(set(groups)) >= 2)
    est = mean_estimate(values, groups)
    fit = statsmodels_cluster_fit(values, groups)
    assert est.clusters == len(set(groups))
    assert close(est.value, float(fit.params[0]), scale=10)
    assert close(est.se, float(fit.bse[0]), scale=10)
    lo, hi = (float(x) for x in fit.conf_int()[0])
    if is_binary(values):
        lo, hi = max(0.0, lo), min(1.0, hi)
    assert close(est.ci[0], lo, scale=10)
    assert close(est.ci[1], hi, scale=10)


@settings(max_examples=200, deadline=None)
@given(clustered_samples())
def test_paired_difference_matches_scipy_and_statsmodels(
    sample: tuple[list[float], list[int]],
) -> None:
    b, groups = sample
    a = list(reversed(b))
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    iid = paired_difference(a, b)
    assert iid.estimator == "clt"
    assert close(iid.se, float(stats.sem(diffs)), scale=20)
    if len(set(groups)) >= 2:
        clustered = paired_difference(a, b, groups)
        assert close(clustered.se, float(statsmodels_cluster_fit(diffs, groups).bse[0]), scale=20)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 500), st.integers(0, 500))
def test_mcnemar_matches_statsmodels_and_scipy(b01: int, b10: int) -> None:
    assume(b01 + b10 > 0)  # binomtest needs at least one trial
    a = [0] * b01 + [1] * b10 + [1, 0]
    b = [1] * b01 + [0] * b10 + [1, 0]
    p = mcnemar(a, b).p_value
    assert close(p, sm_mcnemar([[1, b01], [b10, 1]], exact=True).pvalue)
    assert close(p, stats.binomtest(b01, b01 + b10).pvalue)


@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1]))))
def test_mcnemar_counts(pairs: list[tuple[int, int]]) -> None:
    result = mcnemar([x for x, _ in pairs], [y for _, y in pairs])
    assert result.b_only == pairs.count((0, 1))
    assert result.a_only == pairs.count((1, 0))
    assert result.both == pairs.count((1, 1))
    assert result.neither == pairs.count((0, 0))


def test_quantiles_take_the_element_at_rank_q_times_n() -> None:
    from sieval.scoring.uncertainty import quantiles

    # ten values 0..9: p50 is ordered[5], p90 ordered[9], p99 ordered[int(9.9)] = ordered[9]
    assert quantiles([9, 3, 1, 0, 2, 8, 4, 7, 6, 5]) == {"p50": 5, "p90": 9, "p99": 9, "max": 9}
    assert quantiles([]) == {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}


def test_json_number_drops_what_cannot_be_estimated() -> None:
    from sieval.scoring.uncertainty import json_number

    assert [json_number(x) for x in (0.25, float("nan"), float("inf"))] == [0.25, None, None]
