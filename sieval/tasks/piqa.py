"""PIQA, scored by the log-likelihood of each solution, as lm-evaluation-harness's ``piqa``.

Bisk et al. 2020, "PIQA: Reasoning about Physical Commonsense in Natural Language",
https://arxiv.org/abs/1911.11641
"""

from __future__ import annotations

from .families import MultipleChoice
from .prompt import Prompt
from .shots import RANDOM_EXCLUDING_ITEM
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="piqa",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/piqa/piqa.yaml",
    data=Data(source="piqa", split="validation", shots="train", sampler=RANDOM_EXCLUDING_ITEM),
    prompt=Prompt(text="Question: {{goal}}\nAnswer:", target="label", choices="{{[sol1, sol2]}}"),
    family=MultipleChoice(metrics=("acc", "acc_norm")),
    headline="acc_norm",
)
TASK = SpecTask(SPEC)
