"""GSM8K answer extraction and comparison, as lm-evaluation-harness's ``gsm8k`` task defines them.

The expected values below were worked out by hand from lm-eval's ``tasks/gsm8k/gsm8k.yaml``:

- strict-match: ``re.findall(r"#### (\\-?[0-9\\.\\,]+)", text)[0]``, stripped; no match is invalid;
- flexible-extract: ``re.findall(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", text)[-1]``, its non-empty group,
  stripped; no match is invalid;
- exact_match then removes, in order, every ``,``, every ``$``, ``(?s).*#### `` and ``\\.$`` from
  both the extracted answer and the whole gold solution, and lowercases both.

``None`` stands for lm-eval's ``[invalid]`` fallback (it never equals a gold answer).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.scoring import extract_flexible, extract_strict, gold_number, normalize_answer

# (text, strict, flexible)
CASES = [
    ("#### 5", "5", "5"),
    # strict needs exactly "#### " then the number: no space, a "$", a newline, two spaces fail
    ("####5", None, "5"),
    ("#### $1,000", None, "1000"),
    ("####\n42", None, "42"),
    ("####  7", None, "7"),
    ("####-3", None, "-3"),
    ("#### -3", "-3", "-3"),
    # strict takes the first match, flexible the last
    ("#### 5\n#### 6", "5", "6"),
    ("She pays 12 dollars.\n#### 12\nShe also has 7 apples.", "12", "7"),
    ("#### 1,234 apples, 56 pears", "1234", "56"),
    # one trailing period is ignored, and only one
    ("#### 72.", "72", "72"),
    ("#### 3.14.", "3.14", "3.14"),
    ("The answer is 5...", None, "5.."),
    ("#### 5,\n", "5", "5"),
    # periods inside a number are kept: no numeric equivalence, no thousands separators
    ("#### 1.000.000", "1.000.000", "1.000.000"),
    ("#### 1,000,000.00", "1000000.00", "1000000.00"),
    (".5", None, ".5"),
    ("#### .5", ".5", ".5"),
    ("#### 72.0", "72.0", "72.0"),
    # "##### 8" contains "#### 8"
    ("##### 8", "8", "8"),
    # flexible: a sign, a dollar sign, runs of punctuation
    ("It costs -$5.", None, "-5"),
    ("It costs $5", None, "5"),
    ("2024-01-05", None, "-05"),
    ("#### --3", None, "-3"),
    ("so $$ it is", None, ""),
    ("Dots ... end", None, ".."),
    ("a single $ sign", None, None),
    ("no digits here", None, None),
    ("", None, None),
]


@pytest.mark.parametrize(("text", "strict", "flexible"), CASES)
def test_extraction_follows_lm_eval(text: str, strict: str | None, flexible: str | None) -> None:
    assert extract_strict(text) == strict
    assert extract_flexible(text) == flexible


# (solution, gold): the whole solution goes through exact_match's normalisation
GOLDS = [
    ("48/2 = <<48/2=24>>24\n#### 1,072", "1072"),
    ("#### $18", "18"),
    ("#### -10", "-10"),
    ("a #### 5\n#### 6", "6"),  # everything through the last "#### " is dropped
    ("#### 5..", "5."),  # one trailing period
    ("####  18", " 18"),  # no stripping: the leading space stays (such a gold never matches)
    ("#### 5 #### 6", "6"),
]


@pytest.mark.parametrize(("solution", "gold"), GOLDS)
def test_gold_follows_lm_eval(solution: str, gold: str) -> None:
    assert gold_number(solution) == gold


def test_gold_needs_the_marker() -> None:
    for solution in ("no marker", "####5", "####\n5"):
        with pytest.raises(ValueError, match="#### "):
            gold_number(solution)


def test_normalisation_is_applied_once_in_lm_evals_order() -> None:
    # "," then "$" go first, so "x #### $5,." becomes "x #### 5.", then "5.", then "5"
    assert normalize_answer("x #### $5,.") == "5"
    assert normalize_answer("A.B") == "a.b"
    assert normalize_answer("5..") == "5."


def test_a_correct_answer_matches_under_both_extractions() -> None:
    gold = gold_number("3 * 4 = <<3*4=12>>12\n#### 1,200")
    assert extract_strict("3 * 4 = 12 hundreds\n#### 1,200") == gold
    assert extract_flexible("so it is $1,200.") == gold
    assert extract_strict("#### $1,200") != gold  # a dollar sign after "#### " is not accepted


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_a_formatted_integer_round_trips(value: int) -> None:
    assert extract_strict(f"#### {value:,}") == str(value)
    assert extract_flexible(f"it is {value:,}.") == str(value)
    assert gold_number(f"work\n#### {value:,}") == str(value)
