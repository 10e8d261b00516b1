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

import itertools
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
from sieval.scoring.beta import beta_quantile
from sieval.scoring.uncertainty import Derived, derived_estimate, sign_flip

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


def test_clustered_binary_is_clopper_pearson_at_the_effective_n() -> None:
    # A: [1, 1], B: [1, 0], C: [0, 0]; mean 3/6 = 0.5; residual sums A: 1, B: 0, C: -1
    # Var = 3/2 · (1 + 0 + 1) / 36 = 1/12; se = 0.288675. The binomial variance p(1-p)/n is
    # 0.25/6 = 1/24, so DEFF = 2 (at its cap Σm²/n = 12/6 = 2) and the effective n = 6/2 = 3:
    # Clopper–Pearson for 1.5 of 3, the Beta(1.5, 2.5) and Beta(2.5, 1.5) quantiles. Before,
    # 0.5 ± 0.565792 clipped to (0, 1): no information at all.
    est = mean_estimate([1, 1, 1, 0, 0, 0], ["A", "A", "B", "B", "C", "C"])
    assert close(est.se, math.sqrt(1 / 12))
    assert est.effective_n == 3.0
    assert est.estimator == "clustered(cr1, 3 clusters), clopper-pearson at effective n 3"
    assert close(est.ci[0], stats.beta.ppf(0.025, 1.5, 2.5))
    assert close(est.ci[1], stats.beta.ppf(0.975, 2.5, 1.5))
    # A: [1, 1, 1], B: [1, 1, 0]; mean 5/6; residual sums A: 0.5, B: -0.5
    # Var = 2/1 · 0.5 / 36 = 1/36; binomial 5/36/6 = 5/216: DEFF = 1.2, n_eff = 5 (cap Σm²/n = 3)
    est = mean_estimate([1, 1, 1, 1, 1, 0], ["A", "A", "A", "B", "B", "B"])
    assert close(est.se, 1 / 6)
    assert est.effective_n is not None and close(est.effective_n, 5.0)
    assert close(est.ci[0], stats.beta.ppf(0.025, 5 / 6 * 5, 5 - 5 / 6 * 5 + 1))
    assert close(est.ci[1], stats.beta.ppf(0.975, 5 / 6 * 5 + 1, 5 - 5 / 6 * 5))
    # a design effect below 1 (here 0: every cluster's mean is the same) is taken as 1
    est = mean_estimate([1, 0, 1, 0], ["A", "A", "B", "B"])
    assert est.se == 0.0 and est.effective_n == 4.0
    assert est.ci == mean_estimate([1, 0, 1, 0], ["A", "B", "C", "D"]).ci


def test_a_repeats_headline_with_every_row_wrong_does_not_collapse() -> None:
    # 10 rows x 4 repeats, every answer wrong: the CR1 error is 0, and mean ± z·se was
    # [0, 0]. With no variance to read the design effect from, it is the widest, Σm²/n = 4
    # (every row's repeats alike): 10 effective samples, Clopper–Pearson's upper bound for 0 of
    # 10, 1 − 0.025^(1/10) = 0.308497.
    rows = [f"r{i}" for i in range(10) for _ in range(4)]
    wrong = mean_estimate([0] * 40, rows)
    assert wrong.ci[0] == 0.0
    assert close(wrong.ci[1], 1 - 0.025 ** (1 / 10))
    assert wrong.ci[1] == pytest.approx(0.308497, abs=1e-6)
    right = mean_estimate([1] * 40, rows)
    assert close(right.ci[0], 0.025 ** (1 / 10)) and right.ci[1] == 1.0
    # unequal rows (a repeat failed): n²/Σm² = 39²/(9·16 + 9) = 9.94
    uneven = mean_estimate([0] * 39, rows[1:])
    assert uneven.effective_n is not None and close(uneven.effective_n, 39**2 / (9 * 16 + 9))


def test_a_probability_mean_stays_in_its_range() -> None:
    # TruthfulQA MC2-like: probability masses, mostly near 0; mean 0.2625, sample SD 0.4223,
    # se 0.1493: mean ± z·se = (-0.030, 0.555) leaves [0, 1]
    values = [0.9, 0.0, 0.01, 0.02, 0.0, 0.95, 0.0, 0.22]
    assert mean_estimate(values).ci[0] < 0  # unbounded: what it printed before
    est = mean_estimate(values, bounds=(0.0, 1.0))
    p, se = est.value, est.se
    n_eff = p * (1 - p) / se**2  # the n of 0/1 samples with this mean and this error
    assert est.effective_n is not None and close(est.effective_n, max(n_eff, 8))
    assert est.estimator == f"clopper-pearson at effective n {est.effective_n:.4g}"
    x = p * est.effective_n
    assert close(est.ci[0], stats.beta.ppf(0.025, x, est.effective_n - x + 1))
    assert close(est.ci[1], stats.beta.ppf(0.975, x + 1, est.effective_n - x))
    assert 0 < est.ci[0] < p < est.ci[1] < 1
    # a range other than [0, 1]: the same on the scaled values
    scaled = mean_estimate([10 * v - 5 for v in values], bounds=(-5.0, 5.0))
    assert close(scaled.ci[0], 10 * est.ci[0] - 5) and close(scaled.ci[1], 10 * est.ci[1] - 5)
    # values that do not vary inside the range: the worst case, n itself
    flat = mean_estimate([0.5] * 6, bounds=(0.0, 1.0))
    assert flat.effective_n == 6.0 and flat.ci[0] < 0.5 < flat.ci[1]
    # a 0/1 metric under another range is not a proportion (a log-likelihood of 0 everywhere)
    assert mean_estimate([0.0] * 5, bounds=(-math.inf, 0.0)).estimator == "clt"


def test_a_half_bounded_mean_is_clipped_to_its_range() -> None:
    # log-likelihoods: mean -2.5005, se 2.4995: mean ± z·se = (-7.40, 2.40) passes 0
    est = mean_estimate([-0.001, -5.0], bounds=(-math.inf, 0.0))
    assert close(est.ci[0], -2.5005 - Z * 2.4995)
    assert est.ci[1] == 0.0
    assert est.estimator == "clt, clipped to ≤ 0"
    # clipping never excludes a true mean that lies in the range, so coverage stays
    inside = mean_estimate([-3.0, -5.0, -4.0], bounds=(-math.inf, 0.0))
    assert inside.estimator == "clt" and inside.ci[1] < 0


def test_a_paired_difference_of_a_bounded_metric_is_clipped_to_its_width() -> None:
    est = paired_difference([0, 0, 0, 0], [1, 0, 1, 1], bounds=(0.0, 1.0))
    assert close(est.ci[0], 0.75 - Z * 0.25) and est.ci[1] == 1.0
    assert est.estimator == "clt, clipped to [-1, 1]"


def test_a_perplexity_interval_is_the_mean_log_likelihoods_mapped() -> None:
    # ll = [-1, -2, -3]: mean -2, se 1/√3; perplexity exp(2) with the interval
    # [exp(2 - z/√3), exp(2 + z/√3)] and se exp(2)/√3 (the delta method)
    figure = Derived(of="loglikelihood", scale=-1, exp=True)
    est = derived_estimate(figure, {"loglikelihood": [-1.0, -2.0, -3.0]})
    assert close(est.value, math.exp(2))
    assert close(est.ci[0], math.exp(2 - Z / math.sqrt(3)))
    assert close(est.ci[1], math.exp(2 + Z / math.sqrt(3)))
    assert close(est.se, math.exp(2) / math.sqrt(3))
    assert est.estimator == (
        "exp(-mean loglikelihood): the mean's clt interval, mapped (delta method on the log scale)"
    )


def test_a_ratio_of_sums_has_the_linearized_variance() -> None:
    # word perplexity exp(-Σll/Σwords): Var(R) ≈ (s_y² − 2R·s_xy + R²·s_x²) / (n·x̄²), the
    # delta method written with numpy's sample (co)variances
    ll = [-310.0, -95.0, -1020.0, -480.0, -66.0]
    words = [100.0, 40.0, 300.0, 150.0, 30.0]
    est = derived_estimate(
        Derived(of="loglikelihood", per="words", scale=-1, exp=True),
        {"loglikelihood": ll, "words": words},
    )
    ratio = sum(ll) / sum(words)
    cov = np.cov(np.array([ll, words]), ddof=1)
    var = (cov[0, 0] - 2 * ratio * cov[0, 1] + ratio**2 * cov[1, 1]) / (5 * np.mean(words) ** 2)
    assert close(est.value, math.exp(-ratio))
    assert close(math.log(est.ci[1]), -ratio + Z * math.sqrt(var))
    assert close(math.log(est.ci[0]), -ratio - Z * math.sqrt(var))
    # bits per byte: a linear map, the interval's ends swap with the sign
    bpb = derived_estimate(
        Derived(of="loglikelihood", per="words", scale=-1 / math.log(2)),
        {"loglikelihood": ll, "words": words},
    )
    assert close(bpb.ci[0], (-ratio - Z * math.sqrt(var)) / math.log(2))


def test_a_perplexity_interval_agrees_with_lm_evals_bootstrap() -> None:
    # lm-eval's perplexity stderr is a bootstrap's; on 400 skewed log-likelihoods the mapped
    # interval's ends are within 3% of the bootstrap's 2.5% and 97.5% percentiles, and the
    # delta method's se within 5% of the bootstrap's SD
    rng = np.random.default_rng(7)
    ll = -rng.gamma(2.0, 1.5, size=400)
    est = derived_estimate(Derived(of="loglikelihood", scale=-1, exp=True), {"loglikelihood": ll})
    draws = rng.integers(0, len(ll), size=(20_000, len(ll)))
    boot = np.exp(-ll[draws].mean(axis=1))
    lo, hi = np.percentile(boot, [2.5, 97.5])
    assert est.ci[0] == pytest.approx(lo, rel=0.03) and est.ci[1] == pytest.approx(hi, rel=0.03)
    assert est.se == pytest.approx(float(boot.std()), rel=0.05)


def test_a_weighted_bounded_figure_stays_in_its_range() -> None:
    # IFEval's instruction-level accuracy: per-prompt shares weighted by instructions
    shares, counts = [1.0, 1.0, 0.5, 1.0, 2 / 3], [1.0, 2.0, 2.0, 1.0, 3.0]
    figure = Derived(of="acc", per="n", weighted=True, bounds=(0.0, 1.0))
    est = derived_estimate(figure, {"acc": shares, "n": counts})
    assert close(est.value, (1 + 2 + 1 + 1 + 2) / 9)
    assert 0 < est.ci[0] < est.value < est.ci[1] < 1
    assert est.effective_n is not None and est.effective_n >= 9**2 / sum(c * c for c in counts)
    every = derived_estimate(figure, {"acc": [1.0] * 5, "n": counts})
    assert every.ci[1] == 1.0 and every.ci[0] < 1  # all followed: no collapse to [1, 1]


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
    if is_binary(values):  # Korn and Graubard: Clopper–Pearson at n / DEFF
        p, n = float(np.mean(values)), len(values)
        sizes = np.unique(groups, return_counts=True)[1]
        worst = n * n / float(np.sum(sizes**2))
        if 0 < p < 1:  # DEFF from the CR1 variance, kept between 1 and Σm²/n
            se = float(fit.bse[0])
            n_eff = min(max(worst, p * (1 - p) / se**2), n) if se > 0 else n
        else:
            n_eff = worst
        x = p * n_eff
        lo = float(stats.beta.ppf(0.025, x, n_eff - x + 1)) if x > 0 else 0.0
        hi = float(stats.beta.ppf(0.975, x + 1, n_eff - x)) if x < n_eff else 1.0
        assert est.effective_n is not None and close(est.effective_n, n_eff)
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


# --- the sign-flip test on rows ------------------------------------------------------------


def test_the_constructed_pair_is_tested_by_row() -> None:
    # 40 rows x 4 repeats; B right on every repeat of 8 rows A got wrong, A on 4 rows B got
    # wrong: McNemar over the 160 "pairs" (32 vs 16) says p = 0.0293; by row it is 8 vs 4,
    # McNemar's exact test on the rows, 2 · P[Binomial(12, 1/2) <= 4] = 2 · 794/4096
    rows = [f"r{i}" for i in range(40) for _ in range(4)]
    a = [1.0 if 8 <= i // 4 < 22 else 0.0 for i in range(160)]
    b = [1.0 if i // 4 < 8 or 12 <= i // 4 < 22 else 0.0 for i in range(160)]
    assert mcnemar(a, b).p_value == pytest.approx(0.0293, abs=5e-5)
    result = sign_flip(a, b, rows)
    assert result.p_value == 2 * 794 / 4096
    assert (result.rows, result.b_better, result.a_better, result.tied) == (40, 8, 4, 28)
    assert (result.statistic, result.method) == (16, "exact")
    diff = paired_difference(a, b, rows)
    assert diff.ci == pytest.approx((-0.069011, 0.269011), abs=1e-6)


@st.composite
def repeated_pairs(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    rows = draw(st.integers(1, 9))
    sizes = draw(st.lists(st.integers(1, 4), min_size=rows, max_size=rows))
    keys = [r for r, m in enumerate(sizes) for _ in range(m)]
    bit = st.sampled_from([0, 1])
    a = draw(st.lists(bit, min_size=len(keys), max_size=len(keys)))
    b = draw(st.lists(bit, min_size=len(keys), max_size=len(keys)))
    return a, b, keys


@settings(max_examples=300, deadline=None)
@given(repeated_pairs())
def test_the_sign_flip_p_value_is_the_share_of_sign_assignments(
    sample: tuple[list[int], list[int], list[int]],
) -> None:
    a, b, keys = sample
    totals = [sum(y - x for x, y, k in zip(a, b, keys, strict=True) if k == r) for r in set(keys)]
    observed = abs(sum(totals))
    extreme = sum(
        abs(sum(s * abs(t) for s, t in zip(signs, totals, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(totals))
    )
    assert close(sign_flip(a, b, keys).p_value, extreme / 2 ** len(totals))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1])), min_size=1))
def test_one_sample_a_row_is_mcnemars_exact_test(pairs: list[tuple[int, int]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    assert sign_flip(a, b, list(range(len(pairs)))).p_value == mcnemar(a, b).p_value


def test_the_normal_approximation_beyond_the_exact_work(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    rows = [r for r in range(300) for _ in range(4)]
    a = rng.binomial(1, 0.5, size=1200).tolist()
    b = rng.binomial(1, 0.56, size=1200).tolist()
    exact = sign_flip(a, b, rows)
    monkeypatch.setattr(unc, "_FLIP_EXACT_WORK", 0)
    approx = sign_flip(a, b, rows)
    assert (exact.method, approx.method) == ("exact", "normal approximation")
    # in the tail at 300 rows (p ≈ 0.002) within 10%; it serves only beyond thousands of rows
    assert 0.001 < exact.p_value < 0.5
    assert approx.p_value == pytest.approx(exact.p_value, rel=0.1)


def test_the_sign_flip_test_refuses_what_is_not_0_1() -> None:
    with pytest.raises(ValueError, match="sample 1 has a=0.5"):
        sign_flip([1, 0.5], [1, 1], [0, 0])
    with pytest.raises(ValueError, match="matched"):
        sign_flip([1, 0], [1], [0, 0])


@pytest.mark.parametrize(
    ("q", "a", "b"),
    [(0.025, 3, 10), (0.975, 0.5, 40), (0.975, 800, 14000), (0.025, 0.3, 2), (0.5, 2, 2)],
)
def test_the_beta_quantile_matches_scipy(q: float, a: float, b: float) -> None:
    assert close(beta_quantile(q, a, b), float(stats.beta.ppf(q, a, b)))
