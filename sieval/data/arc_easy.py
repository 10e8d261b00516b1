"""ARC-Easy: ``arc_easy/ARC-Easy-{train,validation,test}.jsonl``, JSON Lines in the ``ai2_arc``
schema (2,251 / 570 / 2,376 rows).

lm-eval 0.4.13 ``arc_easy`` reads ``allenai/ai2_arc`` config ``ARC-Easy``: ``question``,
``choices.text``, ``choices.label`` and ``answerKey`` (``choices.label.index(answerKey)``).
Rows: ``id, question, choices{text, label}, answerKey``, all strings, as the hub has them.
"""

from __future__ import annotations

from pathlib import Path

from .arc import arc_file, arc_rows
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="arc_easy",
    splits=("train", "validation", "test"),
    hub="allenai/ai2_arc",
    hub_name="ARC-Easy",
    format="JSON Lines, ai2_arc schema: ARC-Easy-{split}.jsonl",
    fields=("id", "question", "choices", "answerKey"),
)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [arc_file(data_dir, SOURCE, split)]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    SOURCE.check(data_dir, split, subset)
    return arc_rows(data_dir, SOURCE, split)
