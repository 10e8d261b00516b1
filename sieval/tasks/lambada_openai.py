"""LAMBADA (OpenAI's preprocessed test set): the last word's log-likelihood after the passage and
whether greedy decoding would produce it, as lm-evaluation-harness's ``lambada_openai``.

Paperno et al. 2016, "The LAMBADA dataset: Word prediction requiring a broad discourse context",
https://arxiv.org/abs/1606.06031
"""

from __future__ import annotations

from .families import TargetLogLikelihood
from .prompt import Prompt
from .spec import Data, Spec, SpecTask

SPEC = Spec(
    name="lambada_openai",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/lambada/lambada_openai.yaml",
    data=Data(source="lambada_openai", split="test", shots="test"),
    prompt=Prompt(text="{{text.split(' ')[:-1]|join(' ')}}", target="{{' '+text.split(' ')[-1]}}"),
    family=TargetLogLikelihood(),
    headline="acc",
)
TASK = SpecTask(SPEC)
