"""The power of McNemar's exact test computed by scipy, independently of ``sieval/scoring/power.py``
(shared by the scoring, audit and cli tests).

Each discordant count m is Binomial(n, ψ); McNemar's exact test rejects at p <= alpha, with
p = min(1, 2·Binomial(m, 1/2).cdf(min(b, c))) as statsmodels' ``mcnemar(exact=True)`` computes
it, so it rejects when min(b, c) <= k_m, k_m the largest k with 2·cdf(k) <= alpha (found here
from scipy's ``binom.ppf``); given m, B is Binomial(m, q), q = (ψ + Δ) / (2ψ).
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def critical_counts(m: np.ndarray, alpha: float) -> np.ndarray:
    """k_m for each m: the largest k with 2·Binomial(m, 1/2).cdf(k) <= alpha; -1 when none."""
    k = stats.binom.ppf(alpha / 2, m, 0.5)  # the smallest k with cdf(k) >= alpha / 2
    return np.where(2 * stats.binom.cdf(k, m, 0.5) <= alpha, k, k - 1).astype(int)


def exact_mcnemar_power(n: int, psi: float, delta: float, alpha: float = 0.05) -> float:
    m = np.arange(1, n + 1)
    weights = stats.binom.pmf(m, n, psi)
    keep = weights > 1e-18
    m, weights = m[keep], weights[keep]
    k = critical_counts(m, alpha)
    q = (psi + abs(delta)) / (2 * psi)
    reject = np.where(k >= 0, stats.binom.cdf(k, m, q) + stats.binom.sf(m - k - 1, m, q), 0.0)
    return float(np.sum(weights * reject))
