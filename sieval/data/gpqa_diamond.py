"""GPQA Diamond (Rein et al. 2023): ``gpqa_diamond/gpqa_diamond.csv``, the 198-question CSV OpenAI's
simple-evals reads, in the original release's 78-column layout (a header line; quoted multi-line
fields, so read with ``csv``).

The authors ask that GPQA's examples never be published: nothing here (messages included) shows a
cell's text; an error names the line and the column.

lm-eval 0.4.13 ``gpqa_diamond_*`` reads ``Idavidrein/gpqa`` config ``gpqa_diamond``, split
``train`` (the only one; so the split's name here too), and uses ``Question``, ``Correct Answer``
and ``Incorrect Answer 1``-``3`` (shuffling the four itself). Rows: the 78 columns in the file's
order, every value a string as the CSV stores it (an empty cell is ``""``). The hub's CSV builder
infers numbers and empties for some metadata columns (times, accuracies); lm-eval reads none of
them. The five columns above must be non-empty, ``Record ID`` unique.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .rows import bad_row, from_hub, header_rows, local_files, unique
from .source import Row, Source

__all__ = ["COLUMNS", "SOURCE", "files", "rows"]

COLUMNS = (
    "Pre-Revision Question", "Pre-Revision Correct Answer", "Pre-Revision Incorrect Answer 1",
    "Pre-Revision Incorrect Answer 2", "Pre-Revision Incorrect Answer 3",
    "Pre-Revision Explanation", "Self-reported question-writing time (minutes)", "Question",
    "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3",
    "Explanation", "Revision Comments (from Question Writer)", "Subdomain",
    "Writer's Difficulty Estimate", "Extra Revised Question", "Extra Revised Explanation",
    "Extra Revised Correct Answer", "Extra Revised Incorrect Answer 1",
    "Extra Revised Incorrect Answer 2", "Extra Revised Incorrect Answer 3",
    "Non-Expert Validator Accuracy", "Majority Non-Expert Vals Incorrect",
    "Expert Validator Accuracy", "Record ID", "High-level domain", "Question Writer",
    "Feedback_EV_1", "Validator Revision Suggestion_EV_1", "Is First Validation_EV_1",
    "Post hoc agreement_EV_1", "Sufficient Expertise?_EV_1", "Understand the question?_EV_1",
    "Question Difficulty_EV_1", "Validator Answered Correctly_EV_1",
    "Self-reported time (minutes)_EV_1", "Probability Correct_EV_1",
    "Manual Correctness Adjustment_EV_1", "Expert Validator_EV_1", "Feedback_EV_2",
    "Validator Revision Suggestion_EV_2", "Is First Validation_EV_2", "Post hoc agreement_EV_2",
    "Sufficient Expertise?_EV_2", "Understand the question?_EV_2", "Question Difficulty_EV_2",
    "Validator Answered Correctly_EV_2", "Self-reported time (minutes)_EV_2",
    "Probability Correct_EV_2", "Manual Correctness Adjustment_EV_2", "Expert Validator_EV_2",
    "Feedback_NEV_1", "Validator Answered Correctly_NEV_1", "Explanation_NEV_1",
    "Self-reported time (minutes)_NEV_1", "Websites visited_NEV_1", "Probability Correct_NEV_1",
    "Manual Correctness Adjustment_NEV_1", "Non-Expert Validator_NEV_1", "Feedback_NEV_2",
    "Validator Answered Correctly_NEV_2", "Explanation_NEV_2",
    "Self-reported time (minutes)_NEV_2", "Websites visited_NEV_2", "Probability Correct_NEV_2",
    "Manual Correctness Adjustment_NEV_2", "Non-Expert Validator_NEV_2", "Feedback_NEV_3",
    "Validator Answered Correctly_NEV_3", "Explanation_NEV_3",
    "Self-reported time (minutes)_NEV_3", "Websites visited_NEV_3", "Probability Correct_NEV_3",
    "Manual Correctness Adjustment_NEV_3", "Non-Expert Validator_NEV_3",
    "Expert Validator Disagreement Category", "Canary String",
)  # fmt: skip
USED = (
    "Question",
    "Correct Answer",
    "Incorrect Answer 1",
    "Incorrect Answer 2",
    "Incorrect Answer 3",
)
"""The columns lm-eval reads."""

SOURCE = Source(
    folder="gpqa_diamond",
    splits=("train",),
    hub="Idavidrein/gpqa",
    hub_name="gpqa_diamond",
    format="CSV with a header, the original 78-column release layout: gpqa_diamond.csv",
    fields=COLUMNS,
)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "gpqa_diamond.csv"]


def _checked(rows: list[tuple[str, dict[str, Any]]]) -> list[Row]:
    for where, row in rows:
        for column in (*USED, "Record ID"):
            value = row.get(column)
            if not isinstance(value, str) or not value.strip():
                raise bad_row(where, f"column {column!r} is empty or not text")
    unique(rows, "Record ID", show=False)
    return rows


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if local_files(paths):
        return _checked(list(header_rows(paths[0], COLUMNS)))
    return _checked(list(from_hub(SOURCE, split, paths, dict[str, Any], SOURCE.hub_name)))
