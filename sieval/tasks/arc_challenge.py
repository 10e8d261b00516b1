"""ARC-Challenge, scored by the log-likelihood of each choice, as lm-evaluation-harness's
``arc_challenge`` (its ``arc_easy`` on the Challenge set).

Clark et al. 2018, "Think you have Solved Question Answering? Try ARC, the AI2 Reasoning
Challenge", https://arxiv.org/abs/1803.05457
"""

from __future__ import annotations

from dataclasses import replace

from .arc_easy import SPEC as EASY
from .spec import Data, SpecTask

SPEC = replace(
    EASY,
    name="arc_challenge",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/arc/arc_challenge.yaml (includes arc_easy.yaml)",
    data=Data(source="arc_challenge", split="test", shots="train"),
)
TASK = SpecTask(SPEC)
