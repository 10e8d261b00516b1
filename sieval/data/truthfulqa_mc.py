"""TruthfulQA multiple choice (Lin et al. 2022): ``truthfulqa_mc/mc_task.json``, the original
release's JSON array at the commit the hub's builder pins (817 rows, all of validation).

lm-eval 0.4.13 ``truthfulqa_mc1`` / ``truthfulqa_mc2`` read ``truthfulqa/truthful_qa`` config
``multiple_choice``, split validation: ``question``, ``mc1_targets.choices`` (gold index 0) and
``mc2_targets.choices`` / ``.labels``. The release writes each target set as one ordered object
``{answer text: 0 or 1}``; the hub (and so each row here) has ``{"choices": [texts in order],
"labels": [ints in order]}``. Rows: ``question, mc1_targets{choices, labels}, mc2_targets{choices,
labels}``. A target set with a repeated answer, a label other than 0/1, fewer than two choices or
no true one is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from .rows import as_fields, bad_row, from_hub, json_array_rows, local_files, read_text
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="truthfulqa_mc",
    splits=("validation",),
    hub="truthfulqa/truthful_qa",
    hub_name="multiple_choice",
    format="the release's JSON array of {answer: 0/1} objects: mc_task.json",
    fields=("question", "mc1_targets", "mc2_targets"),
)


class _Targets(msgspec.Struct):
    choices: list[str]
    labels: list[int]


class _Fields(msgspec.Struct):
    question: str
    mc1_targets: _Targets
    mc2_targets: _Targets


class _Stored(msgspec.Struct):
    question: str
    mc1_targets: msgspec.Raw
    mc2_targets: msgspec.Raw


_decoder = msgspec.json.Decoder(_Stored)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "mc_task.json"]


class _Pairs(list[tuple[str, Any]]):
    """A JSON object's members in order, repeats kept."""


def _pairs(where: str, name: str, raw: msgspec.Raw) -> _Targets:
    pairs = json.loads(bytes(raw), object_pairs_hook=_Pairs)
    if not isinstance(pairs, _Pairs):
        raise bad_row(where, f"{name} is not an object {{answer: 0 or 1}}")
    choices = [k for k, _ in pairs]
    labels = [v for _, v in pairs]
    return _Targets(choices, labels)


def _check(where: str, name: str, targets: _Targets) -> None:
    if len(targets.choices) != len(targets.labels) or len(targets.choices) < 2:
        raise bad_row(
            where,
            f"{name} has {len(targets.choices)} answers and {len(targets.labels)} labels; it "
            "needs at least two of each, as many labels as answers",
        )
    seen = set()
    for choice, label in zip(targets.choices, targets.labels, strict=True):
        if choice in seen:
            raise bad_row(where, f"{name} lists the answer {choice!r} twice")
        seen.add(choice)
        if label not in (0, 1) or isinstance(label, bool):
            raise bad_row(where, f"{name}[{choice!r}] is {label!r}, not 0 or 1")
    if 1 not in targets.labels:
        raise bad_row(where, f"{name} has no true answer (label 1)")


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    if not local_files(paths):
        typed = from_hub(SOURCE, split, paths, _Fields, SOURCE.hub_name)
    else:
        path = paths[0]
        stored = json_array_rows(str(path), read_text(path).encode(), _decoder)
        typed = [
            (
                where,
                _Fields(
                    row.question,
                    _pairs(where, "mc1_targets", row.mc1_targets),
                    _pairs(where, "mc2_targets", row.mc2_targets),
                ),
            )
            for where, row in stored
        ]
    for where, row in typed:
        _check(where, "mc1_targets", row.mc1_targets)
        _check(where, "mc2_targets", row.mc2_targets)
    return as_fields(typed)
