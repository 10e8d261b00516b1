"""Censored answers: an answer the token budget cut before it gave one is neither right nor wrong.

An answer is **censored** when its reasoning never closed (a ``<think>`` block left open), or
when it ended for length (in its wire's word: ``ir.response.ended_for_length``) with no final
answer read: the checker extracted nothing, or what it read is not final (the whole text for
IFEval, a code block whose fence never closed). An answer that ended for length *after* giving
its final answer (a closed box, then more text) is not censored: it is scored like any other.
Users of every harness ask for this outcome (lm-evaluation-harness #3400; Inspect #5467, whose
fix only warns).

The headline still scores a censored answer as its checker did (no answer: wrong), and every
view shows beside it the censored share and two bounds (``bounds``):

- **counted wrong**: every censored answer scores 0, the figure a harness blind to the budget
  reports (a lower bound for what the model would score with room to answer);
- **left out**: the mean over the answers that were not censored (the model where the budget
  let it answer; not an upper bound: the cut answers may be the hard ones).

A wide gap between the two says the budget, not the model, decides the score: raise the task's
``max_tokens``, or re-run the censored samples at a larger budget (``--rerun-censored FACTOR``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..ir.response import ended_for_length
from .uncertainty import Estimate, mean_estimate

__all__ = ["bounds", "censored"]


def censored(finish: str | None, answered: bool, *, open_reasoning: bool = False) -> bool:
    """Whether the budget cut the answer before it gave one: its reasoning never closed, or it
    ended for length without a final answer (``answered``: the checker read a final one)."""
    return open_reasoning or (ended_for_length(finish) and not answered)


def bounds(
    values: Sequence[float],
    flags: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    level: float = 0.95,
) -> tuple[Estimate, Estimate | None]:
    """The headline's bounds over the censored samples (``flags[i]`` 1.0 when sample i is):
    counted wrong (a censored sample scores 0) and left out (None when every sample is), each
    with its interval, clustered as the headline is."""
    if len(values) != len(flags) or (clusters is not None and len(clusters) != len(values)):
        raise ValueError("values, flags and clusters must be one per sample")
    wrong = [0.0 if flag else float(v) for v, flag in zip(values, flags, strict=True)]
    kept = [i for i, flag in enumerate(flags) if not flag]
    as_wrong = mean_estimate(wrong, clusters=clusters, level=level)
    if not kept:
        return as_wrong, None
    left_out = mean_estimate(
        [float(values[i]) for i in kept],
        clusters=[clusters[i] for i in kept] if clusters is not None else None,
        level=level,
    )
    return as_wrong, left_out
