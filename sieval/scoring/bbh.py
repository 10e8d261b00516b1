"""BIG-Bench Hard answers, as lm-evaluation-harness 0.4.13's ``bbh_cot_fewshot`` extracts them.

Its ``_cot_fewshot_template_yaml`` has one filter list, ``get-answer``: the regex filter with
``(?<=the answer is )(.*)(?=.)``, then ``take_first``, then ``exact_match`` against the target
with no option set (no ``ignore_case``, ``ignore_punctuation`` or ``regexes_to_ignore``). So:

- the answer is the first match in the text (``re.findall(...)[0]``), stripped: what follows
  the first lowercase "the answer is " on its line, less the line's last character (the
  ``(?=.)`` look-ahead needs one more character, so ``the answer is True.`` gives ``True`` and
  ``the answer is True`` at the very end gives ``Tru``);
- no match is lm-eval's ``[invalid]`` fallback, here ``None`` (rule None);
- the score is 1 when that string equals the target exactly, 0 otherwise.

lm-eval applies no per-subtask answer normalisation in ``bbh_cot_fewshot`` (its 27 subtask
yamls set only the prompt and the few-shot samples; the per-subtask filters of
``bbh/cot_zeroshot/utils.py`` belong to the zero-shot variant). The generation's stop sequences
(``</s>``, ``Q``, ``\\n\\n``) are the request's business, not the extractor's.
"""

from __future__ import annotations

import re

import msgspec

__all__ = ["ANSWER", "BbhVerdict", "extract_bbh", "score_bbh"]

ANSWER = re.compile(r"(?<=the answer is )(.*)(?=.)")
RULE = "the_answer_is"


class BbhVerdict(msgspec.Struct, frozen=True, kw_only=True):
    correct: bool
    extracted: str | None
    """The extracted answer; None when nothing matched (lm-eval's ``[invalid]``)."""
    rule: str | None
    """``the_answer_is``, or None when nothing matched."""


def extract_bbh(text: str) -> str | None:
    matches = ANSWER.findall(text)
    return matches[0].strip() if matches else None


def score_bbh(text: str, target: str) -> BbhVerdict:
    answer = extract_bbh(text)
    return BbhVerdict(
        correct=answer is not None and answer == target, extracted=answer,
        rule=RULE if answer is not None else None,
    )  # fmt: skip
