"""``spec.tokenized``: the token ids a tokenize route's reply gives, believed only when they can be
the ids of the text asked about (the pre-run checks, the forecast and rolling log-likelihood all
read them through it)."""

from __future__ import annotations

from typing import Any

import pytest

from sieval.dialects.spec import tokenized


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
