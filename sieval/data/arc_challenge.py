"""ARC-Challenge: ``arc_challenge/ARC-Challenge-{train,validation,test}.jsonl``, JSON Lines in
the ``ai2_arc`` schema (1,119 / 299 / 1,172 rows).

lm-eval 0.4.13 ``arc_challenge`` reads ``allenai/ai2_arc`` config ``ARC-Challenge``: ``question``,
``choices.text``, ``choices.label`` and ``answerKey`` (``choices.label.index(answerKey)``).
Rows: ``id, question, choices{text, label}, answerKey``, all strings, as the hub has them.
"""

from __future__ import annotations

from pathlib import Path

from .arc import arc_file, arc_rows
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="arc_challenge",
    splits=("train", "validation", "test"),
    hub="allenai/ai2_arc",
    hub_name="ARC-Challenge",
    format="JSON Lines, ai2_arc schema: ARC-Challenge-{split}.jsonl",
    fields=("id", "question", "choices", "answerKey"),
)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [arc_file(data_dir, SOURCE, split)]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    SOURCE.check(data_dir, split, subset)
    return arc_rows(data_dir, SOURCE, split)
