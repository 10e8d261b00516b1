"""Pick an answer from per-choice scores.

- ``acc``: the choice with the largest log-likelihood sum.
- ``acc_norm``: the largest sum divided by the continuation's character count (the
  lm-evaluation-harness definition; not tokens, not bytes).

Ties go to the lowest index (the first choice listed), so a prediction never depends on
dictionary or set order.
"""

from __future__ import annotations

from collections.abc import Sequence

from .continuation import ContinuationScore

__all__ = ["argmax", "pick_acc", "pick_acc_norm"]


def argmax(values: Sequence[float]) -> int:
    """Index of the largest value; the lowest index among equals."""
    if not values:
        raise ValueError("argmax of an empty sequence")
    best = 0
    for i, value in enumerate(values):
        if value > values[best]:
            best = i
    return best


def pick_acc(scores: Sequence[ContinuationScore]) -> int:
    """The choice with the highest log-likelihood sum."""
    return argmax([s.logprob_sum for s in scores])


def pick_acc_norm(scores: Sequence[ContinuationScore]) -> int:
    """The choice with the highest log-likelihood per character."""
    return argmax([s.logprob_sum / s.n_chars for s in scores])
