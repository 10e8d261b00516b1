"""Scores over repeated samples of one item: pass@k, maj@k, and the mean over repeats.

- pass@k: the unbiased estimator of Chen et al. 2021, "Evaluating Large Language Models Trained
  on Code" (arXiv:2107.03374, section 2.1): with n samples of an item of which c are correct,
  ``1 - C(n-c, k) / C(n, k)``, computed as the paper's numerically stable product
  ``1 - prod_{i=n-c+1}^{n} (1 - k / i)``; 1 when ``n - c < k``.
- pass^k (:func:`pass_hat_k`): all k of k draws pass, τ-bench's estimator ``C(c, k) / C(n, k)``
  (the reliability figure beside pass@k's "some of k").
- maj@k: majority vote over the first k samples' extracted answers (an invalid answer, None,
  has no vote). Answers are grouped by the task's equivalence (``Equivalence``: math-verify for
  the math tasks, the extracted letter for multiple choice, by default the same text after
  Unicode NFC and trimming, ``SAME_TEXT``), in repeat order: each answer joins the first group
  whose first answer it equals (that first answer in the gold's place: math-verify is not
  symmetric), else opens a group. The group with the most answers wins; **a tie goes to the
  group whose first answer came first** (lm-evaluation-harness's ``majority_vote`` filter does
  the same: ``Counter.most_common`` keeps first-insertion order among equal counts). The item
  scores 1 when the winning group's first answer was correct, 0 when it was wrong or every
  answer was invalid. Groups are built once over all the repeats (a group depends only on the
  answers before it), so maj@k for every k reads the same groups.
- mean over repeats: every sample's score, averaged.

Intervals come from ``uncertainty.mean_estimate``, in [0, 1] always: pass@k and maj@k give one
value per item (independent items; pass@k's values lie in [0, 1], so its interval is
Clopper–Pearson's at the effective n, maj@k's Wilson's); the mean over repeats gives one value per
sample, clustered by item (repeats of one item are not independent): the CR1 clustered standard
error, and Clopper–Pearson's interval at the effective n (Korn and Graubard), which stays above 0
when every repeat of every item is wrong.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

from .uncertainty import UNIT, Estimate, mean_estimate

__all__ = ["SAME_TEXT", "Equivalence", "maj_at_k", "maj_at_k_estimate", "mean_over_repeats",
           "pass_at_k", "pass_at_k_estimate", "pass_hat_k", "same_text", "vote_groups"]  # fmt: skip


def same_text(first: str, other: str) -> bool:
    """The default equivalence: the same text after Unicode NFC and trimming outer whitespace
    (nothing a checker could tell apart is merged)."""
    return _plain(first) == _plain(other)


def _plain(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


@dataclass(frozen=True)
class Equivalence:
    """When two extracted answers of one row are the same answer, for maj@k's vote."""

    about: str
    """What it compares, in words (said in the task's protocol)."""
    same: Callable[[str, str], bool]
    """``same(first, other)``: ``other`` equals ``first``, the first answer of a group."""


SAME_TEXT = Equivalence("the same text after Unicode NFC and trimming", same_text)


def vote_groups(answers: Sequence[str | None], same: Callable[[str, str], bool]) -> list[int]:
    """Each answer's group (numbered in order of first appearance), -1 for an invalid one: an
    answer joins the first group whose first answer has the same text (``same_text``) or
    ``same(first, answer)`` holds for."""
    firsts: list[str] = []
    out = []
    for answer in answers:
        if answer is None:
            out.append(-1)
            continue
        # the same text is the same answer (whatever ``same`` makes of text it cannot parse)
        found = next(
            (g for g, f in enumerate(firsts) if _plain(f) == _plain(answer) or same(f, answer)),
            None,
        )
        if found is None:
            found = len(firsts)
            firsts.append(answer)
        out.append(found)
    return out


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


def maj_at_k(
    answers: Sequence[str | None],
    correct: Sequence[bool],
    k: int,
    same: Callable[[str, str], bool] = same_text,
    groups: Sequence[int] | None = None,
) -> float:
    """maj@k of one item from its samples' extracted answers and their correctness, answers
    grouped by ``same`` (or by ``groups``, ``vote_groups``'s result when already computed)."""
    if len(answers) != len(correct):
        raise ValueError(f"{len(answers)} answers but {len(correct)} correctness flags")
    if not 1 <= k <= len(answers):
        raise ValueError(f"maj@k needs 1 <= k <= the {len(answers)} samples, not k={k}")
    labels = list(groups[:k]) if groups is not None else vote_groups(answers[:k], same)
    votes: dict[int, int] = {}
    right: dict[int, bool] = {}
    for label, ok in zip(labels, correct[:k], strict=True):
        if label >= 0:
            votes[label] = votes.get(label, 0) + 1
            right.setdefault(label, ok)  # the group's first answer decides
    if not votes:
        return 0.0
    winner = max(votes, key=lambda g: (votes[g], -g))  # a tie: the group seen first
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
    same: Callable[[str, str], bool] = same_text,
) -> Estimate:
    """Mean maj@k over items, with its interval."""
    if answers.keys() != correct.keys():
        raise ValueError("answers and correct must hold the same items")
    values = [maj_at_k(answers[item], correct[item], k, same) for item in answers]
    return mean_estimate(values, level=level, bounds=UNIT)


def mean_over_repeats(scores: Mapping[Hashable, Sequence[float]], level: float = 0.95) -> Estimate:
    """The mean of every sample's score, its interval clustered by item."""
    _check_items(scores)
    values = [float(v) for item in scores for v in scores[item]]
    clusters = [item for item in scores for _ in scores[item]]
    return mean_estimate(values, clusters=clusters, level=level, bounds=UNIT)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one item with ``c`` correct among ``n`` samples: the probability that k draws
    without replacement all pass, ``C(c, k) / C(n, k)`` (Yao et al. 2024, "τ-bench: A Benchmark
    for Tool-Agent-User Interaction in Real-World Domains", arXiv:2406.12045);
    computed as the product ``prod_{i=0}^{k-1} (c - i) / (n - i)``, 0 when ``c < k``."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n, not n={n}, c={c}, k={k}")
    product = 1.0
    for i in range(k):
        product *= (c - i) / (n - i)
    return max(product, 0.0)
