"""MMLU-Pro: 12,032 questions in 14 categories, up to ten options, chain of thought.

Wang et al. 2024, "MMLU-Pro: A More Robust and Challenging Multi-Task Language Understanding
Benchmark", https://arxiv.org/abs/2406.01574

The official prompt (TIGER-AI-Lab/MMLU-Pro ``evaluate_from_local.py``): a line naming the
category and asking to finish with "the answer is (X)", then the category's five validation
rows as chain-of-thought shots (``Question:\\n…\\nOptions:\\nA. …\\nAnswer: Let's think step by
step. …``), then the question, its options and ``Answer: Let's think step by step.``. Greedy,
max_tokens 2048, stopped at ``Question:`` on a raw-text prompt. A chat model gets the same text as
one user message; ``num_fewshot: 0`` gives the 0-shot chat form. ``accuracy``: the letter by the
official rules, in order (``answer is (X)``, ``Answer: X``, the last standalone letter;
``scoring/multiple_choice.py``) is the gold letter; where none matches the sample is invalid,
never guessed. Reported per category (``by_category``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..data.mmlu_pro import CATEGORIES
from ..scoring.multiple_choice import SAME_LETTER, extract_mmlu_pro_letter
from .base import Sample
from .families import Checked, Verdict
from .prompt import Prompt
from .shots import FIRST_N
from .spec import Data, Spec, SpecTask

LETTERS = "ABCDEFGHIJ"
DESCRIPTION = (
    "The following are multiple choice questions (with answers) about {{category}}. Think step "
    'by step and then finish your answer with "the answer is (X)" where X is the correct letter '
    "choice.\n\n"
)
COT_START = "A: Let's think step by step."


def question(row: Mapping[str, Any]) -> str:
    options = "".join(f"{LETTERS[i]}. {o}\n" for i, o in enumerate(row["options"]))
    return f"Question:\n{row['question']}\nOptions:\n{options}Answer: Let's think step by step."


def reasoning(row: Mapping[str, Any]) -> str:
    """A shot's chain of thought after ``Answer: Let's think step by step.``."""
    cot = str(row["cot_content"])
    return cot[len(COT_START) :].strip() if cot.startswith(COT_START) else cot.strip()


def check(text: str, sample: Sample) -> Verdict:
    found = extract_mmlu_pro_letter(text)
    return Verdict(
        metrics={"accuracy": float(found.letter == sample.gold)},
        extracted=found.letter,
        rule=found.rule,
    )


SPEC = Spec(
    name="mmlu_pro",
    about=__doc__.split("\n\n")[1],
    reference="TIGER-AI-Lab/MMLU-Pro evaluate_from_local.py (prompt, shots, rules)",
    data=Data(
        source="mmlu_pro",
        split="test",
        shots="validation",
        sampler=FIRST_N,
        subsets=CATEGORIES,
        id_field="question_id",
    ),
    prompt=Prompt(text=question, target=reasoning, description=DESCRIPTION),
    family=Checked(
        check=check,
        gold=lambda row: row["answer"],
        headline="accuracy",
        equivalence=SAME_LETTER,
        input="completion",
        max_tokens=2048,
        stop=("Question:",),
        protocol_text=(
            "mmlu_pro (TIGER-AI-Lab evaluate_from_local.py): the category line and the "
            "category's validation CoT shots, then the question; greedy, max_tokens 2048; the "
            "letter by 'answer is (X)', else 'Answer: X', else the last standalone A-J; no "
            "random guess (invalid instead)"
        ),
    ),
    headline="accuracy",
    num_fewshot=5,
    breakdowns={"by_category": lambda group: group},
    differs="an answer no rule reads is invalid (counted), not the official script's random guess",
)
TASK = SpecTask(SPEC)
