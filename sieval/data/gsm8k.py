"""GSM8K (Cobbe et al. 2021): ``gsm8k/{train,test}.jsonl``, the original OpenAI JSON Lines release
(7,473 / 1,319 rows), the hub's ``main`` config.

lm-eval 0.4.13 ``gsm8k`` reads ``openai/gsm8k`` config ``main``: ``question`` and ``answer`` (the
worked solution; the gold is what follows its last ``#### ``). Rows: ``question, answer``, both
strings; an answer without a final ``#### N`` is refused. ``load_gsm8k`` is the older typed loader
today's GSM8K tasks use.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, hub_where, jsonl_rows, local_or_hub, typed_rows
from .source import Row, Source, hub_rows

__all__ = ["SOURCE", "Gsm8kItem", "files", "gsm8k_file", "load_gsm8k", "rows"]

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


class Gsm8kItem(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    """Row number in the split (the stable id)."""
    question: str
    answer: str
    """The full worked solution, ending in ``#### N``."""


class _Row(msgspec.Struct):
    question: str
    answer: str


_decoder = msgspec.json.Decoder(_Row)


def gsm8k_file(data_dir: Path, split: str) -> Path:
    """``gsm8k/{split}.jsonl`` (split: train, test)."""
    return data_dir / "gsm8k" / f"{split}.jsonl"


def _check(where: str, row: _Row) -> None:
    _, marker, final = row.answer.rpartition(FINAL_MARKER)
    if not marker:
        raise bad_row(where, "the answer has no final '#### N' line (with one space after ####)")
    if not _FINAL_NUMBER.fullmatch(final):
        raise bad_row(where, f"{final!r} after the last '#### ' is not a number")


def _item(index: int, where: str, row: _Row) -> Gsm8kItem:
    _check(where, row)
    return Gsm8kItem(index=index, question=row.question, answer=row.answer)


def load_gsm8k(data_dir: Path, split: str) -> list[Gsm8kItem]:
    """All rows of a split in file order; the hub's ``openai/gsm8k`` when the file is absent.

    A malformed row, or an answer whose final ``#### N`` is missing or not a number, is a
    ``ConfigError`` naming its line."""
    path = gsm8k_file(data_dir, split)
    if path.is_file():
        rows = jsonl_rows(path, _decoder)
    else:
        hub = hub_rows("gsm8k", *_HUB, split, [path])
        rows = typed_rows(hub, _Row, hub_where(*_HUB, split))
    return [_item(i, where, row) for i, (where, row) in enumerate(rows)]


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [gsm8k_file(data_dir, split)]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(
        SOURCE, split, paths, lambda: jsonl_rows(paths[0], _decoder), _Row, SOURCE.hub_name
    )
    for where, row in typed:
        _check(where, row)
    return as_fields(typed)
