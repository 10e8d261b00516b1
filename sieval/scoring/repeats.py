"""Scores over repeated samples of one item: pass@k, maj@k, and the mean over repeats.

- pass@k: the unbiased estimator of Chen et al. 2021, "Evaluating Large Language Models Trained
  on Code" (arXiv:2107.03374, section 2.1): with n samples of an item of which c are correct,
  ``1 - C(n-c, k) / C(n, k)``, computed as the paper's numerically stable product
  ``1 - prod_{i=n-c+1}^{n} (1 - k / i)``; 1 when ``n - c < k``.
- maj@k: majority vote over the first k samples' extracted answers (an invalid answer, None,
  has no vote); the most frequent answer wins, a tie goes to the answer seen first; the item
  scores 1 when the winner is correct, 0 when it is wrong or every answer was invalid. Votes
  count answers as extracted strings: pass a canonical form to merge equal values.
- mean over repeats: every sample's score, averaged.

Intervals come from ``uncertainty.mean_estimate``, in [0, 1] always: pass@k and maj@k give one
value per item (independent items; pass@k's values lie in [0, 1], so its interval is
Clopper–Pearson's at the effective n, maj@k's Wilson's); the mean over repeats gives one value per
sample, clustered by item (repeats of one item are not independent): the CR1 clustered standard
error, and Clopper–Pearson's interval at the effective n (Korn and Graubard), which stays above 0
when every repeat of every item is wrong.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from .uncertainty import UNIT, Estimate, mean_estimate

__all__ = ["maj_at_k", "maj_at_k_estimate", "mean_over_repeats", "pass_at_k",
           "pass_at_k_estimate"]  # fmt: skip


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one item with ``c`` correct among ``n`` samples."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, not n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def maj_at_k(answers: Sequence[str | None], correct: Sequence[bool], k: int) -> float:
    """maj@k of one item from its samples' extracted answers and their correctness."""
    if len(answers) != len(correct):
        raise ValueError(f"{len(answers)} answers but {len(correct)} correctness flags")
    if not 1 <= k <= len(answers):
        raise ValueError(f"maj@k needs 1 <= k <= the {len(answers)} samples, not k={k}")
    votes: dict[str, int] = {}
    right: dict[str, bool] = {}
    for answer, ok in zip(answers[:k], correct[:k], strict=True):
        if answer is not None:
            votes[answer] = votes.get(answer, 0) + 1
            right.setdefault(answer, ok)
    if not votes:
        return 0.0
    winner = max(votes, key=lambda a: votes[a])  # max keeps the first of equal counts
    return 1.0 if right[winner] else 0.0


def _check_items(scores: Mapping[Hashable, Sequence[float]]) -> None:
    for item, values in scores.items():
        if not values:
            raise ValueError(f"item {item!r} has no samples")


def pass_at_k_estimate(
    scores: Mapping[Hashable, Sequence[bool]], k: int, level: float = 0.95
) -> Estimate:
    """Mean pass@k over items (``scores[item]`` = each sample's correctness), with its interval."""
    _check_items(scores)
    values = [pass_at_k(len(v), sum(map(bool, v)), k) for v in scores.values()]
    return mean_estimate(values, level=level, bounds=UNIT)


def maj_at_k_estimate(
    answers: Mapping[Hashable, Sequence[str | None]],
    correct: Mapping[Hashable, Sequence[bool]],
    k: int,
    level: float = 0.95,
) -> Estimate:
    """Mean maj@k over items, with its interval."""
    if answers.keys() != correct.keys():
        raise ValueError("answers and correct must hold the same items")
    values = [maj_at_k(answers[item], correct[item], k) for item in answers]
    return mean_estimate(values, level=level, bounds=UNIT)


def mean_over_repeats(scores: Mapping[Hashable, Sequence[float]], level: float = 0.95) -> Estimate:
    """The mean of every sample's score, its interval clustered by item."""
    _check_items(scores)
    values = [float(v) for item in scores for v in scores[item]]
    clusters = [item for item in scores for _ in scores[item]]
    return mean_estimate(values, clusters=clusters, level=level, bounds=UNIT)
