"""MMLU (Hendrycks et al. 2021): one headerless CSV per subject and split (dev, val, test).

Each row is ``question, A, B, C, D, answer-letter``; fields may hold commas, quotes and newlines,
so they are read with ``csv``. ``SUBJECTS`` maps the 57 subjects to the four categories of the
original release (``categories.py`` in hendrycks/test): STEM, humanities, social sciences, other.
lm-evaluation-harness differs in one place: it files ``anatomy`` under STEM; we keep the original.

``SOURCE`` / ``files`` / ``rows``: splits ``test``, ``validation`` (the stored ``val/``), ``dev``
(14,042 / 1,531 / 285 rows); the subject is the ``subset`` (``None``: all 57, in alphabetical
order, one file after another). lm-eval 0.4.13 ``mmlu_*`` reads ``cais/mmlu`` with the subject as
config (``test_split: test``, ``fewshot_split: dev``): ``question, subject, choices, answer``,
``choices`` the four option strings, ``answer`` the gold index 0-3 (an int; the CSV's letter
converted). The fallback asks the hub for the subject's config.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from .rows import as_fields, bad_row, csv_rows, from_hub, local_files
from .source import Row, Source

__all__ = ["CATEGORIES", "SOURCE", "SUBJECTS", "files", "mmlu_file", "rows"]

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


class _Item(msgspec.Struct, frozen=True, kw_only=True):
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


_FIELDS = "question, A, B, C, D, answer letter"


class _HubRow(msgspec.Struct):
    question: str
    choices: tuple[str, str, str, str]
    answer: int


def _csv_item(subject: str, index: int, where: str, record: list[str]) -> _Item:
    if len(record) != 6:
        raise bad_row(where, f"expected 6 fields ({_FIELDS}), got {len(record)}")
    question, a, b, c, d, answer = record
    if answer not in LETTERS:
        raise bad_row(where, f"answer {answer!r} is not one of {', '.join(LETTERS)}")
    return _Item(
        subject=subject, index=index, question=question, options=(a, b, c, d), answer=answer
    )


def _hub_item(subject: str, index: int, where: str, row: _HubRow) -> _Item:
    if not 0 <= row.answer < len(LETTERS):
        raise bad_row(where, f"answer {row.answer} is not an index 0-3")
    return _Item(
        subject=subject,
        index=index,
        question=row.question,
        options=row.choices,
        answer=LETTERS[row.answer],
    )


SOURCE = Source(
    folder="mmlu",
    splits=("test", "validation", "dev"),
    hub="cais/mmlu",
    hub_name=None,
    format="headerless CSV, one file a subject and split: {dev,val,test}/{subject}_{split}.csv",
    fields=("question", "subject", "choices", "answer"),
    subsets=tuple(sorted(SUBJECTS)),
)
_STORED_SPLIT = {"test": "test", "validation": "val", "dev": "dev"}


class _Fields(msgspec.Struct):
    question: str
    subject: str
    choices: list[str]
    answer: int


def _subjects(subset: str | None) -> tuple[str, ...]:
    return SOURCE.subsets if subset is None else (subset,)


def files(data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
    SOURCE.check(data_dir, split, subset)
    return [mmlu_file(data_dir, s, _STORED_SPLIT[split]) for s in _subjects(subset)]


def _subject_rows(data_dir: Path, subject: str, split: str, local: bool) -> list[Row]:
    path = mmlu_file(data_dir, subject, _STORED_SPLIT[split])
    if not local:
        hub = from_hub(SOURCE, split, [path], _HubRow, subject)
        items = [_hub_item(subject, i, where, row) for i, (where, row) in enumerate(hub)]
        places = [where for where, _ in hub]
    else:
        records = csv_rows(path)
        items = [_csv_item(subject, i, where, rec) for i, (where, rec) in enumerate(records)]
        places = [where for where, _ in records]
    return as_fields(
        (where, _Fields(item.question, subject, list(item.options), LETTERS.index(item.answer)))
        for where, item in zip(places, items, strict=True)
    )


def rows(data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
    local = local_files(files(data_dir, split, subset))
    return [r for s in _subjects(subset) for r in _subject_rows(data_dir, s, split, local)]
