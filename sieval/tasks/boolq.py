"""BoolQ (SuperGLUE), "no" or "yes" scored after the passage and question, as
lm-evaluation-harness's ``boolq``.

Clark et al. 2019, "BoolQ: Exploring the Surprising Difficulty of Natural Yes/No Questions",
https://arxiv.org/abs/1905.10044

Only validation is stored, so the task runs 0-shot (lm-eval draws its shots from train).
"""

from __future__ import annotations

from .families import MultipleChoice
from .prompt import Prompt
from .shots import RANDOM_EXCLUDING_ITEM
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="boolq",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/super_glue/boolq/default.yaml",
    data=Data(source="boolq", split="validation", shots="train", sampler=RANDOM_EXCLUDING_ITEM),
    prompt=Prompt(
        text="{{passage}}\nQuestion: {{question}}?\nAnswer:", target="label", choices=["no", "yes"]
    ),
    family=MultipleChoice(metrics=("acc",)),
    headline="acc",
)
TASK = SpecTask(SPEC)
