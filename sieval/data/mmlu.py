"""MMLU (Hendrycks et al. 2021): one headerless CSV per subject and split (dev, val, test).

Each row is ``question, A, B, C, D, answer-letter``; fields may hold commas, quotes and newlines,
so they are read with ``csv``. ``SUBJECTS`` maps the 57 subjects to the four categories of the
original release (``categories.py`` in hendrycks/test): STEM, humanities, social sciences, other.
lm-evaluation-harness differs in one place: it files ``anatomy`` under STEM; we keep the original.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import bad_row, csv_rows, hub_where, typed_rows
from .source import hub_rows

__all__ = ["CATEGORIES", "SUBJECTS", "MmluItem", "load_mmlu", "mmlu_file"]

LETTERS = ("A", "B", "C", "D")
CATEGORIES = ("STEM", "humanities", "social sciences", "other")

_S, _H, _SS, _O = CATEGORIES
SUBJECTS: dict[str, str] = {
    "abstract_algebra": _S, "anatomy": _O, "astronomy": _S, "business_ethics": _O,
    "clinical_knowledge": _O, "college_biology": _S, "college_chemistry": _S,
    "college_computer_science": _S, "college_mathematics": _S, "college_medicine": _O,
    "college_physics": _S, "computer_security": _S, "conceptual_physics": _S,
    "econometrics": _SS, "electrical_engineering": _S, "elementary_mathematics": _S,
    "formal_logic": _H, "global_facts": _O, "high_school_biology": _S,
    "high_school_chemistry": _S, "high_school_computer_science": _S,
    "high_school_european_history": _H, "high_school_geography": _SS,
    "high_school_government_and_politics": _SS, "high_school_macroeconomics": _SS,
    "high_school_mathematics": _S, "high_school_microeconomics": _SS, "high_school_physics": _S,
    "high_school_psychology": _SS, "high_school_statistics": _S, "high_school_us_history": _H,
    "high_school_world_history": _H, "human_aging": _O, "human_sexuality": _SS,
    "international_law": _H, "jurisprudence": _H, "logical_fallacies": _H,
    "machine_learning": _S, "management": _O, "marketing": _O, "medical_genetics": _O,
    "miscellaneous": _O, "moral_disputes": _H, "moral_scenarios": _H, "nutrition": _O,
    "philosophy": _H, "prehistory": _H, "professional_accounting": _O, "professional_law": _H,
    "professional_medicine": _O, "professional_psychology": _SS, "public_relations": _SS,
    "security_studies": _SS, "sociology": _SS, "us_foreign_policy": _SS, "virology": _O,
    "world_religions": _H,
}  # fmt: skip


class MmluItem(msgspec.Struct, frozen=True, kw_only=True):
    subject: str
    index: int
    """Row number in the subject's file (with the subject, the stable id)."""
    question: str
    options: tuple[str, str, str, str]
    answer: str
    """The gold letter, ``A``-``D``."""


def mmlu_file(data_dir: Path, subject: str, split: str) -> Path:
    """``mmlu/{split}/{subject}_{split}.csv`` (split: dev, val, test)."""
    return data_dir / "mmlu" / split / f"{subject}_{split}.csv"


_HUB_SPLIT = {"dev": "dev", "val": "validation", "test": "test"}
_FIELDS = "question, A, B, C, D, answer letter"


class _HubRow(msgspec.Struct):
    question: str
    choices: tuple[str, str, str, str]
    answer: int


def _csv_item(subject: str, index: int, where: str, record: list[str]) -> MmluItem:
    if len(record) != 6:
        raise bad_row(where, f"expected 6 fields ({_FIELDS}), got {len(record)}")
    question, a, b, c, d, answer = record
    if answer not in LETTERS:
        raise bad_row(where, f"answer {answer!r} is not one of {', '.join(LETTERS)}")
    return MmluItem(
        subject=subject, index=index, question=question, options=(a, b, c, d), answer=answer
    )


def _hub_item(subject: str, index: int, where: str, row: _HubRow) -> MmluItem:
    if not 0 <= row.answer < len(LETTERS):
        raise bad_row(where, f"answer {row.answer} is not an index 0-3")
    return MmluItem(
        subject=subject,
        index=index,
        question=row.question,
        options=row.choices,
        answer=LETTERS[row.answer],
    )


def load_mmlu(data_dir: Path, subject: str, split: str) -> list[MmluItem]:
    """One subject's rows in file order; the hub's ``cais/mmlu`` when the file is absent.

    A record without six fields or with an answer outside A-D is a ``ConfigError`` naming the
    line it starts on."""
    path = mmlu_file(data_dir, subject, split)
    if path.is_file():
        return [
            _csv_item(subject, i, where, record) for i, (where, record) in enumerate(csv_rows(path))
        ]
    hub_split = _HUB_SPLIT[split]
    hub = hub_rows("mmlu", "cais/mmlu", subject, hub_split, [path])
    rows = typed_rows(hub, _HubRow, hub_where("cais/mmlu", subject, hub_split))
    return [_hub_item(subject, i, where, row) for i, (where, row) in enumerate(rows)]
