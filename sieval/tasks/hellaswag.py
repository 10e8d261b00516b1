"""HellaSwag, scored by the log-likelihood of each ending, as lm-evaluation-harness's ``hellaswag``.

Zellers et al. 2019, "HellaSwag: Can a Machine Really Finish Your Sentence?",
https://arxiv.org/abs/1905.07830

lm-eval's ``process_docs``: the query is ``preprocess(activity_label + ": " + ctx_a + " " +
ctx_b.capitalize())`` and each ending ``preprocess(ending)``. The stored validation split is the
derived text, whose rows hold the whole context in ``ctx_a`` and an empty ``ctx_b``; lm-eval reads
the same rows the same way, so the strings agree with it on these rows, which differ from the hub's
where the derived file's own clean-up differs (its SOURCE.md). Only validation is stored, so the
task runs 0-shot (lm-eval draws its shots from train).
"""

from __future__ import annotations

import re
from typing import Any

from .families import MultipleChoice
from .prompt import Prompt
from .shots import RANDOM_EXCLUDING_ITEM
from .spec import Data, Spec, SpecTask


def preprocess(text: str) -> str:
    """lm-eval's clean-up: strip, `` [title]`` to ``. ``, drop ``[...]``, squash double spaces."""
    text = text.strip().replace(" [title]", ". ")
    text = re.sub("\\[.*?\\]", "", text)
    return text.replace("  ", " ")


def process(row: dict[str, Any], where: str) -> dict[str, Any]:
    """lm-eval's ``process_docs`` (its ``dataset.map`` keeps the row's own fields)."""
    ctx = row["ctx_a"] + " " + row["ctx_b"].capitalize()
    return {
        **row,
        "query": preprocess(row["activity_label"] + ": " + ctx),
        "choices": [preprocess(ending) for ending in row["endings"]],
        "gold": int(row["label"]),
    }


SPEC = Spec(
    name="hellaswag",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/hellaswag/hellaswag.yaml and utils.py",
    data=Data(
        source="hellaswag",
        split="validation",
        shots="train",
        sampler=RANDOM_EXCLUDING_ITEM,
        process=process,
    ),
    prompt=Prompt(text="{{query}}", target="{{label}}", choices="choices"),
    family=MultipleChoice(metrics=("acc", "acc_norm")),
    headline="acc_norm",
    differs=(
        "the stored validation split is the derived text (ctx_b unknown, cleaned by its maker): "
        "lm-eval reads the same rows alike, the hub's rows differ"
    ),
)
TASK = SpecTask(SPEC)
