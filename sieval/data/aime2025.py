"""AIME 2025, I and II: ``aime2025/test.jsonl``, AReaL's JSON Lines (30 rows in exam order: ids
``"0"``-``"14"`` AIME I problems 1-15, ``"15"``-``"29"`` AIME II; no solutions).

lm-eval 0.4.13 ``aime25`` reads ``math-ai/aime25`` (no config), split test:
``"Question: {problem}\\nAnswer:"``, gold ``str(answer)``. Rows: ``problem`` (a string),
``answer`` (an int, as stored) and ``id`` (a string). The hub's own type for ``answer`` was not
verified here; a digit string from the fallback is made an int (``str(answer)``, what lm-eval
compares, is the same either way).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, from_hub, jsonl_rows, local_files, unique
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="aime2025",
    splits=("test",),
    hub="math-ai/aime25",
    hub_name=None,
    format="JSON Lines, AReaL's evaluation/data/aime25/test.jsonl: test.jsonl",
    fields=("problem", "answer", "id"),
)


class _Fields(msgspec.Struct):
    problem: str
    answer: int
    id: str


class _HubRow(msgspec.Struct):
    problem: str
    answer: int | str
    id: str


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "test.jsonl"]


def _from_hub(where: str, row: _HubRow) -> _Fields:
    answer = row.answer
    if isinstance(answer, str):
        if not (answer.isascii() and answer.isdigit()):
            raise bad_row(where, f"answer {answer!r} is not an integer")
        answer = int(answer)
    return _Fields(row.problem, answer, row.id)


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if local_files(paths):
        typed = jsonl_rows(paths[0], _decoder)
    else:
        typed = [(w, _from_hub(w, r)) for w, r in from_hub(SOURCE, split, paths, _HubRow)]
    unique(typed, "id")
    return as_fields(typed)
