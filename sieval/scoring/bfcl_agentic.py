"""BFCL's agentic answer check, written from its documented behaviour (sieval's own).

BFCL v4's agentic categories (memory, web search) end with an answer in text; bfcl-eval
2026.3.23 grades it (``eval_checker/agentic_eval``, ``eval_runner._evaluate_single_agentic_entry``;
``tests/scoring/test_bfcl_agentic_parity.py`` runs that checker on the same outputs):

- the answer is the **last reply of the turn that is not a call** (a step whose reply decodes to
  calls is passed over); none, or an empty one, fails the entry (``agentic:no_last_message``);
- answer and possible answers are **standardised**: the characters ``, . / - _ * ^ ( )``
  removed, lower-cased, ``'`` written ``"`` (whitespace is kept: bfcl-eval's docstrings say
  it is ignored, its code keeps it, and its code is what is followed here);
- the entry passes when one standardised possible answer occurs in the standardised answer
  **as a whole word** (a regular-expression search of the escaped answer between word
  boundaries ``\\b``); otherwise ``agentic:answer_not_found``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["AgenticVerdict", "answer_of", "check_answer", "standardised"]

_DROPPED = re.compile(r"[,./\-_*^()]")


@dataclass(frozen=True)
class AgenticVerdict:
    valid: bool
    error_type: str | None = None
    answer: str | None = None
    """The reply graded (the turn's last reply that is not a call), when there was one."""


def standardised(text: str) -> str:
    """``text`` as BFCL compares it (see the module)."""
    return _DROPPED.sub("", text).lower().replace("'", '"')


def answer_of(steps: Sequence[tuple[str, bool]]) -> str | None:
    """The reply graded among a turn's steps (``(text, held calls)`` each, in order): the last
    that held no call; ``None`` when every step called."""
    found = None
    for text, called in steps:
        if not called:
            found = text
    return found


def check_answer(answer: str | None, possible: Sequence[str]) -> AgenticVerdict:
    """BFCL's verdict on ``answer`` (from :func:`answer_of`) against the possible answers."""
    if not answer:
        return AgenticVerdict(False, "agentic:no_last_message", answer)
    said = standardised(answer)
    for expected in possible:
        if re.search(rf"\b{re.escape(standardised(expected))}\b", said):
            return AgenticVerdict(True, None, answer)
    return AgenticVerdict(False, "agentic:answer_not_found", answer)
