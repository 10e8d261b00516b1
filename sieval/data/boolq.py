"""BoolQ (Clark et al. 2019), SuperGLUE's version: ``boolq/val.jsonl``, OpenCompass's copy of
SuperGLUE's validation JSON Lines (3,270 rows). The train split is not stored.

lm-eval 0.4.13 ``boolq`` reads ``aps/super_glue`` config ``boolq`` (scores validation, shots from
train): ``"{passage}\\nQuestion: {question}?\\nAnswer:"``, choices ``no`` / ``yes``, gold
``label``. Rows are the hub's ``question, passage, idx, label``: ``idx`` an int, ``label`` the int
0 (False) or 1 (True). The stored ``label`` is the string ``"true"`` / ``"false"`` (SuperGLUE's
own file has a JSON boolean): it is converted, and any other value refused. The passage keeps
SuperGLUE's ``<Wikipedia title> -- `` prefix, as on the hub.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, from_hub, jsonl_rows, local_files
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="boolq",
    splits=("validation",),
    hub="aps/super_glue",
    hub_name="boolq",
    format='JSON Lines with string labels "true"/"false": val.jsonl',
    fields=("question", "passage", "idx", "label"),
)
_LABELS = {"false": 0, "true": 1}


class _Stored(msgspec.Struct):
    question: str
    passage: str
    idx: int
    label: str


class _Fields(msgspec.Struct):
    question: str
    passage: str
    idx: int
    label: int


_decoder = msgspec.json.Decoder(_Stored)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "val.jsonl"]


def _converted(where: str, row: _Stored) -> _Fields:
    if row.label not in _LABELS:
        raise bad_row(where, f'label {row.label!r} is not "true" or "false"')
    return _Fields(row.question, row.passage, row.idx, _LABELS[row.label])


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        typed = from_hub(SOURCE, split, paths, _Fields, SOURCE.hub_name)
        for where, row in typed:
            if row.label not in (0, 1):
                raise bad_row(where, f"label {row.label} is not 0 or 1")
    else:
        typed = [(where, _converted(where, row)) for where, row in jsonl_rows(paths[0], _decoder)]
    return as_fields(typed)
