"""AIME 2024, I and II: ``aime2024/test.jsonl``, Qwen2.5-Math's JSON Lines (30 rows: ``id``
60-89, ``problem``, ``solution`` from the AoPS wiki, ``answer`` a zero-padded string, ``url``,
``question`` = ``problem``), in its order: I-1, I-10 ... I-15, I-2 ... I-9, then II likewise.

lm-eval 0.4.13 ``aime24`` reads ``Maxwell-Jia/AIME_2024`` (no config), split ``train`` (so the
split's name here too): ``"Question: {Problem}\\nAnswer:"``, gold ``str(Answer)``. Rows are that
schema: ``ID`` (``"2024-I-1"``, made from the stored ``url``), ``Problem``, ``Solution`` (strings,
the stored ``problem`` and ``solution``) and ``Answer`` (an int: the stored ``"025"`` becomes 25,
so ``str(Answer)`` is ``"25"`` as lm-eval compares it). What the stored copy cannot give: the
hub's own problem and solution texts (not compared here; its card reports fixes to I-5, I-6 and
II-10) and its row order.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, from_hub, jsonl_rows, local_files, unique
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="aime2024",
    splits=("train",),
    hub="Maxwell-Jia/AIME_2024",
    hub_name=None,
    format="JSON Lines, Qwen2.5-Math's evaluation/data/aime24/test.jsonl: test.jsonl",
    fields=("ID", "Problem", "Solution", "Answer"),
)
_URL = re.compile(r".*/(\d{4})_AIME_(I|II)_Problems/Problem_(\d{1,2})")


class _Stored(msgspec.Struct):
    problem: str
    solution: str
    answer: str
    url: str


class _Fields(msgspec.Struct):
    ID: str
    Problem: str
    Solution: str
    Answer: int


_decoder = msgspec.json.Decoder(_Stored)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "test.jsonl"]


def _converted(where: str, row: _Stored) -> _Fields:
    match = _URL.fullmatch(row.url)
    if not match:
        raise bad_row(where, f"url {row.url!r} does not name a YEAR_AIME_I|II_Problems/Problem_N")
    if not (row.answer.isascii() and row.answer.isdigit()):
        raise bad_row(where, f"answer {row.answer!r} is not an integer")
    return _Fields("-".join(match.groups()), row.problem, row.solution, int(row.answer))


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        return as_fields(from_hub(SOURCE, split, paths, _Fields))
    typed = [(where, _converted(where, row)) for where, row in jsonl_rows(paths[0], _decoder)]
    unique(typed, "ID")
    return as_fields(typed)
