"""GSM8K, 0-shot, greedy generation for chat models, scored by exact match of the final number.

Cobbe et al. 2021, "Training Verifiers to Solve Math Word Problems",
https://arxiv.org/abs/2110.14168

The question is the user message, followed by one instruction line asking for the final answer as
``#### <number>``; the reply is generated greedily (through the model's chat template). Headline
``exact_match`` reads a marked answer: the last ``#### N`` or ``\\boxed{N}`` of the reply;
``flexible_exact_match`` reads the last number of the reply (lm-evaluation-harness's
flexible-extract). Both compare after lm-eval's gsm8k normalisation (``scoring/numbers.py``):
commas, ``$``, one trailing period removed, lowercased. A reply that ends for length, or is empty,
is scored (as the model's answer) and its finish reason is recorded beside it.
"""

from __future__ import annotations

import re

from ..scoring import extract_flexible, gold_number, normalize_answer
from .families import Answer, Generation
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

INSTRUCTION = "Solve the problem step by step, then give the final answer as '#### <number>'."
MARKED = re.compile(r"####\s*(\-?[$0-9.,]+)|\\boxed\{\s*(\-?[$0-9.,]+)\s*\}")


def extract_marked(text: str) -> str | None:
    """The normalised last ``#### N`` or ``\\boxed{N}`` of ``text``, or None."""
    matches = MARKED.findall(text)
    if not matches:
        return None
    return normalize_answer(next(group for group in matches[-1] if group).strip())


SPEC = Spec(
    name="gsm8k_0shot_gen",
    about=__doc__.split("\n\n")[1],
    reference="sieval's chat GSM8K (lm-eval 0.4.13 gsm8k's normalisation and flexible-extract)",
    data=Data(source="gsm8k", split="test"),
    prompt=Prompt(text="{{question}}\n\n" + INSTRUCTION, target="answer"),
    family=Generation(
        answers=(
            Answer(metric="exact_match", extract=extract_marked),
            Answer(metric="flexible_exact_match", extract=extract_flexible, channel="flexible"),
        ),
        gold=lambda row: gold_number(row["answer"]),
        input="chat",
        finish_channel=True,
        protocol_text=(
            "chat, 0-shot: the question and one instruction line as the user message; greedy "
            "generation (temperature 0, max_tokens 256); exact_match = the last '#### N' or "
            "'\\boxed{N}'; flexible_exact_match = the last number (lm-eval flexible-extract); both "
            "after lm-eval's gsm8k normalisation (',', '$', a trailing '.' removed, lowercased)"
        ),
    ),
    headline="exact_match",
)
TASK = SpecTask(SPEC)
