"""The censored rule and the headline's bounds over censored samples (``scoring/censored.py``)."""

from __future__ import annotations

import pytest

from sieval.scoring.censored import bounds, censored


@pytest.mark.parametrize(
    ("finish", "answered", "open_reasoning", "expected"),
    [
        ("length", False, False, True),  # cut before any answer
        ("length", True, False, False),  # the answer came before the cut
        ("stop", False, False, False),  # ended without an answer: wrong, not censored
        (None, False, False, False),  # no finish reason said: not known to be cut
        ("stop", True, True, True),  # a reasoning block never closed
        # the same cut in each other wire's word (responses, messages, generateContent)
        ("max_output_tokens", False, False, True),
        ("max_tokens", False, False, True),
        ("MAX_TOKENS", False, False, True),
        ("end_turn", False, False, False),
    ],
)
def test_what_is_censored(
    finish: str | None, answered: bool, open_reasoning: bool, expected: bool
) -> None:
    assert censored(finish, answered, open_reasoning=open_reasoning) is expected


def test_the_bounds_count_censored_samples_wrong_or_leave_them_out() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]  # what the checker scored (a cut code answer: 1)
    flags = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    as_wrong, left_out = bounds(values, flags)
    assert as_wrong.value == pytest.approx(2 / 6) and as_wrong.n == 6
    assert left_out is not None and left_out.value == pytest.approx(2 / 3) and left_out.n == 3
    # clustered as the headline is: the clusters of the kept samples only
    clusters = ["a", "a", "b", "b", "c", "c"]
    as_wrong, left_out = bounds(values, flags, clusters)
    assert as_wrong.clusters == 3 and left_out is not None and left_out.clusters == 2
    # every sample censored: nothing is left to score
    as_wrong, left_out = bounds([0.0, 0.0], [1.0, 1.0])
    assert as_wrong.value == 0.0 and left_out is None
    with pytest.raises(ValueError, match="one per sample"):
        bounds([1.0], [0.0, 1.0])
