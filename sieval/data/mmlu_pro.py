"""MMLU-Pro (Wang et al. 2024): ``mmlu_pro/{test,validation}-00000-of-00001.parquet``, the Parquet
files of the hub dataset (12,032 / 70 rows).

lm-eval 0.4.13 ``mmlu_pro_<category>`` reads ``TIGER-Lab/MMLU-Pro`` (no config), scores test, takes
its 5 CoT shots from validation, and keeps one category per task (``process_docs``: ``category ==
subject``). The category is the ``subset`` here (``None``: all 14), rows kept in file order.
Rows: ``question_id`` (int), ``question``, ``options`` (3 to 10 strings), ``answer`` (the letter
A-J of ``options[answer_index]``), ``answer_index`` (int), ``cot_content`` (the CoT exemplar in
validation, ``""`` in test), ``category``, ``src``. An answer letter or index beyond the options,
or a category outside the 14, is refused. One test row (``question_id`` 3983) has ``answer``
``"C"`` but ``answer_index`` 1, as in the hub's data; it is kept as stored (lm-eval's gold is
the letter ``answer``).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .arrow import parquet_rows
from .rows import as_fields, bad_row, converted, local_or_hub
from .source import Row, Source

__all__ = ["CATEGORIES", "SOURCE", "files", "rows"]

CATEGORIES = (
    "biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
    "history", "law", "math", "other", "philosophy", "physics", "psychology",
)  # fmt: skip
LETTERS = "ABCDEFGHIJ"

SOURCE = Source(
    folder="mmlu_pro",
    splits=("test", "validation"),
    hub="TIGER-Lab/MMLU-Pro",
    hub_name=None,
    format="the hub's Parquet files: {split}-00000-of-00001.parquet",
    fields=(
        "question_id", "question", "options", "answer", "answer_index", "cot_content",
        "category", "src",
    ),
    subsets=CATEGORIES,
)  # fmt: skip


class _Fields(msgspec.Struct):
    question_id: int
    question: str
    options: list[str]
    answer: str
    answer_index: int
    cot_content: str
    category: str
    src: str


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / f"{split}-00000-of-00001.parquet"]


def _check(where: str, row: _Fields) -> None:
    letters = LETTERS[: len(row.options)]
    if not 0 <= row.answer_index < len(row.options):
        raise bad_row(
            where, f"answer_index {row.answer_index} is not one of {len(row.options)} options"
        )
    if row.answer not in letters:
        raise bad_row(where, f"answer {row.answer!r} is not one of the options' letters {letters}")
    if row.category not in CATEGORIES:
        raise bad_row(where, f"category {row.category!r} is not one of the 14")


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(
        SOURCE,
        split,
        paths,
        lambda: converted(parquet_rows(paths[0], SOURCE.fields), _Fields),
        _Fields,
    )
    for where, row in typed:
        _check(where, row)
    return as_fields((w, r) for w, r in typed if subset is None or r.category == subset)
