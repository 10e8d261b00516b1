"""PIQA (Bisk et al. 2020): validation from the original release (``piqa/valid.jsonl``, one JSON
object a line, and ``piqa/valid-labels.lst``, its gold ``0``/``1`` line by line); train and test
from ``piqa/piqa.zip``, a Hugging Face ``datasets`` cache of ``piqa`` (one Arrow IPC stream a split,
read from the zip in memory). 16,113 / 1,838 / 3,084 rows.

lm-eval 0.4.13 ``piqa`` reads ``baber/piqa`` (scores validation, shots from train): ``goal``,
``sol1``, ``sol2`` and ``label``. Rows: ``goal, sol1, sol2`` (strings, trailing spaces kept as
stored) and ``label`` (an int: 0 picks sol1, 1 sol2; -1 in the unlabelled test split). The
cache's validation split equals the release files row for row (tests check it).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .arrow import zipped_stream_rows
from .rows import (
    as_fields,
    bad_row,
    converted,
    from_hub,
    jsonl_rows,
    lines,
    local_files,
    read_text,
)
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="piqa",
    splits=("train", "validation", "test"),
    hub="baber/piqa",
    hub_name=None,
    format="validation: valid.jsonl + valid-labels.lst; train, test: Arrow cache in piqa.zip",
    fields=("goal", "sol1", "sol2", "label"),
)
_CACHE = "piqa/plain_text/1.1.0/6c611c1a9bf220943c4174e117d3b660859665baf1d43156230116185312d011"


class _Text(msgspec.Struct):
    goal: str
    sol1: str
    sol2: str


class _Fields(msgspec.Struct):
    goal: str
    sol1: str
    sol2: str
    label: int


_decoder = msgspec.json.Decoder(_Text)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    folder = data_dir / SOURCE.folder
    if split == "validation":
        return [folder / "valid.jsonl", folder / "valid-labels.lst"]
    return [folder / "piqa.zip"]


def _labels(path: Path) -> list[int]:
    found = lines(read_text(path), path)
    if found and found[-1] == "":
        found.pop()
    labels = []
    for number, line in enumerate(found, 1):
        if line not in ("0", "1"):
            raise bad_row(f"{path}:{number}", f"label {line!r} is not 0 or 1")
        labels.append(int(line))
    return labels


def _release_rows(text_path: Path, labels_path: Path) -> list[tuple[str, _Fields]]:
    texts = jsonl_rows(text_path, _decoder)
    labels = _labels(labels_path)
    if len(labels) != len(texts):
        raise bad_row(
            str(labels_path), f"{len(labels)} labels for the {len(texts)} rows of {text_path.name}"
        )
    return [
        (where, _Fields(t.goal, t.sol1, t.sol2, label))
        for (where, t), label in zip(texts, labels, strict=True)
    ]


def _cache_rows(path: Path, split: str) -> list[tuple[str, _Fields]]:
    member = f"{_CACHE}/piqa-{split}.arrow"
    return converted(zipped_stream_rows(path, member, SOURCE.fields), _Fields)


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        typed = from_hub(SOURCE, split, paths, _Fields)
    elif split == "validation":
        typed = _release_rows(*paths)
    else:
        typed = _cache_rows(paths[0], split)
    labels = (-1,) if split == "test" else (0, 1)
    for where, row in typed:
        if row.label not in labels:
            raise bad_row(where, f"label {row.label} is not {' or '.join(map(str, labels))}")
    return as_fields(typed)
