"""GPQA Diamond: 198 graduate-level science questions, four options, 0-shot chain of thought.

Rein et al. 2023, "GPQA: A Graduate-Level Google-Proof Q&A Benchmark",
https://arxiv.org/abs/2311.12022

The correct answer is stored first, so the four options are shuffled: the order is a pure
function of the run's ``seed`` and the row's ``Record ID`` (``scoring/multiple_choice.py``,
sha256 ranks), recorded per sample (``shown_permutation``, ``shown_seed``). The prompt is
simple-evals' multiple-choice template (the question, the options ``A) …`` to ``D) …``, and the
request to end with ``Answer: $LETTER`` after thinking step by step) as the user message; greedy,
max_tokens 2048. ``accuracy``: the first ``Answer: X`` (simple-evals' rule) is the gold letter.
The authors ask that GPQA's examples never be published: no row of it is in this repository.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..scoring.multiple_choice import SAME_LETTER, extract_gpqa_letter, shuffle_choices
from .base import Sample, TaskConfig
from .families import Checked, Verdict
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

TEMPLATE = (
    "Answer the following multiple choice question. The last line of your response should be of "
    "the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think "
    "step by step before answering.\n\n{{question}}\n\nA) {{A}}\nB) {{B}}\nC) {{C}}\nD) {{D}}"
)
OPTIONS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def shuffled(row: Mapping[str, Any], config: TaskConfig) -> dict[str, Any]:
    """The row's question and its options in the order shown, with the gold letter."""
    order = shuffle_choices([row[c].strip() for c in OPTIONS], config.seed, row["Record ID"])
    return {
        "question": row["Question"].strip(),
        **dict(zip("ABCD", order.choices, strict=True)),
        "gold": order.letter_of(0),
        "shown_permutation": list(order.permutation),
        "shown_seed": order.seed,
    }


def check(text: str, sample: Sample) -> Verdict:
    found = extract_gpqa_letter(text)
    return Verdict(
        metrics={"accuracy": float(found.letter == sample.gold)},
        extracted=found.letter,
        rule=found.rule,
    )


SPEC = Spec(
    name="gpqa_diamond",
    about=__doc__.split("\n\n")[1],
    reference="openai/simple-evals gpqa_eval.py (template, Answer: X rule)",
    data=Data(source="gpqa_diamond", split="train", id_field="Record ID"),
    prompt=Prompt(text=TEMPLATE, target="gold"),
    family=Checked(
        check=check,
        gold=lambda fields: fields["gold"],
        headline="accuracy",
        equivalence=SAME_LETTER,
        input="chat",
        max_tokens=2048,
        fields=shuffled,
        protocol_text=(
            "gpqa_diamond (simple-evals gpqa_eval.py): 0-shot CoT, options shuffled by sha256 of "
            "(seed, Record ID, index), cells stripped; greedy, max_tokens 2048; accuracy = the "
            "first 'Answer: X' (case-insensitive, X in A-D) is the gold letter"
        ),
    ),
    headline="accuracy",
    differs="the shuffle is sha256-ranked from the seed, not simple-evals' random.Random draw",
)
TASK = SpecTask(SPEC)
