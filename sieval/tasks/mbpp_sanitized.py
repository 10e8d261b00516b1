"""MBPP (sanitized): the 257 hand-verified test problems of MBPP, 3-shot, the code run against
each problem's asserts (with the imports they need).

Austin et al. 2021, "Program Synthesis with Large Language Models",
https://arxiv.org/abs/2108.07732

As ``mbpp`` (the same prompt, shots by task id 2, 3 and 4 from the sanitized ``prompt`` split,
stop ``[DONE]``, greedy, max_tokens 512), on the sanitized release: the description is its
``prompt`` field, and its ``test_imports`` run before the asserts.
"""

from __future__ import annotations

from ._mbpp import SHOTS, family, prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="mbpp_sanitized",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/mbpp (prompt, until) on the sanitized release",
    data=Data(
        source="mbpp",
        split="test",
        shots="prompt",
        sampler=SHOTS,
        subsets=("sanitized",),
        id_field="task_id",
    ),
    prompt=prompt("prompt"),
    family=family(),
    headline="pass@1",
    num_fewshot=3,
)
TASK = SpecTask(SPEC)
