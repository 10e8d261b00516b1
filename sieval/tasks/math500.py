"""MATH-500: 500 competition problems (OpenAI's PRM800K subset of MATH), 0-shot chain of thought.

Hendrycks et al. 2021, "Measuring Mathematical Problem Solving With the MATH Dataset",
https://arxiv.org/abs/2103.03874; the subset: Lightman et al. 2023, "Let's Verify Step by Step",
https://arxiv.org/abs/2305.20050

The problem and one instruction line (reason step by step, the final answer in ``\\boxed{}``) are
the user message; the answer is generated greedily (max_tokens 2048). ``accuracy``: the last
``\\boxed{}`` of the answer equals the gold ``answer`` by math-verify (``scoring/math_answer.py``).
"""

from __future__ import annotations

from ._math import INSTRUCTION, family
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="math500",
    about=__doc__.split("\n\n")[1],
    reference="HuggingFaceH4/MATH-500; the answer compared as lighteval's math_500 (math-verify)",
    data=Data(source="math500", split="test", id_field="unique_id"),
    prompt=Prompt(text="{{problem}}\n\n" + INSTRUCTION, target="answer"),
    family=family("answer", 2048),
    headline="accuracy",
)
TASK = SpecTask(SPEC)
