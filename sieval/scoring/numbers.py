"""Final-answer extraction and comparison for GSM8K, as lm-evaluation-harness's ``gsm8k`` task
(``lm_eval/tasks/gsm8k/gsm8k.yaml``, version 3.0) defines them.

- strict (its ``strict-match`` filter): the first match of ``#### (\\-?[0-9\\.\\,]+)``: exactly
  ``####``, one space, then digits, ``.``, ``,`` and an optional leading ``-`` (no ``$``);
- flexible (its ``flexible-extract`` filter): the last match of
  ``(-?[$0-9.,]{2,})|(-?[0-9]+)``, whichever group matched;
- no match is lm-eval's ``[invalid]``, here ``None`` (it never equals a gold answer).

The extracted answer and the whole gold solution are then normalised as its ``exact_match``
metric is configured: every ``,``, every ``$``, everything through the last ``#### `` and one
trailing ``.`` are removed (in that order), then both are lowercased; nothing is stripped, and
there is no numeric equivalence (``72.0`` is not ``72``, ``1.000`` is not ``1000``).
"""

from __future__ import annotations

import re

__all__ = ["extract_flexible", "extract_strict", "gold_number", "normalize_answer"]

STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")
FLEXIBLE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
IGNORED = tuple(re.compile(p) for p in (",", r"\$", r"(?s).*#### ", r"\.$"))
"""exact_match's ``regexes_to_ignore``, applied in this order to prediction and gold alike."""


def normalize_answer(text: str) -> str:
    """exact_match's normalisation: remove each ``IGNORED`` pattern in turn, then lowercase."""
    for pattern in IGNORED:
        text = pattern.sub("", text)
    return text.lower()


def extract_strict(text: str) -> str | None:
    """The normalised first strict match, or None."""
    match = STRICT.search(text)
    return normalize_answer(match.group(1).strip()) if match else None


def extract_flexible(text: str) -> str | None:
    """The normalised last flexible match, or None."""
    matches = FLEXIBLE.findall(text)  # (group 1, group 2) pairs; exactly one is non-empty
    if not matches:
        return None
    return normalize_answer(next(group for group in matches[-1] if group).strip())


def gold_number(answer: str) -> str:
    """The gold answer of a GSM8K solution: the whole solution, normalised (so what follows its
    last ``#### ``, less commas, ``$`` and one trailing period)."""
    if "#### " not in answer:
        raise ValueError(f"GSM8K answer has no '#### ' line: {answer[-80:]!r}")
    return normalize_answer(answer)
