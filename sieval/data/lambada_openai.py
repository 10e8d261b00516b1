"""LAMBADA, OpenAI's preprocessed test set: ``lambada_openai/lambada_test.jsonl``, JSON Lines of
``{"text"}`` (5,153 rows), byte-identical to the hub's ``data/lambada_test_en.jsonl``.

lm-eval 0.4.13 ``lambada_openai`` reads ``EleutherAI/lambada_openai`` config ``default``, split
test: the context is ``text`` up to its last space, the target `` `` plus the last word. Rows:
``text``, a string; a text without a space (no last word to predict) is refused. Two passages
occur twice in OpenAI's file (lines 1754/1890 and 3470/3625), as in lm-eval's data.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_or_hub
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="lambada_openai",
    splits=("test",),
    hub="EleutherAI/lambada_openai",
    hub_name="default",
    format='JSON Lines of {"text"}: lambada_test.jsonl',
    fields=("text",),
)


class _Fields(msgspec.Struct):
    text: str


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "lambada_test.jsonl"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(
        SOURCE, split, paths, lambda: jsonl_rows(paths[0], _decoder), _Fields, SOURCE.hub_name
    )
    for where, row in typed:
        context, space, word = row.text.rpartition(" ")
        if not (space and context and word):
            raise bad_row(where, "the text has no last word after a space to predict")
    return as_fields(typed)
