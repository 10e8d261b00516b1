"""``spec.tokenized``: the token ids a tokenize route's reply gives, believed only when they can be
the ids of the text asked about (the pre-run checks, the forecast and rolling log-likelihood all
read them through it); ``spec.model_length``: a server's ``max_model_len``, believed only when it
is a length (the listing's and the tokenize reply's)."""

from __future__ import annotations

from typing import Any

import pytest

from sieval.dialects.vocabulary import model_length, tokenized


@pytest.mark.parametrize(
    ("data", "text", "ids"),
    [
        ({"tokens": [2, 562], "count": 2, "max_model_len": 2048}, "x", [2, 562]),
        ({"tokens": [562, 603]}, "ab", [562, 603]),  # SGLang's: no count needed
        ({"tokens": []}, "", []),  # an empty text may be no token
        ({"tokens": []}, "x", None),  # a text is spelled by some token
        ({"tokens": [], "count": 0}, "a prompt", None),
        ({"tokens": [1, -2]}, "ab", None),
        ({"tokens": [1, 2**31]}, "ab", None),
        ({"tokens": [1, 2.0]}, "ab", None),
        ({"tokens": [True]}, "a", None),
        ({"tokens": ["a"]}, "a", None),
        ({"tokens": [1, 2], "count": 3}, "ab", None),
        ({"count": 2}, "ab", None),
        (None, "ab", None),
        ([1, 2], "ab", None),
    ],
)
def test_only_ids_that_can_spell_the_text_are_believed(
    data: Any, text: str, ids: list[int] | None
) -> None:
    assert tokenized(data, text) == ids


@pytest.mark.parametrize(
    ("value", "length"),
    [
        (4096, 4096),
        (1, 1),
        (10**9, 10**9),
        (0, None),
        (-5, None),
        (10**12, None),
        (True, None),
        (4096.0, None),
        ("4096", None),
        (None, None),
    ],
)
def test_a_model_length_is_believed_only_when_it_is_one(value: Any, length: int | None) -> None:
    assert model_length(value) == length
