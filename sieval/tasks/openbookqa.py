"""OpenBookQA (main), scored by the log-likelihood of each choice, as lm-evaluation-harness's
``openbookqa`` (the question stem alone as the context).

Mihaylov et al. 2018, "Can a Suit of Armor Conduct Electricity? A New Dataset for Open Book
Question Answering", https://arxiv.org/abs/1809.02789
"""

from __future__ import annotations

from .families import MultipleChoice
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="openbookqa",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/openbookqa/openbookqa.yaml",
    data=Data(source="openbookqa", split="test", shots="train"),
    prompt=Prompt(
        text="question_stem",
        target="{{choices.label.index(answerKey.lstrip())}}",
        choices="{{choices.text}}",
    ),
    family=MultipleChoice(metrics=("acc", "acc_norm")),
    headline="acc_norm",
    extra=lambda row: {"labels": list(row["choices"]["label"])},
)
TASK = SpecTask(SPEC)
