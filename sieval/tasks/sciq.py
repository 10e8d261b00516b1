"""SciQ, scored by the log-likelihood of each option after the supporting passage, as
lm-evaluation-harness's ``sciq`` (the right answer is always the fourth option).

Welbl, Liu and Gardner 2017, "Crowdsourcing Multiple Choice Science Questions",
https://arxiv.org/abs/1707.06209
"""

from __future__ import annotations

from .families import MultipleChoice
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="sciq",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/sciq/sciq.yaml",
    data=Data(source="sciq", split="test", shots="train"),
    prompt=Prompt(
        text="{{support.lstrip()}}\nQuestion: {{question}}\nAnswer:",
        target=3,
        choices="{{[distractor1, distractor2, distractor3, correct_answer]}}",
    ),
    family=MultipleChoice(metrics=("acc", "acc_norm")),
    headline="acc_norm",
)
TASK = SpecTask(SPEC)
