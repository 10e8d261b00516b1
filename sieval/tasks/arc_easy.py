"""ARC-Easy, scored by the log-likelihood of each choice, as lm-evaluation-harness's ``arc_easy``.

Clark et al. 2018, "Think you have Solved Question Answering? Try ARC, the AI2 Reasoning
Challenge", https://arxiv.org/abs/1803.05457
"""

from __future__ import annotations

from .families import MultipleChoice
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

PROMPT = Prompt(
    text="Question: {{question}}\nAnswer:",
    target="{{choices.label.index(answerKey)}}",
    choices="{{choices.text}}",
)

SPEC = Spec(
    name="arc_easy",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/arc/arc_easy.yaml",
    data=Data(source="arc_easy", split="test", shots="train"),
    prompt=PROMPT,
    family=MultipleChoice(metrics=("acc", "acc_norm")),
    headline="acc_norm",
    extra=lambda row: {"labels": list(row["choices"]["label"])},
)
TASK = SpecTask(SPEC)
