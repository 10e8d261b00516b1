"""MMLU, 0-shot, the model answers with a letter (generation), for wires without logprobs.

Hendrycks et al. 2021, "Measuring Massive Multitask Language Understanding",
https://arxiv.org/abs/2009.03300

The user message is the subject header, the question with its four options in hendrycks' format,
and one instruction line; the reply is generated greedily (max 8 tokens, through the model's chat
template). The letter is extracted strictly: the reply, stripped, must begin with the letter
alone (optionally in parentheses or bold, optionally after ``Answer:``), followed by nothing, a
space or punctuation; anything else is ``invalid`` and scored wrong (``invalid_rate`` counts
them). ``acc`` is the micro-average, with per-subject and per-category breakdowns.
"""

from __future__ import annotations

import re

from ._mmlu import GROUPS, ORIGINAL, SUBJECTS, description
from .families import Answer, Generation
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

INSTRUCTION = "Answer with the letter of the correct option (A, B, C or D) only."
STRICT = re.compile(r"^(?:answer\s*:\s*)?(?:\*\*)?\(?([ABCD])\)?(?:\*\*)?(?=$|[\s.,:;!)])", re.I)
MAX_TOKENS = 8
LETTERS = ("A", "B", "C", "D")
TEXT = description(
    "{{ (question ~ '\\nA. ' ~ choices[0] ~ '\\nB. ' ~ choices[1] ~ '\\nC. ' ~ choices[2]"
    " ~ '\\nD. ' ~ choices[3]).rstrip() }}\n\n" + INSTRUCTION
)


def extract_letter(text: str) -> str | None:
    """The answer letter when the reply, stripped, begins with it alone; else None."""
    match = STRICT.match(text.strip())
    return match.group(1).upper() if match else None


SPEC = Spec(
    name="mmlu_0shot_gen",
    about=__doc__.split("\n\n")[1],
    reference="hendrycks/test evaluate.py (question format), sieval's instruction and extraction",
    data=Data(
        source="mmlu",
        split="test",
        subsets=SUBJECTS,
        subset_option="subjects",
        subset_groups=GROUPS,
    ),
    prompt=Prompt(text=TEXT, target="answer"),
    family=Generation(
        answers=(Answer(metric="acc", extract=extract_letter),),
        gold=lambda row: LETTERS[row["answer"]],
        input="chat",
        max_tokens=MAX_TOKENS,
        has_max_tokens_option=False,
        invalid="invalid",
        request="answer",
        count_invalid=True,
        protocol_text=(
            "chat, 0-shot: subject header + question + options A-D in hendrycks' format + an "
            "instruction to answer with the letter only, as the user message; greedy generation "
            "(temperature 0, max_tokens 8); the letter extracted strictly from the start of the "
            "reply, anything else invalid and wrong; acc = micro-average"
        ),
    ),
    headline="acc",
    breakdowns={"by_subject": lambda group: group, "by_category": ORIGINAL.__getitem__},
    cluster_by_group=True,
)
TASK = SpecTask(SPEC)
