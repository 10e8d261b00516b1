"""MATH-500 (Lightman et al. 2023): ``math500/test.jsonl``, PRM800K's ``math_splits/test.jsonl``
(JSON Lines, 500 rows; its sha256 is the one PRM800K's LFS pointer records).

lm-eval 0.4.13 ``hendrycks_math500`` / ``minerva_math500`` read ``HuggingFaceH4/MATH-500`` config
``default``, split test, whose schema this file already has. Rows: ``problem, solution, answer,
subject`` (strings; ``answer`` the final answer in LaTeX, no ``\\boxed{}``), ``level`` (an int
1-5) and ``unique_id`` (the problem's file in MATH's test set; unique).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_or_hub, unique
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="math500",
    splits=("test",),
    hub="HuggingFaceH4/MATH-500",
    hub_name="default",
    format="JSON Lines, PRM800K's math_splits/test.jsonl: test.jsonl",
    fields=("problem", "solution", "answer", "subject", "level", "unique_id"),
)


class _Fields(msgspec.Struct):
    problem: str
    solution: str
    answer: str
    subject: str
    level: int
    unique_id: str


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "test.jsonl"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(
        SOURCE, split, paths, lambda: jsonl_rows(paths[0], _decoder), _Fields, SOURCE.hub_name
    )
    unique(typed, "unique_id")
    for where, row in typed:
        if not row.answer.strip():
            raise bad_row(where, "the answer is empty")
    return as_fields(typed)
