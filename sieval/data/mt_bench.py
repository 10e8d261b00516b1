"""MT-Bench (Zheng et al. 2023, https://arxiv.org/abs/2306.05685): ``mt_bench/question.jsonl``,
FastChat's 80 two-turn questions, 10 in each of 8 categories, stored as one split, ``test``.

Rows: ``question_id`` (an int, unique), ``category``, ``turns`` (the two user turns: the second
is asked after the model's own first answer) and ``reference`` (reference answers, on 39 rows:
every math and reasoning question, 9 of coding's and 10 others; None elsewhere). The judge prompts
and GPT-4's reference answers beside them are the judged task's to read.

The hub fallback reads ``HuggingFaceH4/mt_bench_prompts`` (split ``train``: ``prompt`` for the
turns, ``prompt_id``, ``category``, ``reference``); its shape was not verified here (offline), so
a row that does not fit is refused by name, never guessed at.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, from_hub, jsonl_rows, local_files, unique
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="mt_bench",
    splits=("test",),
    hub="HuggingFaceH4/mt_bench_prompts",
    hub_name=None,
    format="JSON Lines, FastChat's data/mt_bench/question.jsonl: question.jsonl",
    fields=("question_id", "category", "turns", "reference"),
)


class _Fields(msgspec.Struct):
    question_id: int
    category: str
    turns: list[str]
    reference: list[str] | None = None


class _HubRow(msgspec.Struct):
    prompt: list[str]
    prompt_id: int
    category: str
    reference: list[str] | None = None


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "question.jsonl"]


def _check(where: str, row: _Fields) -> None:
    if len(row.turns) != 2 or not all(t.strip() for t in row.turns):
        raise bad_row(where, f"expected two non-empty turns, got {len(row.turns)}")


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if local_files(paths):
        typed = jsonl_rows(paths[0], _decoder)
    else:
        typed = [
            (w, _Fields(r.prompt_id, r.category, r.prompt, r.reference or None))
            for w, r in from_hub(SOURCE, "train", paths, _HubRow)
        ]
    for where, row in typed:
        _check(where, row)
    unique(typed, "question_id")
    return as_fields(typed)
