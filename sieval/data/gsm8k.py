"""GSM8K (Cobbe et al. 2021): the original OpenAI JSON Lines release (``main`` config)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from .source import hub_rows

__all__ = ["Gsm8kItem", "gsm8k_file", "load_gsm8k"]


class Gsm8kItem(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    """Row number in the split (the stable id)."""
    question: str
    answer: str
    """The full worked solution, ending in ``#### N``."""


def gsm8k_file(data_dir: Path, split: str) -> Path:
    """``gsm8k/{split}.jsonl`` (split: train, test)."""
    return data_dir / "gsm8k" / f"{split}.jsonl"


def load_gsm8k(data_dir: Path, split: str) -> list[Gsm8kItem]:
    """All rows of a split in file order; the hub's ``openai/gsm8k`` when the file is absent."""
    path = gsm8k_file(data_dir, split)
    if path.is_file():
        with path.open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    else:
        rows = hub_rows("gsm8k", "openai/gsm8k", "main", split, [path])
    return [
        Gsm8kItem(index=i, question=row["question"], answer=row["answer"])
        for i, row in enumerate(rows)
    ]
