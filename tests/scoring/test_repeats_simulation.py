"""Repeats of a row are not independent pairs: the row-clustered interval of a paired difference,
the sign-flip test on rows and the power counted in rows, each checked against simulated pairs of
runs whose effect and repeat correlation are known (seeded; numpy draws the runs, sieval's own
functions compute each run's interval and test).

The model: row r has a difficulty l_r ~ Normal(0.3, 2²); each run answers it right with
probability expit(l_r + u + β·[run B]), u ~ Normal(0, τ²) drawn per run and row (how much the
runs differ on a row beyond the difficulty they share), each of the row's k repeats a Bernoulli
draw of it. With τ > 0 the differences of a row's repeats correlate (they share u_B − u_A):
what McNemar's test and the interval over samples ignore. With β = 0 the two runs are
exchangeable row by row, the sign-flip test's null hypothesis.

Each check holds within Monte-Carlo error: a rate r over R simulated pairs has the standard
error √(r(1 − r)/R); TOLERANCE is three of them at the nominal rate.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sieval.scoring.power import Design, samples_needed
from sieval.scoring.uncertainty import mcnemar, mean_estimate, paired_difference, sign_flip

ROWS, REPEATS = 40, 4
MEAN, SPREAD = 0.3, 2.0
PAIRS = 2000


def tolerance(rate: float, pairs: int = PAIRS) -> float:
    return 3 * math.sqrt(rate * (1 - rate) / pairs)


def expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def chances(
    rng: np.random.Generator, shape: tuple[int, ...], tau: float, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's probability of a right answer in run A and in run B."""
    difficulty = rng.normal(MEAN, SPREAD, shape)
    a = expit(difficulty + rng.normal(0, tau, shape))
    b = expit(difficulty + beta + rng.normal(0, tau, shape))
    return a, b


def population(rng: np.random.Generator, tau: float, beta: float) -> dict[str, float]:
    """The true difference Δ, discordance ψ and the correlation of a row's repeats' differences,
    from 4 million rows (their errors are near 1e-4, well below what the checks resolve)."""
    a, b = chances(rng, (4_000_000,), tau, beta)
    delta = float(np.mean(b - a))
    psi = float(np.mean(a * (1 - b) + b * (1 - a)))  # P[one repeat's answers differ]
    # a row's mean difference over k repeats: Var = E[Var | row]/k + Var(b − a)
    row_var = float(np.mean(a * (1 - a) + b * (1 - b)) / REPEATS + np.var(b - a))
    icc = (REPEATS * row_var / (psi - delta**2) - 1) / (REPEATS - 1)
    return {"delta": delta, "psi": psi, "icc": icc}


def simulated(
    rng: np.random.Generator, rows: int, tau: float, beta: float, pairs: int = PAIRS
) -> tuple[np.ndarray, np.ndarray]:
    """``pairs`` pairs of runs over ``rows`` rows of REPEATS samples: 0/1 arrays (pairs, n)."""
    a, b = chances(rng, (pairs, rows), tau, beta)
    repeat = np.repeat(np.arange(rows), REPEATS)
    return rng.binomial(1, a[:, repeat]), rng.binomial(1, b[:, repeat])


def row_ids(rows: int) -> list[str]:
    return [f"r{r}" for r in range(rows) for _ in range(REPEATS)]


def rates(a: np.ndarray, b: np.ndarray, truth: float) -> dict[str, float]:
    """Over the simulated pairs: how often each interval covers ``truth`` and each test rejects
    at 0.05, by row (sieval compare's) and by sample (as before: repeats as independent pairs)."""
    keys = row_ids(a.shape[1] // REPEATS)
    count = dict.fromkeys(("covers rows", "covers samples", "rejects rows", "rejects samples"), 0)
    for xs, ys in zip(a.tolist(), b.tolist(), strict=True):
        by_row, by_sample = paired_difference(xs, ys, keys), paired_difference(xs, ys)
        count["covers rows"] += by_row.ci[0] <= truth <= by_row.ci[1]
        count["covers samples"] += by_sample.ci[0] <= truth <= by_sample.ci[1]
        count["rejects rows"] += sign_flip(xs, ys, keys).p_value <= 0.05
        count["rejects samples"] += mcnemar(xs, ys).p_value <= 0.05
    return {k: v / len(a) for k, v in count.items()}


@pytest.fixture(scope="module")
def no_effect() -> dict[str, float]:
    rng = np.random.default_rng(33)
    return rates(*simulated(rng, ROWS, tau=1.5, beta=0.0), truth=0.0)


def test_without_an_effect_the_row_test_keeps_its_size_and_mcnemar_over_samples_does_not(
    no_effect: dict[str, float],
) -> None:
    # the sign-flip test is exact under the null: at most 0.05 (a discrete test may stay below)
    assert no_effect["rejects rows"] <= 0.05 + tolerance(0.05), no_effect
    assert no_effect["rejects rows"] >= 0.02, no_effect  # not a test that never rejects
    # the repeats counted as independent pairs: about one false alarm in nine
    assert no_effect["rejects samples"] > 0.05 + 2 * tolerance(0.05), no_effect


def test_without_an_effect_the_row_interval_covers_and_the_sample_interval_does_not(
    no_effect: dict[str, float],
) -> None:
    assert abs(no_effect["covers rows"] - 0.95) <= tolerance(0.95), no_effect
    assert no_effect["covers samples"] < 0.95 - 3 * tolerance(0.95), no_effect


def test_with_an_effect_the_row_interval_covers_the_true_difference() -> None:
    rng = np.random.default_rng(34)
    truth = population(rng, tau=1.5, beta=0.5)["delta"]
    found = rates(*simulated(rng, ROWS, tau=1.5, beta=0.5), truth=truth)
    assert abs(found["covers rows"] - 0.95) <= tolerance(0.95), found
    assert found["covers samples"] < 0.95 - 3 * tolerance(0.95), found


def power_of(rng: np.random.Generator, rows: int, tau: float, beta: float, pairs: int) -> float:
    a, b = simulated(rng, rows, tau, beta, pairs)
    keys = row_ids(rows)
    rejected = sum(
        sign_flip(xs, ys, keys).p_value <= 0.05
        for xs, ys in zip(a.tolist(), b.tolist(), strict=True)
    )
    return rejected / pairs


def test_the_rows_a_comparison_needs_reach_the_power_in_simulated_runs() -> None:
    rng = np.random.default_rng(35)
    tau, beta, pairs = 1.5, 1.0, 1000
    truth = population(rng, tau, beta)
    design = Design(discordance=truth["psi"], repeats=REPEATS, icc=truth["icc"])
    rows = samples_needed(design, truth["delta"])
    assert rows is not None
    found = power_of(rng, rows, tau, beta, pairs)
    assert abs(found - 0.8) <= tolerance(0.8, pairs), (rows, found)
    # counted as before, in samples as if independent (McNemar's n), the rows fall short
    samples = samples_needed(Design(discordance=truth["psi"]), truth["delta"])
    assert samples is not None and math.ceil(samples / REPEATS) < rows
    short = power_of(rng, math.ceil(samples / REPEATS), tau, beta, pairs)
    assert short < 0.8 - tolerance(0.8, pairs), (samples, short)


@pytest.mark.parametrize("chance", [0.01, 0.05, 0.5])
def test_a_repeats_headline_keeps_its_coverage_near_0_and_in_the_middle(chance: float) -> None:
    """10 rows x 4 repeats, each row's chance Beta-distributed around ``chance`` with ICC 0.3:
    the headline's interval (sieval's, computed once per distinct outcome: it depends only on
    the rows' counts) covers the true accuracy at least as often as 95%, within Monte-Carlo
    error; the CR1 interval clipped to [0, 1] that it replaces (0.000–0.000 when every answer
    is wrong) did not near 0."""
    rng = np.random.default_rng(36)
    rows, icc = 10, 0.3
    spread = 1 / icc - 1
    p = rng.beta(chance * spread, (1 - chance) * spread, size=(PAIRS, rows))
    counts = np.sort(rng.binomial(REPEATS, p), axis=1)
    keys = [f"r{r}" for r in range(rows) for _ in range(REPEATS)]
    covered = clipped = 0
    cache: dict[tuple[int, ...], tuple[tuple[float, float], tuple[float, float]]] = {}
    for row_counts in map(tuple, counts.tolist()):
        if row_counts not in cache:
            values = [float(i < c) for c in row_counts for i in range(REPEATS)]
            estimate = mean_estimate(values, keys)
            z_se = 1.959964 * estimate.se
            old = (max(0.0, estimate.value - z_se), min(1.0, estimate.value + z_se))
            cache[row_counts] = estimate.ci, old
        new, old = cache[row_counts]
        covered += new[0] <= chance <= new[1]
        clipped += old[0] <= chance <= old[1]
    assert covered / PAIRS >= 0.95 - tolerance(0.95), covered / PAIRS
    if chance < 0.5:
        assert clipped / PAIRS < 0.9, clipped / PAIRS
