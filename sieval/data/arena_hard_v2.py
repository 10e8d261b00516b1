"""Arena-Hard-Auto v2.0 (Li et al. 2024, https://arxiv.org/abs/2406.11939):
``arena_hard_v2/question.jsonl``, the 750 prompts (500 ``hard_prompt``, 250
``creative_writing``), stored as one split, ``test``; beside them the baseline's answers
(``baseline_o3-mini-2025-01-31.jsonl``) a judge compares an answer with (``baseline``).

Rows: ``uid`` (a string, unique), ``category``, ``subcategory``, ``prompt``. The judged task
(pairwise against the baseline, both orders) is another issue's; this module reads the rows.

The hub fallback reads ``lmarena-ai/arena-hard-auto`` (split ``train``); its layout was not
verified here (offline), so a row that does not fit is refused by name.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, jsonl_rows, local_or_hub, unique
from .source import Row, Source

__all__ = ["BASELINE_FILE", "SOURCE", "baseline", "files", "rows"]

SOURCE = Source(
    folder="arena_hard_v2",
    splits=("test",),
    hub="lmarena-ai/arena-hard-auto",
    hub_name=None,
    format="JSON Lines, arena-hard-auto's data/arena-hard-v2.0/question.jsonl: question.jsonl",
    fields=("uid", "category", "subcategory", "prompt"),
)
BASELINE_FILE = "baseline_o3-mini-2025-01-31.jsonl"
"""The baseline's answers to every prompt (o3-mini, 2025-01-31)."""


class _Fields(msgspec.Struct):
    uid: str
    category: str
    subcategory: str
    prompt: str


class _Answer(msgspec.Struct):
    answer: str


class _Message(msgspec.Struct):
    role: str
    content: str | _Answer


class _Baseline(msgspec.Struct):
    uid: str
    messages: list[_Message]


_decoder = msgspec.json.Decoder(_Fields)
_baseline_decoder = msgspec.json.Decoder(_Baseline)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [data_dir / SOURCE.folder / "question.jsonl"]


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    paths = files(data_dir, split, subset)
    typed = local_or_hub(SOURCE, "train", paths, lambda: jsonl_rows(paths[0], _decoder), _Fields)
    for where, row in typed:
        if not row.prompt.strip():
            raise bad_row(where, "the prompt is empty")
    unique(typed, "uid")
    return as_fields(typed)


def baseline(data_dir: Path) -> dict[str, str]:
    """The baseline's answer to each prompt, by ``uid`` (the assistant turn's ``answer``)."""
    path = data_dir / SOURCE.folder / BASELINE_FILE
    out: dict[str, str] = {}
    for where, row in jsonl_rows(path, _baseline_decoder):
        answers = [m.content for m in row.messages if m.role == "assistant"]
        if len(answers) != 1:
            raise bad_row(where, f"expected one assistant turn, got {len(answers)}")
        content = answers[0]
        out[row.uid] = content.answer if isinstance(content, _Answer) else content
    return out
