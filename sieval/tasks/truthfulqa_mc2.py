"""TruthfulQA MC2: the probability mass the model puts on the true answers, as
lm-evaluation-harness's ``truthfulqa_mc2``.

Lin, Hilton and Evans 2022, "TruthfulQA: Measuring How Models Mimic Human Falsehoods",
https://arxiv.org/abs/2109.07958

Each choice of ``mc2_targets`` is scored after the MC1 prompt; ``acc`` is ``sum(p_true) /
sum(p_all)`` with ``p = exp(log-likelihood)``, the true ones those labelled 1 (lm-eval 0.4.13's
``process_results_mc2``, version 3.0; older versions took the leading block of true labels, which
differs on two questions whose labels are not sorted).
"""

from __future__ import annotations

from dataclasses import replace

from .families import MultipleChoice
from .prompt import Prompt
from .spec import SpecTask
from .truthfulqa_mc1 import SPEC as MC1
from .truthfulqa_mc1 import TEXT

SPEC = replace(
    MC1,
    name="truthfulqa_mc2",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/truthfulqa/truthfulqa_mc2.yaml and utils.py",
    prompt=Prompt(text=TEXT, target=0, choices="{{mc2_targets.choices}}"),
    family=MultipleChoice(metrics=("acc",), mass="{{mc2_targets.labels}}"),
)
TASK = SpecTask(SPEC)
