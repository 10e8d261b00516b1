"""RULER's metrics (``scripts/eval/evaluate.py`` and ``scripts/eval/synthetic/constants.py``).

A prediction is cleaned as RULER's ``postprocess_pred`` does (stripped; each control character
``\\x00``-``\\x1f`` replaced by a newline; stripped again). Per sample:

- ``string_match_all``: the share of the references found in the prediction (case-insensitive
  substring);
- ``string_match_part``: 1 when any reference is found, else 0.

RULER's task score is the mean over samples times 100, rounded to 2 decimals (``task_score``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["postprocess", "string_match_all", "string_match_part", "task_score"]

_CONTROL = re.compile(r"[\x00-\x1f]")


def postprocess(prediction: str) -> str:
    return _CONTROL.sub("\n", prediction.strip()).strip()


def string_match_all(prediction: str, references: Sequence[str]) -> float:
    found = prediction.lower()
    return sum(1.0 if r.lower() in found else 0.0 for r in references) / len(references)


def string_match_part(prediction: str, references: Sequence[str]) -> float:
    found = prediction.lower()
    return max(1.0 if r.lower() in found else 0.0 for r in references)


def task_score(per_sample: Sequence[float]) -> float:
    """RULER's figure for a task: the mean per-sample score in percent, to 2 decimals."""
    return round(sum(per_sample) / len(per_sample) * 100, 2)
