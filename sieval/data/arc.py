"""ARC-Easy (Clark et al. 2018): JSON Lines in the Hugging Face ``ai2_arc`` schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from .source import hub_rows

__all__ = ["ArcItem", "arc_easy_file", "load_arc_easy"]


class ArcItem(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    question: str
    choices: tuple[str, ...]
    labels: tuple[str, ...]
    answer: int
    """Index of the correct choice."""


def arc_easy_file(data_dir: Path, split: str) -> Path:
    """``arc_easy/ARC-Easy-{split}.jsonl`` (split: train, validation, test)."""
    return data_dir / "arc_easy" / f"ARC-Easy-{split}.jsonl"


def _item(row: dict[str, Any]) -> ArcItem:
    labels = tuple(row["choices"]["label"])
    return ArcItem(
        id=row["id"],
        question=row["question"],
        choices=tuple(row["choices"]["text"]),
        labels=labels,
        answer=labels.index(row["answerKey"]),
    )


def load_arc_easy(data_dir: Path, split: str) -> list[ArcItem]:
    """All rows of a split in file order; the hub's ``allenai/ai2_arc`` when the file is absent."""
    path = arc_easy_file(data_dir, split)
    if path.is_file():
        with path.open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    else:
        rows = hub_rows("arc_easy", "allenai/ai2_arc", "ARC-Easy", split, [path])
    return [_item(row) for row in rows]
