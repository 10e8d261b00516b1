"""AIME 2025: the 30 problems of the 2025 American Invitational Mathematics Examination (I and
II), 0-shot chain of thought; each answer an integer 0-999.

Mathematical Association of America, AIME 2025, https://maa.org/math-competitions/aime

The problem and one instruction line (reason step by step, the final answer in ``\\boxed{}``) are
the user message; greedy, max_tokens 4096 (a reasoning model needs far more: set
``max_tokens``). ``accuracy``: the last ``\\boxed{}`` equals the answer by math-verify.
"""

from __future__ import annotations

from ._math import INSTRUCTION, family
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="aime2025",
    about=__doc__.split("\n\n")[1],
    reference="inclusionAI/AReaL evaluation/data/aime25; the answer compared as lighteval's aime25",
    data=Data(source="aime2025", split="test", id_field="id"),
    prompt=Prompt(text="{{problem}}\n\n" + INSTRUCTION, target="answer"),
    family=family("answer", 4096),
    headline="accuracy",
)
TASK = SpecTask(SPEC)
