"""WinoGrande (winogrande_xl), as lm-evaluation-harness's ``winogrande``: each option fills the
blank of the sentence, and the rest of the sentence is scored after each.

Sakaguchi et al. 2020, "WinoGrande: An Adversarial Winograd Schema Challenge at Scale",
https://arxiv.org/abs/1907.10641

The variable-context form of lm-eval's ``preprocess_winogrande.py``: the contexts are the
sentence up to the ``_`` with each option in its place, the continuation shared by both is what
follows the ``_`` (stripped, after the target delimiter), the gold is the option's index.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .families import MultipleChoice
from .prompt import Prompt
from .shots import RANDOM_EXCLUDING_ITEM
from .spec import Data, Spec, SpecTask


def gold_index(row: Mapping[str, Any]) -> int:
    """``doc_to_text``: the index of the right option ("1" is 0, "2" is 1)."""
    return {"1": 0, "2": 1}[row["answer"]]


def after_blank(row: Mapping[str, Any]) -> str:
    """``doc_to_target``: the sentence after the ``_``, stripped."""
    sentence: str = row["sentence"]
    return sentence[sentence.index("_") + 1 :].strip()


def filled(row: Mapping[str, Any]) -> list[str]:
    """``doc_to_choice``: the sentence up to the ``_``, with each option in its place."""
    sentence: str = row["sentence"]
    head = sentence[: sentence.index("_")]
    return [head + row["option1"], head + row["option2"]]


SPEC = Spec(
    name="winogrande",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/winogrande/default.yaml and preprocess_winogrande.py",
    data=Data(
        source="winogrande", split="validation", shots="train", sampler=RANDOM_EXCLUDING_ITEM
    ),
    prompt=Prompt(text=gold_index, target=after_blank, choices=filled),
    family=MultipleChoice(metrics=("acc",), variable_context=True),
    headline="acc",
)
TASK = SpecTask(SPEC)
