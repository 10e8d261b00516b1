"""acc / acc_norm picking and their tie-break."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.scoring import ContinuationScore, argmax, pick_acc, pick_acc_norm


def cs(logprob_sum: float, n_chars: int) -> ContinuationScore:
    return ContinuationScore(
        logprob_sum=logprob_sum, n_tokens=1, n_chars=n_chars, n_bytes=n_chars, is_greedy=None
    )


def test_acc_and_acc_norm_disagree() -> None:
    # " a": -2.0 over 2 chars = -1.0/char; " abcdef": -3.0 over 7 chars = -0.43/char
    scores = [cs(-2.0, 2), cs(-3.0, 7)]
    assert pick_acc(scores) == 0
    assert pick_acc_norm(scores) == 1


def test_ties_go_to_the_lowest_index() -> None:
    assert argmax([-1.0, -0.5, -0.5]) == 1
    assert pick_acc([cs(-1.0, 2), cs(-1.0, 4)]) == 0
    assert pick_acc_norm([cs(-1.0, 2), cs(-2.0, 4)]) == 0


def test_argmax_empty() -> None:
    with pytest.raises(ValueError):
        argmax([])


@given(st.lists(st.floats(allow_nan=False), min_size=1))
def test_argmax_is_the_first_maximum(values: list[float]) -> None:
    assert argmax(values) == values.index(max(values))
