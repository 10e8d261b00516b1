"""IFEval (Zhou et al. 2023): ``ifeval/input_data.jsonl``, google-research's JSON Lines (541
prompts). ``ifeval/reference/`` (the reference checker's sources) is not read here.

lm-eval 0.4.13 ``ifeval`` reads ``google/IFEval`` (no config), split ``train`` (the only one; so
it is the split's name here too): ``key, prompt, instruction_id_list, kwargs``. Rows: ``key`` an
int, ``prompt`` a string, ``instruction_id_list`` a list of strings and ``kwargs`` one dict a
instruction (``kwargs[i]`` is ``build_description``'s arguments for ``instruction_id_list[i]``),
holding only the arguments the instruction takes, as stored. The hub's Arrow schema gives every
dict all 24 argument names, ``None`` where unused, and lm-eval drops them (``if v``); the
fallback drops the ``None`` ones, so both paths give the stored form (the stored file has no
other falsy argument, so lm-eval's filter and this one agree on it).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_files, local_or_hub, unique
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="ifeval",
    splits=("train",),
    hub="google/IFEval",
    hub_name=None,
    format="JSON Lines, google-research's release: input_data.jsonl",
    fields=("key", "prompt", "instruction_id_list", "kwargs"),
)

Argument = str | int | float | list[str] | None


class _Fields(msgspec.Struct):
    key: int
    prompt: str
    instruction_id_list: list[str]
    kwargs: list[dict[str, Argument]]


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "input_data.jsonl"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(SOURCE, split, paths, lambda: jsonl_rows(paths[0], _decoder), _Fields)
    if not local_files(paths):  # the hub's Arrow schema pads every dict with None
        for _, row in typed:
            row.kwargs = [{k: v for k, v in kw.items() if v is not None} for kw in row.kwargs]
    for where, row in typed:
        if len(row.kwargs) != len(row.instruction_id_list):
            raise bad_row(
                where,
                f"{len(row.instruction_id_list)} instruction ids but {len(row.kwargs)} kwargs",
            )
    unique(typed, "key")
    return as_fields(typed)
