"""HellaSwag (Zellers et al. 2019): validation as stored, in llama.cpp's derived text.

``hellaswag/hellaswag_val_full.txt.bz2``: six lines per item (``<activity_label>: <ctx>``, gold
index, four endings), already cleaned of most ``[...]`` markers; the ``ctx_a`` / ``ctx_b`` split
is lost there, so the whole context is ``ctx_a`` and ``ctx_b`` is empty. Absent the file, the
hub's ``Rowan/hellaswag`` is used. A malformed or inconsistent item (a label that is not an ending
index, an empty ending, a truncated six-line block) is a ``ConfigError`` naming its line.

``SOURCE`` / ``files`` / ``rows`` read what is stored: validation (10,042 rows) from the derived
bz2 text. lm-eval 0.4.13 ``hellaswag`` reads ``Rowan/hellaswag`` (no config): ``ind,
activity_label, ctx_a, ctx_b, ctx, endings, source_id, split, split_type, label`` (``label`` a
digit string), and builds its query as ``preprocess(activity_label + ": " + ctx_a + " " +
ctx_b.capitalize())``. From the derived text a row has ``activity_label, ctx_a, ctx_b, ctx,
endings, split, label``: ``ctx`` and ``ctx_a`` are the stored context, ``ctx_b`` is ``""``,
``split`` is ``"val"`` (as on the hub for every validation row). Not recoverable: ``ind``,
``source_id``, ``split_type``, the ``ctx_a`` / ``ctx_b`` boundary (so lm-eval's capitalisation of
``ctx_b`` cannot be redone exactly), and the text before llama.cpp's clean-up (it is close to
lm-eval's ``preprocess`` but 18 lines keep a ``[``). Rows from the hub fallback carry all ten
fields. The train split is not stored.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import (
    as_fields,
    bad_row,
    from_hub,
    lines,
    local_files,
    no_samples,
    read_bz2_text,
)
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="hellaswag",
    splits=("validation",),
    hub="Rowan/hellaswag",
    hub_name=None,
    format="bzip2 text derived by llama.cpp, six lines a row: hellaswag_val_full.txt.bz2",
    fields=("activity_label", "ctx_a", "ctx_b", "ctx", "endings", "split", "label"),
)

_DERIVED = "hellaswag_val_full.txt.bz2"
_LINES_PER_ITEM = 6


class _Item(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    """Row number in the split (the stable id)."""
    activity_label: str
    ctx_a: str
    ctx_b: str
    endings: tuple[str, ...]
    label: int
    where: str
    """``FILE:LINE`` of the item's first line."""


def _label(where: str, label: int | str, n_endings: int) -> int:
    text = str(label)
    if not (text.isascii() and text.isdigit() and int(text) < n_endings):
        raise bad_row(where, f"label {label!r} is not an ending index 0-{n_endings - 1}")
    return int(text)


def _endings(where: str, endings: list[str]) -> tuple[str, ...]:
    if len(endings) < 2:
        raise bad_row(where, f"an item needs at least two endings, got {len(endings)}")
    for i, ending in enumerate(endings):
        if not ending.strip():  # acc_norm divides by the ending's length
            raise bad_row(where, f"ending {i} is empty")
    return tuple(endings)


def _read_derived(path: Path) -> list[_Item]:
    found = lines(read_bz2_text(path), path)
    while found and found[-1] == "":
        found.pop()
    if not found:
        raise no_samples(str(path))
    items = []
    for start in range(0, len(found), _LINES_PER_ITEM):
        block = found[start : start + _LINES_PER_ITEM]
        head_at = f"{path}:{start + 1}"
        if len(block) < _LINES_PER_ITEM:
            raise bad_row(
                head_at,
                f"the last item has {len(block)} of its {_LINES_PER_ITEM} lines "
                "(<activity_label>: <context>, label, four endings): the file is truncated",
            )
        head, label, *endings = block
        activity, sep, ctx = head.partition(": ")
        if not sep:
            raise bad_row(head_at, "expected '<activity_label>: <context>'")
        for i, ending in enumerate(endings):
            if not ending.strip():
                raise bad_row(f"{path}:{start + 3 + i}", f"ending {i} is empty")
        items.append(
            _Item(
                index=start // _LINES_PER_ITEM,
                activity_label=activity,
                ctx_a=ctx,
                ctx_b="",
                endings=tuple(endings),
                label=_label(f"{path}:{start + 2}", label, len(endings)),
                where=head_at,
            )
        )
    return items


class _HubRow(msgspec.Struct):
    ind: int
    activity_label: str
    ctx_a: str
    ctx_b: str
    ctx: str
    endings: list[str]
    source_id: str
    split: str
    split_type: str
    label: str


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / _DERIVED]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        hub = from_hub(SOURCE, split, paths, _HubRow)
        for where, row in hub:
            _label(where, row.label, len(_endings(where, row.endings)))
        return as_fields(hub)
    return [
        (
            item.where,
            {
                "activity_label": item.activity_label,
                "ctx_a": item.ctx_a,
                "ctx_b": "",
                "ctx": item.ctx_a,
                "endings": list(item.endings),
                "split": "val",
                "label": str(item.label),
            },
        )
        for item in _read_derived(paths[0])
    ]
