"""HellaSwag (Zellers et al. 2019): the original JSON Lines when present, else the derived text.

Local files, in order of preference per split:

- ``hellaswag/hellaswag_{split}.jsonl``: the original release (``ctx_a`` / ``ctx_b`` kept);
- ``hellaswag/hellaswag_val_full.txt.bz2`` (validation only): llama.cpp's derived format, six lines
  per item (``<activity_label>: <ctx>``, gold index, four endings), already cleaned of most
  ``[...]`` markers. The ``ctx_a`` / ``ctx_b`` split is lost there, so items read from it carry
  ``derived=True``, the whole context in ``ctx_a`` and an empty ``ctx_b``.

Absent both, the hub's ``Rowan/hellaswag`` is used. A malformed or inconsistent item (a label
that is not an ending index, an empty ending, a truncated six-line block) is a ``ConfigError``
naming its line. That is ``load_hellaswag``, the typed loader today's ``hellaswag_kshot_ppl`` uses.

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
    hub_where,
    jsonl_rows,
    local_files,
    no_samples,
    read_bz2_text,
    typed_rows,
)
from .source import Row, Source, hub_rows

__all__ = ["SOURCE", "HellaSwagItem", "files", "hellaswag_file", "load_hellaswag", "rows"]

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
    where: str = ""
    """Where the item was read: ``FILE:LINE`` of its first line, or ``hub ... row I``."""


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


class _Row(msgspec.Struct):
    activity_label: str
    ctx_a: str
    ctx_b: str
    endings: list[str]
    label: int | str
    """An int in the original release, a digit string on the hub."""


_decoder = msgspec.json.Decoder(_Row)


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


def _from_row(index: int, where: str, row: _Row) -> HellaSwagItem:
    endings = _endings(where, row.endings)
    return HellaSwagItem(
        index=index,
        activity_label=row.activity_label,
        ctx_a=row.ctx_a,
        ctx_b=row.ctx_b,
        endings=endings,
        label=_label(where, row.label, len(endings)),
        where=where,
    )


def _read_derived(path: Path) -> list[HellaSwagItem]:
    lines = read_bz2_text(path).split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise no_samples(str(path))
    items = []
    for start in range(0, len(lines), _LINES_PER_ITEM):
        block = lines[start : start + _LINES_PER_ITEM]
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
            HellaSwagItem(
                index=start // _LINES_PER_ITEM,
                activity_label=activity,
                ctx_a=ctx,
                ctx_b="",
                endings=tuple(endings),
                label=_label(f"{path}:{start + 2}", label, len(endings)),
                derived=True,
                where=head_at,
            )
        )
    return items


def load_hellaswag(data_dir: Path, split: str) -> list[HellaSwagItem]:
    """All items of a split in the original order (split: train, validation)."""
    path = hellaswag_file(data_dir, split)
    if path is None:
        hub = hub_rows("hellaswag", "Rowan/hellaswag", None, split, _candidates(data_dir, split))
        rows = typed_rows(hub, _Row, hub_where("Rowan/hellaswag", None, split))
    elif path.name == _DERIVED:
        return _read_derived(path)
    else:
        rows = jsonl_rows(path, _decoder)
    return [_from_row(i, where, row) for i, (where, row) in enumerate(rows)]


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
