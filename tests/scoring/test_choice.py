"""acc / acc_norm picking and their tie-break."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.scoring import ContinuationScore, argmax, pick_acc, pick_acc_norm


def cs(logprob_sum: float, choice: str) -> ContinuationScore:
    """The score of the continuation ``" " + choice`` (lm-eval's target delimiter, then the
    choice), as the tasks score it."""
    text = " " + choice
    return ContinuationScore(logprob_sum=logprob_sum, n_tokens=1, n_chars=len(text),
                             n_bytes=len(text.encode()), is_greedy=None)  # fmt: skip


def test_acc_and_acc_norm_disagree() -> None:
    # "a": -2.0 over 1 char = -2.0/char; "abcdef": -3.0 over 6 chars = -0.5/char
    choices = ["a", "abcdef"]
    scores = [cs(-2.0, choices[0]), cs(-3.0, choices[1])]
    assert pick_acc(scores) == 0
    assert pick_acc_norm(scores, choices) == 1


def test_acc_norm_divides_by_the_choice_without_the_delimiter() -> None:
    # lm-eval: completion_len = len(choice), not len(" " + choice).
    # "a" -1.0/1 = -1.0 and "bcd" -2.5/3 = -0.83 -> 1;
    # dividing by the scored " a" (2) and " bcd" (4) would give -0.5 and -0.625 -> 0.
    choices = ["a", "bcd"]
    scores = [cs(-1.0, choices[0]), cs(-2.5, choices[1])]
    assert pick_acc_norm(scores, choices) == 1


def test_acc_norm_refuses_what_it_cannot_divide_by() -> None:
    with pytest.raises(ValueError, match="empty"):
        pick_acc_norm([cs(-1.0, "a"), cs(-1.0, "")], ["a", ""])
    with pytest.raises(ValueError, match="2 scores but 1 choices"):
        pick_acc_norm([cs(-1.0, "a"), cs(-1.0, "b")], ["a"])


def test_ties_go_to_the_lowest_index() -> None:
    assert argmax([-1.0, -0.5, -0.5]) == 1
    assert pick_acc([cs(-1.0, "a"), cs(-1.0, "abc")]) == 0
    assert pick_acc_norm([cs(-1.0, "ab"), cs(-2.0, "abcd")], ["ab", "abcd"]) == 0


def test_argmax_empty() -> None:
    with pytest.raises(ValueError):
        argmax([])


@given(st.lists(st.floats(allow_nan=False), min_size=1))
def test_argmax_is_the_first_maximum(values: list[float]) -> None:
    assert argmax(values) == values.index(max(values))
