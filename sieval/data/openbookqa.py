"""OpenBookQA (Mihaylov et al. 2018), ``main``: the original release files: ``openbookqa/
train.jsonl`` and ``test.jsonl`` (JSON Lines, the stem and choices nested under ``question``) and
``openbookqa/dev.tsv`` (tab-separated with a header, the choices as one ``(A) ... (D) ...``
string). 4,957 / 500 / 500 rows.

lm-eval 0.4.13 ``openbookqa`` reads ``allenai/openbookqa`` config ``main`` (scores test, shots from
train): ``question_stem``, ``choices.text``, ``choices.label`` and ``answerKey``. Rows are that
schema: ``id, question_stem, choices{text, label}, answerKey``, all strings (``question.stem``
becomes ``question_stem``; the dev choices are split at each `` (B) ``-style label, refused
unless that gives A, B, C, D in order). ``openbookqa.zip`` (the hub's Arrow cache of all three
splits) is not read: tests check it holds the same rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, from_hub, header_rows, jsonl_rows, local_files
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="openbookqa",
    splits=("train", "validation", "test"),
    hub="allenai/openbookqa",
    hub_name="main",
    format="original release: train.jsonl, test.jsonl (JSON Lines), dev.tsv (validation)",
    fields=("id", "question_stem", "choices", "answerKey"),
)
_FILES = {"train": "train.jsonl", "validation": "dev.tsv", "test": "test.jsonl"}
_TSV_COLUMNS = ("ID", "Question Stem", "Choices", "Complete Question", "Answer Key")
_TSV_LABEL = re.compile(r"(?:^| )\(([A-Z])\) ")


class _Choices(msgspec.Struct):
    text: list[str]
    label: list[str]


class _Fields(msgspec.Struct):
    id: str
    question_stem: str
    choices: _Choices
    answerKey: str  # the schema's spelling


class _Choice(msgspec.Struct):
    text: str
    label: str


class _Question(msgspec.Struct):
    stem: str
    choices: list[_Choice]


class _Release(msgspec.Struct):
    id: str
    question: _Question
    answerKey: str


_decoder = msgspec.json.Decoder(_Release)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / _FILES[split]]


def _from_release(row: _Release) -> _Fields:
    choices = row.question.choices
    return _Fields(
        row.id,
        row.question.stem,
        _Choices([c.text for c in choices], [c.label for c in choices]),
        row.answerKey,
    )


def _from_tsv(where: str, record: dict[str, str]) -> _Fields:
    parts = _TSV_LABEL.split(record["Choices"])
    labels, texts = parts[1::2], parts[2::2]
    if parts[0] or labels != ["A", "B", "C", "D"]:
        raise bad_row(
            where, f"the choices {record['Choices']!r} do not split into (A) ... (D) ... in order"
        )
    return _Fields(
        record["ID"], record["Question Stem"], _Choices(texts, labels), record["Answer Key"]
    )


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        typed = from_hub(SOURCE, split, paths, _Fields, SOURCE.hub_name)
    elif split == "validation":
        records = header_rows(paths[0], _TSV_COLUMNS, delimiter="\t", quoting=False)
        typed = [(where, _from_tsv(where, record)) for where, record in records]
    else:
        typed = [(where, _from_release(row)) for where, row in jsonl_rows(paths[0], _decoder)]
    for where, row in typed:
        if len(row.choices.text) != len(row.choices.label):
            raise bad_row(
                where,
                f"{len(row.choices.text)} choice texts but {len(row.choices.label)} labels",
            )
        if row.answerKey not in row.choices.label:
            raise bad_row(
                where,
                f"answerKey {row.answerKey!r} is not one of the labels "
                f"{', '.join(row.choices.label)}",
            )
    return as_fields(typed)
