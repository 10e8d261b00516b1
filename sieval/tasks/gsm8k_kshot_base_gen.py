"""GSM8K, k-shot, greedy generation for base models, scored by exact match of the final number.

Cobbe et al. 2021, "Training Verifiers to Solve Math Word Problems",
https://arxiv.org/abs/2110.14168

k seeded train shots (default 8, drawn once for all samples) as ``Question: {q}\\nAnswer: {full
solution}`` joined by blank lines, then the target question; the prompt, stop strings and greedy
decoding are lm-evaluation-harness's ``gsm8k`` task (which defaults to 5 shots). Both metrics are
its ``exact_match`` (see ``scoring/numbers.py``): headline ``exact_match`` over its strict-match
filter (the first ``#### N``, exactly one space after ``####``), ``flexible_exact_match`` over its
flexible-extract filter (the last number-like run); prediction and gold solution lose commas,
``$``, everything through the last ``#### `` and one trailing period.
"""

from __future__ import annotations

from ..scoring import extract_flexible, extract_strict, gold_number
from .families import Answer, Generation
from .prompt import Prompt
from .shots import SHARED
from .spec import Data, Spec, SpecTask

QUERY = "Question: {{question}}\nAnswer:"
STOP = ("Question:", "</s>", "<|im_end|>")

SPEC = Spec(
    name="gsm8k_kshot_base_gen",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/gsm8k/gsm8k.yaml (prompt, stop, filters); shots sieval's",
    data=Data(source="gsm8k", split="test", shots="train", sampler=SHARED),
    prompt=Prompt(text=QUERY, target="answer"),
    family=Generation(
        answers=(
            Answer(metric="exact_match", extract=extract_strict, channel="strict"),
            Answer(metric="flexible_exact_match", extract=extract_flexible, channel="flexible"),
        ),
        gold=lambda row: gold_number(row["answer"]),
        stop=STOP,
        protocol_text=(
            "greedy generation (temperature 0, max_tokens 256, stop Question:/</s>/<|im_end|>) "
            "after k seeded train shots; exact_match = lm-eval strict-match, the first "
            "'#### (-?[0-9.,]+)'; flexible_exact_match = lm-eval flexible-extract, the last "
            "'(-?[$0-9.,]{2,})|(-?[0-9]+)'; answer and gold solution compared after removing ',', "
            "'$', everything through the last '#### ' and one trailing '.', lowercased (lm-eval "
            "gsm8k exact_match)"
        ),
    ),
    headline="exact_match",
    num_fewshot=8,
)
TASK = SpecTask(SPEC)
