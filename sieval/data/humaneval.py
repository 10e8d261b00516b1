"""HumanEval (Chen et al. 2021): ``humaneval/HumanEval.jsonl.gz``, the original release's gzipped
JSON Lines (164 rows, ``HumanEval/0`` ... ``HumanEval/163``).

lm-eval 0.4.13 ``humaneval`` reads ``openai/openai_humaneval`` (no config), split test: the prompt
is ``prompt``, the program run is ``prompt + completion`` then ``test`` and
``check({entry_point})``. Rows: ``task_id, prompt, canonical_solution, test, entry_point``, all
strings, in the hub's field order; task ids must be unique.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_or_hub, unique
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="humaneval",
    splits=("test",),
    hub="openai/openai_humaneval",
    hub_name=None,
    format="gzipped JSON Lines, the original release: HumanEval.jsonl.gz",
    fields=("task_id", "prompt", "canonical_solution", "test", "entry_point"),
)


class _Fields(msgspec.Struct):
    task_id: str
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "HumanEval.jsonl.gz"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(
        SOURCE, split, paths, lambda: jsonl_rows(paths[0], _decoder, gzipped=True), _Fields
    )
    unique(typed, "task_id")
    for where, row in typed:
        if not row.entry_point.isidentifier():
            raise bad_row(where, f"entry_point {row.entry_point!r} is not a Python name")
    return as_fields(typed)
