"""GSM8K final-number extraction: strict ``#### N`` versus flexible last number."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.scoring import extract_flexible, extract_strict, gold_number, normalize_number


def test_strict_and_flexible_disagree() -> None:
    text = "She pays 3 * 4 = 12 dollars.\n#### 12\nShe also has 7 apples."
    assert extract_strict(text) == "12"
    assert extract_flexible(text) == "7"


def test_no_marker_means_no_strict_answer() -> None:
    text = "So the answer is $1,234.50."
    assert extract_strict(text) is None
    assert extract_flexible(text) == "1234.50"
    assert extract_flexible("no digits here") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("#### 1,000", "1000"), ("#### $18", "18"), ("####-3", "-3"), ("#### 72.", "72"),
     ("#### 5\n#### 6", "5"), ("#### 0.5", "0.5")],
)  # fmt: skip
def test_strict_normalisation(text: str, expected: str) -> None:
    assert extract_strict(text) == expected


def test_gold() -> None:
    assert gold_number("48/2 = <<48/2=24>>24\n#### 1,072") == "1072"
    with pytest.raises(ValueError):
        gold_number("no marker")


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_a_formatted_integer_round_trips(value: int) -> None:
    text = f"#### ${value:,}" if value >= 0 else f"#### {value:,}"
    assert extract_strict(text) == str(value)
    assert extract_flexible(f"it is {value:,}.") == str(value)


@given(st.text())
def test_normalise_is_idempotent_on_numbers(text: str) -> None:
    once = extract_flexible(text)
    if once is not None:
        assert normalize_number(once) == once
