"""Final-answer extraction for GSM8K-style math answers.

- strict: the first ``#### N`` in the text (the format the few-shot answers teach);
- flexible: the last number anywhere in the text.

Both are normalised the same way as the gold answer: commas and ``$`` removed, a trailing period
dropped, lowercased, surrounding space stripped. No numeric equivalence beyond that (``72.0`` is
not ``72``), matching lm-evaluation-harness's exact match.
"""

from __future__ import annotations

import re

__all__ = ["extract_flexible", "extract_strict", "gold_number", "normalize_number"]

_NUMBER = r"-?\$?\d[\d,]*(?:\.\d+)?"
_STRICT = re.compile(r"####\s*(" + _NUMBER + ")")
_ANY = re.compile(_NUMBER)


def normalize_number(text: str) -> str:
    """Drop commas and ``$``, a trailing period and surrounding space; lowercase."""
    return text.replace(",", "").replace("$", "").strip().rstrip(".").lower()


def extract_strict(text: str) -> str | None:
    """The normalised number after the first ``####``, or None."""
    match = _STRICT.search(text)
    return normalize_number(match.group(1)) if match else None


def extract_flexible(text: str) -> str | None:
    """The normalised last number in the text, or None."""
    matches = _ANY.findall(text)
    return normalize_number(matches[-1]) if matches else None


def gold_number(answer: str) -> str:
    """The gold answer of a GSM8K solution: the normalised text after its ``####``."""
    _, sep, tail = answer.rpartition("####")
    if not sep:
        raise ValueError(f"GSM8K answer has no '####' line: {answer[-80:]!r}")
    return normalize_number(tail)
