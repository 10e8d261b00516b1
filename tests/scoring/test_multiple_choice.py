"""GPQA's recorded shuffle and letter extraction, and MMLU-Pro's official extraction rules.

No GPQA row appears here: the rows are synthetic, in GPQA's format (``Question``, ``Correct
Answer``, ``Incorrect Answer 1``-``3``). The expected letters were read off the rules' regular
expressions by hand (simple-evals' ``ANSWER_PATTERN_MULTICHOICE``; MMLU-Pro's
``extract_answer`` / ``extract_again`` / ``extract_final``).
"""

from __future__ import annotations

from collections import Counter

import pytest

from sieval.scoring.multiple_choice import (
    extract_gpqa_letter,
    extract_mmlu_pro_letter,
    shuffle_choices,
)

SYNTHETIC_ROWS = [
    {
        "Record ID": f"synthetic-{i}",
        "Question": f"Which of these made-up compounds is number {i}?",
        "Correct Answer": f"compound {i}",
        "Incorrect Answer 1": f"compound {i + 1}",
        "Incorrect Answer 2": f"compound {i + 2}",
        "Incorrect Answer 3": f"compound {i + 3}",
    }
    for i in range(400)
]


def options(row: dict[str, str]) -> list[str]:
    return [row["Correct Answer"]] + [row[f"Incorrect Answer {j}"] for j in (1, 2, 3)]


def test_shuffle_is_recorded_and_reproducible() -> None:
    row = SYNTHETIC_ROWS[0]
    first = shuffle_choices(options(row), seed=0, key=row["Record ID"])
    again = shuffle_choices(options(row), seed=0, key=row["Record ID"])
    assert first == again
    assert sorted(first.permutation) == [0, 1, 2, 3]
    assert [options(row)[i] for i in first.permutation] == list(first.choices)
    letter = first.letter_of(0)
    assert first.choices["ABCD".index(letter)] == row["Correct Answer"]


def test_shuffle_spreads_the_correct_answer_and_depends_on_the_seed() -> None:
    letters = Counter(
        shuffle_choices(options(r), seed=0, key=r["Record ID"]).letter_of(0) for r in SYNTHETIC_ROWS
    )
    assert set(letters) == set("ABCD") and all(60 <= n <= 140 for n in letters.values())
    other = [
        shuffle_choices(options(r), seed=1, key=r["Record ID"]).permutation for r in SYNTHETIC_ROWS
    ]
    same = [
        shuffle_choices(options(r), seed=0, key=r["Record ID"]).permutation for r in SYNTHETIC_ROWS
    ]
    assert sum(a != b for a, b in zip(other, same, strict=True)) > 300


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("Reasoning...\nAnswer: C", "C"),
        ("answer:$b$", "B"),
        ("ANSWER :\tD", "D"),
        ("Answer: A\nOn reflection, Answer: B", "A"),  # the first match
        ("The answer is C.", None),
        ("Answer: E", None),
    ],
)
def test_gpqa_letter(text: str, letter: str | None) -> None:
    found = extract_gpqa_letter(text)
    assert found.letter == letter
    assert found.rule == (None if letter is None else "answer_colon")


@pytest.mark.parametrize(
    ("text", "letter", "rule"),
    [
        ("Let's think. The answer is (J).", "J", "answer_is"),
        ("the answer is B", "B", "answer_is"),
        ("The answer is (C). Later: the answer is (D).", "C", "answer_is"),
        ("The Answer Is (C).", "C", "last_letter"),  # "answer is" is case-sensitive
        ("Answer: E and again Answer: F\nAnswer: G", "F", "answer_colon"),
        ("I pick H, or maybe I.", "I", "last_letter"),
        ("Option A looks right; so does B.\nDone.", "B", "last_letter"),
        ("answer is (K)", None, None),
        ("no letters here", None, None),
    ],
)
def test_mmlu_pro_letter(text: str, letter: str | None, rule: str | None) -> None:
    found = extract_mmlu_pro_letter(text)
    assert (found.letter, found.rule) == (letter, rule)
