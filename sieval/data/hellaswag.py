"""HellaSwag (Zellers et al. 2019): the original JSON Lines when present, else the derived text.

Local files, in order of preference per split:

- ``hellaswag/hellaswag_{split}.jsonl``: the original release (``ctx_a`` / ``ctx_b`` kept);
- ``hellaswag/hellaswag_val_full.txt.bz2`` (validation only): llama.cpp's derived format, six lines
  per item (``<activity_label>: <ctx>``, gold index, four endings), already cleaned of most
  ``[...]`` markers. The ``ctx_a`` / ``ctx_b`` split is lost there, so items read from it carry
  ``derived=True``, the whole context in ``ctx_a`` and an empty ``ctx_b``.

Absent both, the hub's ``Rowan/hellaswag`` is used.
"""

from __future__ import annotations

import bz2
import json
from pathlib import Path
from typing import Any

import msgspec

from .source import hub_rows

__all__ = ["HellaSwagItem", "hellaswag_file", "load_hellaswag"]

_DERIVED = "hellaswag_val_full.txt.bz2"
_LINES_PER_ITEM = 6


class HellaSwagItem(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    """Row number in the split (the stable id)."""
    activity_label: str
    ctx_a: str
    ctx_b: str
    endings: tuple[str, ...]
    label: int
    derived: bool = False
    """True when read from the derived text format (``ctx_b`` unknown, text pre-cleaned)."""


def _candidates(data_dir: Path, split: str) -> list[Path]:
    folder = data_dir / "hellaswag"
    short = "val" if split == "validation" else split
    paths = [folder / f"hellaswag_{short}.jsonl"]
    if split == "validation":
        paths.append(folder / _DERIVED)
    return paths


def hellaswag_file(data_dir: Path, split: str) -> Path | None:
    """The local file a split would be read from, or None (then the hub is tried)."""
    return next((p for p in _candidates(data_dir, split) if p.is_file()), None)


def _from_row(index: int, row: dict[str, Any]) -> HellaSwagItem:
    return HellaSwagItem(
        index=index,
        activity_label=row["activity_label"],
        ctx_a=row["ctx_a"],
        ctx_b=row["ctx_b"],
        endings=tuple(row["endings"]),
        label=int(row["label"]),
    )


def _read_derived(path: Path) -> list[HellaSwagItem]:
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    items = []
    for i in range(len(lines) // _LINES_PER_ITEM):
        head, label, *endings = lines[i * _LINES_PER_ITEM : (i + 1) * _LINES_PER_ITEM]
        activity, _, ctx = head.partition(": ")
        items.append(
            HellaSwagItem(
                index=i,
                activity_label=activity,
                ctx_a=ctx,
                ctx_b="",
                endings=tuple(endings),
                label=int(label),
                derived=True,
            )
        )
    return items


def load_hellaswag(data_dir: Path, split: str) -> list[HellaSwagItem]:
    """All items of a split in the original order (split: train, validation)."""
    path = hellaswag_file(data_dir, split)
    if path is None:
        rows = hub_rows("hellaswag", "Rowan/hellaswag", None, split, _candidates(data_dir, split))
        return [_from_row(i, row) for i, row in enumerate(rows)]
    if path.name == _DERIVED:
        return _read_derived(path)
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [_from_row(i, row) for i, row in enumerate(rows)]
