"""What MATH-500 and the AIME tasks share: the 0-shot chain-of-thought instruction, the boxed
answer compared by value (``scoring/math_answer.py``: the last ``\\boxed{}``, else Minerva's
final-answer sentence; math-verify's equivalence, not string equality)."""

from __future__ import annotations

from ..scoring.math_answer import DEPENDENCIES, same_value, score_math
from ..scoring.repeats import Equivalence
from .base import Sample
from .families import Checked, Verdict

INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."
SAME_VALUE = Equivalence(
    "math-verify's equivalence (a group's first answer in the gold's place), as the checker "
    "compares an answer with the gold",
    same_value,
)


def check(text: str, sample: Sample) -> Verdict:
    """The answer's verdict; an empty box (``\\boxed{}``, the instruction echoed) is no answer:
    invalid, reason ``empty_box``."""
    verdict = score_math(text, str(sample.gold))
    if verdict.extracted is not None and not verdict.extracted.strip():
        return Verdict(
            metrics={"accuracy": 0.0}, extracted=None, rule=None, channels={"reason": "empty_box"}
        )
    channels = {"reason": verdict.reason} if verdict.reason is not None else {}
    return Verdict(
        metrics={"accuracy": float(verdict.correct)},
        extracted=verdict.extracted,
        rule=verdict.rule,
        channels=channels,
    )


def family(answer: str, max_tokens: int) -> Checked:
    return Checked(
        check=check,
        gold=lambda row: str(row[answer]),
        headline="accuracy",
        input="chat",
        max_tokens=max_tokens,
        equivalence=SAME_VALUE,
        needs=DEPENDENCIES,
        protocol_text=(
            "0-shot CoT: the problem and the line "
            f"{INSTRUCTION!r} as the user message; greedy, max_tokens {max_tokens}; the last "
            "\\boxed{} (else Minerva's 'Final Answer: The final answer is X.') compared with the "
            "gold answer by math-verify 0.9 (parse + verify, its default normalisations); an "
            "answer of several lines or a false equation between numbers (7 = 5) is wrong"
        ),
    )
