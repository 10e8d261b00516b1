"""SciQ (Welbl et al. 2017): ``sciq/SciQ.zip``, the original AI2 release, read in memory: one JSON
array a split, ``SciQ dataset-2 3/{train,valid,test}.json`` (11,679 / 1,000 / 1,000 rows).

lm-eval 0.4.13 ``sciq`` reads ``allenai/sciq`` (scores test, shots from train):
``"{support.lstrip()}\\nQuestion: {question}\\nAnswer:"`` with the choices ``distractor1..3`` and
``correct_answer`` (gold index 3). The release uses the hub's field names, and the hub's loader
reads these same files (``validation`` is ``valid.json``). Rows: ``question, distractor3,
distractor1, distractor2, correct_answer, support``, all strings (``support`` may be empty).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, from_hub, json_array_rows, local_files, zip_member
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="sciq",
    splits=("train", "validation", "test"),
    hub="allenai/sciq",
    hub_name=None,
    format="the release zip, one JSON array a split: SciQ.zip!SciQ dataset-2 3/{split}.json",
    fields=("question", "distractor3", "distractor1", "distractor2", "correct_answer", "support"),
)
_MEMBER = {"train": "train", "validation": "valid", "test": "test"}


class _Fields(msgspec.Struct):
    question: str
    distractor3: str
    distractor1: str
    distractor2: str
    correct_answer: str
    support: str


_decoder = msgspec.json.Decoder(_Fields)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "SciQ.zip"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        return as_fields(from_hub(SOURCE, split, paths, _Fields))
    member = f"SciQ dataset-2 3/{_MEMBER[split]}.json"
    data = zip_member(paths[0], member)
    return as_fields(json_array_rows(f"{paths[0]}!{member}", data, _decoder))
