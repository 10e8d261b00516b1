"""ARC (Clark et al. 2018): JSON Lines in the Hugging Face ``ai2_arc`` schema, one file a split.

The reader shared by ``arc_easy.py`` and ``arc_challenge.py`` (``ArcLoader``). It checks every
row: as many choice texts as labels, at least two, labels unique, no empty choice, ``answerKey``
among the labels, ids unique in the split.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_or_hub, unique
from .source import Row, Source

__all__ = ["ArcLoader", "arc_file", "arc_rows"]


class _Choices(msgspec.Struct):
    text: list[str]
    label: list[str]


class _Row(msgspec.Struct):
    id: str
    question: str
    choices: _Choices
    answerKey: str  # the schema's spelling


_decoder = msgspec.json.Decoder(_Row)


def _check(where: str, row: _Row) -> None:
    texts, labels = row.choices.text, row.choices.label
    if len(texts) != len(labels):
        raise bad_row(where, f"{len(texts)} choice texts but {len(labels)} labels")
    if len(labels) < 2:
        raise bad_row(where, f"a multiple-choice item needs at least two choices, got {labels}")
    for i, label in enumerate(labels):
        if label in labels[:i]:
            raise bad_row(where, f"label {label!r} appears twice")
    for label, text in zip(labels, texts, strict=True):
        if not text.strip():  # acc_norm divides by the choice's length
            raise bad_row(where, f"choice {label} is empty")
    if row.answerKey not in labels:
        raise bad_row(
            where, f"answerKey {row.answerKey!r} is not one of the labels {', '.join(labels)}"
        )


def _unique(rows: list[tuple[str, _Row]]) -> list[tuple[str, _Row]]:
    unique(rows, "id")
    for where, row in rows:
        _check(where, row)
    return rows


def arc_file(data_dir: Path, source: Source, split: str) -> Path:
    """``{folder}/{ARC-Easy|ARC-Challenge}-{split}.jsonl``, the config name as the file prefix."""
    return data_dir / source.folder / f"{source.hub_name}-{split}.jsonl"


def arc_rows(data_dir: Path, source: Source, split: str) -> list[Row]:
    """The rows of one ARC split as ``ai2_arc`` has them: ``id, question, choices{text, label},
    answerKey`` (all strings), checked as the module docstring says."""
    path = arc_file(data_dir, source, split)
    rows = local_or_hub(
        source, split, [path], lambda: jsonl_rows(path, _decoder), _Row, source.hub_name
    )
    return as_fields(_unique(rows))


class ArcLoader:
    """``files`` and ``rows`` of one ARC config (``source.hub_name``): what ``arc_easy.py`` and
    ``arc_challenge.py`` export."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
        self.source.check(data_dir, split, subset)
        return [arc_file(data_dir, self.source, split)]

    def rows(self, data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
        self.source.check(data_dir, split, subset)
        return arc_rows(data_dir, self.source, split)
