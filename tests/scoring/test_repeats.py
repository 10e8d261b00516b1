"""pass@k, maj@k and the mean over repeats.

The oracle values of pass@k are computed independently here: exactly, as the fraction
``1 - C(n-c, k) / C(n, k)`` (math.comb, fractions.Fraction), and with the paper's own numpy
expression (Chen et al. 2021, Figure 3: ``1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.scoring.repeats import (
    maj_at_k,
    maj_at_k_estimate,
    mean_over_repeats,
    pass_at_k,
    pass_at_k_estimate,
    pass_hat_k,
    same_text,
    vote_groups,
)
from sieval.scoring.uncertainty import mean_estimate


def exact(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def paper(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@pytest.mark.parametrize(
    ("n", "c", "k", "value"),
    [
        (1, 1, 1, Fraction(1)),
        (1, 0, 1, Fraction(0)),
        (10, 3, 1, Fraction(3, 10)),  # pass@1 is c / n
        (5, 2, 2, Fraction(7, 10)),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (4, 1, 4, Fraction(1)),
        (200, 10, 1, Fraction(1, 20)),
    ],
)
def test_pass_at_k_known_values(n: int, c: int, k: int, value: Fraction) -> None:
    assert exact(n, c, k) == value
    assert pass_at_k(n, c, k) == pytest.approx(float(value), abs=1e-15)


@given(
    st.integers(1, 200).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_at_k_equals_the_exact_and_the_papers_value(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    ours = pass_at_k(n, c, k)
    assert ours == pytest.approx(float(exact(n, c, k)), abs=1e-9)
    assert ours == pytest.approx(paper(n, c, k), abs=1e-12)


def test_pass_at_k_rejects_impossible_counts() -> None:
    for n, c, k in ((3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)):
        with pytest.raises(ValueError, match="pass@k needs"):
            pass_at_k(n, c, k)


@pytest.mark.parametrize(
    ("n", "c", "k", "value"),
    [
        (5, 3, 2, Fraction(3, 10)),  # C(3,2)/C(5,2) = 3/10: both of 2 draws pass
        (10, 7, 3, Fraction(35, 120)),  # C(7,3)/C(10,3)
        (10, 3, 1, Fraction(3, 10)),  # pass^1 is c / n, as pass@1
        (4, 4, 4, Fraction(1)),
        (4, 3, 4, Fraction(0)),  # one failure among 4: 4 draws of 4 cannot all pass
        (8, 1, 2, Fraction(0)),
        (8, 6, 8, Fraction(0)),
    ],
)
def test_pass_hat_k_by_hand(n: int, c: int, k: int, value: Fraction) -> None:
    assert Fraction(math.comb(c, k), math.comb(n, k)) == value
    assert pass_hat_k(n, c, k) == pytest.approx(float(value), abs=1e-15)


@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_pass_hat_k_is_tau_bench_s_estimator_and_never_above_pass_at_k(
    nck: tuple[int, int, int],
) -> None:
    n, c, k = nck
    ours = pass_hat_k(n, c, k)
    assert ours == pytest.approx(math.comb(c, k) / math.comb(n, k), abs=1e-12)
    assert ours <= pass_at_k(n, c, k) + 1e-12  # all of k pass implies some of k pass
    with pytest.raises(ValueError, match=r"pass\^k needs"):
        pass_hat_k(n, n + 1, k)


def test_maj_at_k_by_hand() -> None:
    # "7" twice beats "5" once; a tie goes to the answer seen first; invalid answers do not vote
    assert maj_at_k(["5", "7", "7"], [True, False, False], 3) == 0.0
    assert maj_at_k(["5", "7", "7"], [True, False, False], 1) == 1.0
    assert maj_at_k(["7", "5", "5", "7"], [False, True, True, False], 4) == 0.0
    assert maj_at_k([None, None, "5"], [False, False, True], 3) == 1.0
    assert maj_at_k([None, None], [False, False], 2) == 0.0
    with pytest.raises(ValueError, match="1 <= k"):
        maj_at_k(["1"], [True], 2)
    with pytest.raises(ValueError, match="correctness flags"):
        maj_at_k(["1"], [True, False], 1)


def test_estimates_reuse_the_uncertainty_module() -> None:
    scores = {"a": [True, False, False, True], "b": [False] * 4, "c": [True] * 4}
    estimate = pass_at_k_estimate(scores, k=2)
    per_item = [float(exact(4, 2, 2)), 0.0, 1.0]
    assert estimate.value == pytest.approx(sum(per_item) / 3)
    # pass@k lies in [0, 1]: its interval is the bounded mean's, never outside the range
    assert estimate == mean_estimate([pass_at_k(4, 2, 2), 0.0, 1.0], bounds=(0.0, 1.0))
    assert estimate.ci[0] >= 0.0 and estimate.ci[1] <= 1.0
    assert mean_estimate([pass_at_k(4, 2, 2), 0.0, 1.0]).ci[1] > 1  # unbounded, it left it
    repeats = mean_over_repeats(scores)
    assert repeats.value == pytest.approx(6 / 12)
    assert repeats.estimator.startswith("clustered(cr1, 3 clusters), clopper-pearson")
    assert repeats.n == 12
    # every repeat of every item wrong: above 0, as for 3 independent items (ICC 1)
    wrong = mean_over_repeats({"a": [0.0] * 4, "b": [0.0] * 4, "c": [0.0] * 4})
    assert wrong.ci == (0.0, pytest.approx(1 - 0.025 ** (1 / 3)))
    # clustered by item: wider than if the 12 samples were independent
    assert repeats.se > mean_estimate([float(v) for vs in scores.values() for v in vs]).se
    answers = {"a": ["1", "2", "1"], "b": [None, "3", "3"]}
    correct = {"a": [True, False, True], "b": [False, False, False]}
    assert maj_at_k_estimate(answers, correct, k=3).value == 0.5
    with pytest.raises(ValueError, match="same items"):
        maj_at_k_estimate(answers, {"a": [True, False, True]}, k=3)
    with pytest.raises(ValueError, match="no samples"):
        mean_over_repeats({"x": []})


def test_maj_at_k_votes_by_the_equivalence_it_is_given() -> None:
    """The issue's MATH-500 row: 5, 14/3 three ways (three right by the checker). Raw strings
    are four votes of one (the first, 5, wins the tie: 0); by math-verify one group of three."""
    from sieval.scoring.math_answer import same_value

    answers = ["5", "\\frac{14}{3}", "14/3", "\\dfrac{14}{3}"]
    correct = [False, True, True, True]
    assert maj_at_k(answers, correct, 4) == 0.0  # the default: text
    assert vote_groups(answers, same_value) == [0, 1, 1, 1]
    assert maj_at_k(answers, correct, 4, same_value) == 1.0
    assert maj_at_k(answers, correct, 3, same_value) == 1.0  # 2 votes to 1
    assert maj_at_k(answers, correct, 2, same_value) == 0.0  # 1 to 1: a tie, to the first


def test_vote_groups_follow_the_first_answer_of_each_group() -> None:
    """Each answer joins the first group whose first answer it matches (``same(first, other)``,
    never symmetrised); text that is the same always joins (even what ``same`` cannot read);
    an invalid answer joins none."""

    def prefix(first: str, other: str) -> bool:  # "other starts like first": not symmetric
        return other.startswith(first)

    assert vote_groups(["ab", "a", "abc", None, "a", "zz"], prefix) == [0, 1, 0, -1, 1, 2]
    assert vote_groups(["x{", " x{", "x{"], lambda a, b: False) == [0, 0, 0]
    assert vote_groups(["é", "e\u0301"], lambda a, b: False) == [0, 0]  # NFC: one text


def test_a_tie_goes_to_the_group_answered_first_and_its_first_answer_decides() -> None:
    # two groups of two: the group of the first answer wins, whichever is right
    assert maj_at_k(["7", "5", "5", "7"], [False, True, True, False], 4) == 0.0
    assert maj_at_k(["5", "7", "7", "5"], [True, False, False, True], 4) == 1.0
    # a group's first answer decides (a checker and the equivalence may disagree on the rest)
    caseless = lambda first, other: first.lower() == other.lower()  # noqa: E731
    assert maj_at_k(["a", "A", "b"], [False, True, True], 3, caseless) == 0.0
    # groups given: the same answer as computing them
    labels = vote_groups(["1", "2", "2"], same_text)
    assert maj_at_k(["1", "2", "2"], [True, False, False], 3, groups=labels) == 0.0
