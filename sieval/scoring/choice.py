"""Pick an answer from per-choice scores.

- ``acc``: the choice with the largest log-likelihood sum.
- ``acc_norm``: the largest sum divided by the character count of the choice text itself, without
  the target delimiter it was scored with: lm-evaluation-harness scores ``" " + choice`` but
  divides by ``len(choice)`` (``completion_len`` in ``ConfigurableTask.process_results``). Not
  tokens, not bytes, and not ``ContinuationScore.n_chars`` (which counts the delimiter).

Ties go to the lowest index (the first choice listed), as ``numpy.argmax`` does, so a prediction
never depends on dictionary or set order.
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


def pick_acc_norm(scores: Sequence[ContinuationScore], choices: Sequence[str]) -> int:
    """The choice with the highest log-likelihood per character of ``choices[i]``, the choice
    text without the delimiter (leading space) its continuation was scored with."""
    if len(scores) != len(choices):
        raise ValueError(f"acc_norm got {len(scores)} scores but {len(choices)} choices")
    empty = next((i for i, choice in enumerate(choices) if not choice), None)
    if empty is not None:
        raise ValueError(f"acc_norm divides by the choice's length, but choice {empty} is empty")
    return argmax([s.logprob_sum / len(c) for s, c in zip(scores, choices, strict=True)])
