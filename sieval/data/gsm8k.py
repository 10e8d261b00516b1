"""GSM8K (Cobbe et al. 2021): ``gsm8k/{train,test}.jsonl``, the original OpenAI JSON Lines release
(7,473 / 1,319 rows), the hub's ``main`` config.

lm-eval 0.4.13 ``gsm8k`` reads ``openai/gsm8k`` config ``main``: ``question`` and ``answer`` (the
worked solution; the gold is what follows its last ``#### ``). Rows: ``question, answer``, both
strings; an answer without a final ``#### N`` is refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_or_hub
from .source import Row, Source

__all__ = ["SOURCE", "files", "rows"]

_HUB = ("openai/gsm8k", "main")
SOURCE = Source(
    folder="gsm8k",
    splits=("train", "test"),
    hub=_HUB[0],
    hub_name=_HUB[1],
    format="JSON Lines, the original OpenAI release: {split}.jsonl",
    fields=("question", "answer"),
)
FINAL_MARKER = "#### "
"""lm-eval's gold is what follows the last ``#### `` of the solution."""
_FINAL_NUMBER = re.compile(r"-?[0-9.,]*[0-9][0-9.,]*")
"""What lm-eval's strict-match could extract after ``#### `` (so a gold that can be matched)."""


class _Row(msgspec.Struct):
    question: str
    answer: str


_decoder = msgspec.json.Decoder(_Row)


def _file(data_dir: Path, split: str) -> Path:
    """``gsm8k/{split}.jsonl`` (split: train, test)."""
    return data_dir / "gsm8k" / f"{split}.jsonl"


def _check(where: str, row: _Row) -> None:
    _, marker, final = row.answer.rpartition(FINAL_MARKER)
    if not marker:
        raise bad_row(where, "the answer has no final '#### N' line (with one space after ####)")
    if not _FINAL_NUMBER.fullmatch(final):
        raise bad_row(where, f"{final!r} after the last '#### ' is not a number")


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [_file(data_dir, split)]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(
        SOURCE, split, paths, lambda: jsonl_rows(paths[0], _decoder), _Row, SOURCE.hub_name
    )
    for where, row in typed:
        _check(where, row)
    return as_fields(typed)
