"""AIME 2024: the 30 problems of the 2024 American Invitational Mathematics Examination (I and
II), 0-shot chain of thought; each answer an integer 0-999.

Mathematical Association of America, AIME 2024, https://maa.org/math-competitions/aime

The problem and one instruction line (reason step by step, the final answer in ``\\boxed{}``) are
the user message; greedy, max_tokens 4096 (a reasoning model needs far more: set
``max_tokens``). ``accuracy``: the last ``\\boxed{}`` equals the answer by math-verify.
"""

from __future__ import annotations

from ._math import INSTRUCTION, family
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="aime2024",
    about=__doc__.split("\n\n")[1],
    reference="Maxwell-Jia/AIME_2024; the answer compared as lighteval's aime24 does (math-verify)",
    data=Data(source="aime2024", split="train", id_field="ID"),
    prompt=Prompt(text="{{Problem}}\n\n" + INSTRUCTION, target="Answer"),
    family=family("Answer", 4096),
    headline="accuracy",
)
TASK = SpecTask(SPEC)
