"""MBPP (Austin et al. 2021): ``mbpp/mbpp.jsonl`` (the full set, JSON Lines, task ids 1-974) and
``mbpp/sanitized-mbpp.json`` (the hand-verified set, one JSON array, 427 tasks), google-research's
release.

The config is the ``subset`` (required): ``full`` or ``sanitized``, as on the hub. The splits are
the release README's task-id ranges, as the hub's ``mbpp`` builder cuts them: ``prompt`` 1-10,
``test`` 11-510, ``validation`` 511-600, ``train`` 601-974 (full: 10 / 500 / 90 / 374 rows;
sanitized: 7 / 257 / 43 / 120), rows in task-id order. lm-eval 0.4.13 ``mbpp`` reads
``google-research-datasets/mbpp`` config ``full``, split test (``text`` and ``test_list[0..2]``
in the prompt; the 3-shot prompt is tasks 2, 3 and 4). Rows, as the hub's configs have them:

- ``full``: ``task_id`` (int), ``text``, ``code``, ``test_list`` (strings), ``test_setup_code``,
  ``challenge_test_list`` (strings); the code keeps the release's ``\\r\\n`` line ends;
- ``sanitized``: ``source_file``, ``task_id`` (int), ``prompt`` (the description), ``code``,
  ``test_imports`` (strings), ``test_list`` (strings).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, from_hub, json_array_rows, jsonl_rows, local_files, read_text
from .source import Row, Source

__all__ = ["SOURCE", "SPLITS", "files", "rows"]

SPLITS: dict[str, range] = {
    "train": range(601, 975),
    "test": range(11, 511),
    "validation": range(511, 601),
    "prompt": range(1, 11),
}
"""Each split's task ids (the release README's ranges)."""

SOURCE = Source(
    folder="mbpp",
    splits=tuple(SPLITS),
    hub="google-research-datasets/mbpp",
    hub_name="full",
    format="full: mbpp.jsonl (JSON Lines); sanitized: sanitized-mbpp.json (a JSON array)",
    fields=("task_id", "text", "code", "test_list", "test_setup_code", "challenge_test_list"),
    subsets=("full", "sanitized"),
    subset_required=True,
)
SANITIZED_FIELDS = ("source_file", "task_id", "prompt", "code", "test_imports", "test_list")
"""The rows' fields for ``subset="sanitized"`` (``SOURCE.fields`` are those of ``full``)."""


class _Full(msgspec.Struct):
    task_id: int
    text: str
    code: str
    test_list: list[str]
    test_setup_code: str
    challenge_test_list: list[str]


class _Sanitized(msgspec.Struct):
    source_file: str
    task_id: int
    prompt: str
    code: str
    test_imports: list[str]
    test_list: list[str]


_full = msgspec.json.Decoder(_Full)
_sanitized = msgspec.json.Decoder(_Sanitized)
_FILES = {"full": "mbpp.jsonl", "sanitized": "sanitized-mbpp.json"}


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    assert subset is not None  # checked: required
    return [data_dir / SOURCE.folder / _FILES[subset]]


def _read(path: Path, subset: str) -> list[tuple[str, _Full | _Sanitized]]:
    if subset == "full":
        return [(where, row) for where, row in jsonl_rows(path, _full)]
    data = read_text(path).encode()
    return [(where, row) for where, row in json_array_rows(str(path), data, _sanitized)]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    assert subset is not None
    if not local_files(paths):
        row_type = _Full if subset == "full" else _Sanitized
        return as_fields(from_hub(SOURCE, split, paths, row_type, subset))
    ids, last, kept = SPLITS[split], 0, []
    for where, row in _read(paths[0], subset):
        if row.task_id <= last:
            raise bad_row(where, f"task_id {row.task_id} does not follow {last}: ids must ascend")
        if not 1 <= row.task_id <= 974:
            raise bad_row(where, f"task_id {row.task_id} is outside the release's 1-974")
        last = row.task_id
        if row.task_id in ids:
            kept.append((where, row))
    return as_fields(kept)
