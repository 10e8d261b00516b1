"""Multiple-choice answers read from chain-of-thought text (GPQA Diamond, MMLU-Pro), and the
recorded shuffle of GPQA's options.

- ``shuffle_choices``: GPQA lists the correct answer first, so every evaluator shuffles. Here the
  order is a pure function of ``(seed, key)``: options sorted by ``sha256(f"{seed}:{key}:{i}")``,
  with no random-number generator whose algorithm could change between Python versions; the
  permutation is returned so each sample's record holds it.
- ``extract_gpqa_letter``: simple-evals' rule (openai/simple-evals ``common.py``,
  ``ANSWER_PATTERN_MULTICHOICE``, used by ``gpqa_eval.py``, whose prompt ends "The last line of
  your response should be of the following format: 'Answer: $LETTER'"): the first match of
  ``(?i)Answer[ \\t]*:[ \\t]*\\$?([A-D])\\$?``. Rule ``answer_colon``.
- ``extract_mmlu_pro_letter``: the official MMLU-Pro rules (TIGER-AI-Lab/MMLU-Pro
  ``evaluate_from_local.py`` / ``evaluate_from_api.py``), in order: ``answer_is`` (first
  ``answer is \\(?([A-J])\\)?``, also lm-evaluation-harness 0.4.13's only ``mmlu_pro`` filter),
  ``answer_colon`` (``.*[aA]nswer:\\s*([A-J])`` on the first line that has one, its last
  occurrence there), ``last_letter`` (the last standalone ``A``-``J`` in the text). Where none
  matches, the official script guesses at random (seeded); here the answer is invalid (None),
  counted in ``invalid_rate``, never guessed.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Sequence

import msgspec

from .repeats import Equivalence, same_text

__all__ = ["SAME_LETTER", "Letter", "Shuffled", "extract_gpqa_letter", "extract_mmlu_pro_letter",
           "shuffle_choices"]  # fmt: skip

SAME_LETTER = Equivalence("the extracted letter (read as one upper-case letter)", same_text)
"""maj@k's groups of a multiple-choice task: the letters as extracted (each rule reads one
upper-case letter), so two answers are one vote when they name one letter."""

GPQA_ANSWER = re.compile(r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?")
MMLU_PRO_RULES = (
    ("answer_is", re.compile(r"answer is \(?([A-J])\)?")),
    ("answer_colon", re.compile(r".*[aA]nswer:\s*([A-J])")),
    ("last_letter", re.compile(r"\b([A-J])\b(?!.*\b[A-J]\b)", re.DOTALL)),
)


class Letter(msgspec.Struct, frozen=True, kw_only=True):
    letter: str | None
    """The extracted letter (upper case); None when no rule matched."""
    rule: str | None


class Shuffled(msgspec.Struct, frozen=True, kw_only=True):
    choices: tuple[str, ...]
    """The options in the order shown, lettered A, B, …"""
    permutation: tuple[int, ...]
    """``permutation[i]`` is the index in the original list of the option shown i-th."""
    seed: int
    key: str

    def letter_of(self, original_index: int) -> str:
        """The letter under which the original option ``original_index`` is shown."""
        return string.ascii_uppercase[self.permutation.index(original_index)]


def shuffle_choices(choices: Sequence[str], seed: int, key: str) -> Shuffled:
    """``choices`` in the order determined by ``seed`` and the item's ``key``."""

    def rank(i: int) -> bytes:
        return hashlib.sha256(f"{seed}:{key}:{i}".encode()).digest()

    permutation = tuple(sorted(range(len(choices)), key=rank))
    return Shuffled(
        choices=tuple(choices[i] for i in permutation), permutation=permutation, seed=seed,
        key=key,
    )  # fmt: skip


def extract_gpqa_letter(text: str) -> Letter:
    match = GPQA_ANSWER.search(text)
    if match is None:
        return Letter(letter=None, rule=None)
    return Letter(letter=match.group(1).upper(), rule="answer_colon")


def extract_mmlu_pro_letter(text: str) -> Letter:
    for rule, pattern in MMLU_PRO_RULES:
        match = pattern.search(text)
        if match:
            return Letter(letter=match.group(1), rule=rule)
    return Letter(letter=None, rule=None)
