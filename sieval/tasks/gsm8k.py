"""GSM8K, k-shot, greedy generation for base models, scored by exact match of the final number.

Cobbe et al. 2021, "Training Verifiers to Solve Math Word Problems",
https://arxiv.org/abs/2110.14168

k seeded train shots (default 8) as ``Question: {q}\\nAnswer: {full solution}`` joined by blank
lines, then the target question; the prompt, stop strings and greedy decoding are
lm-evaluation-harness's ``gsm8k`` task (which defaults to 5 shots). Both metrics are its
``exact_match`` (see ``scoring/numbers.py``): headline ``exact_match`` over its strict-match
filter (the first ``#### N``, exactly one space after ``####``), ``flexible_exact_match`` over its
flexible-extract filter (the last number-like run); prediction and gold solution lose commas,
``$``, everything through the last ``#### `` and one trailing period.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.gsm8k import gsm8k_file, load_gsm8k
from ..ir.request import CompletionInput, Request, Sampling
from ..ir.response import Response
from ..scoring import extract_flexible, extract_strict, gold_number
from ._shared import (
    check_options,
    draw_shots,
    first_choice,
    int_option,
    join_shots,
    means,
    num_shots,
)
from .base import COMPLETION_MODEL, ModelFacts, Requirement, Sample, SampleResult, TaskConfig

QUERY = "Question: {question}\nAnswer:"
SHOT = "Question: {question}\nAnswer: {answer}"
STOP = ("Question:", "</s>", "<|im_end|>")
DEFAULT_SHOTS = 8
DEFAULT_MAX_TOKENS = 256
SHOT_SPLIT, EVAL_SPLIT = "train", "test"


def _max_tokens(config: TaskConfig) -> int:
    return int_option(Gsm8kBaseGen.name, config, "max_tokens", DEFAULT_MAX_TOKENS, 1)


class Gsm8kBaseGen:
    name = "gsm8k_kshot_base_gen"
    headline = "exact_match"
    defaults = MappingProxyType({"num_fewshot": DEFAULT_SHOTS, "max_tokens": DEFAULT_MAX_TOKENS})
    protocol = (
        "greedy generation (temperature 0, max_tokens 256, stop Question:/</s>/<|im_end|>) after "
        "k seeded train shots; exact_match = lm-eval strict-match, the first '#### (-?[0-9.,]+)'; "
        "flexible_exact_match = lm-eval flexible-extract, the last '(-?[$0-9.,]{2,})|(-?[0-9]+)'; "
        "answer and gold solution compared after removing ',', '$', everything through the last "
        "'#### ' and one trailing '.', lowercased (lm-eval gsm8k exact_match)"
    )
    requirements = (
        Requirement("text_prompt", "the k-shot prompt is raw text"),
        Requirement("sampling", "greedy decoding and max_tokens are set explicitly"),
        Requirement("stop_strings", "generation stops at the next 'Question:'"),
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return [gsm8k_file(data_dir, SHOT_SPLIT), gsm8k_file(data_dir, EVAL_SPLIT)]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        check_options(self.name, config, ("max_tokens",))
        _max_tokens(config)
        k = num_shots(self.name, config, DEFAULT_SHOTS)
        pool = load_gsm8k(data_dir, SHOT_SPLIT) if k else []
        shots = draw_shots(self.name, pool, k, config.seed)
        fewshot = join_shots(SHOT.format(question=s.question, answer=s.answer) for s in shots)
        shot_ids = [f"{SHOT_SPLIT}/{s.index}" for s in shots]
        return [
            Sample(
                id=f"{EVAL_SPLIT}/{item.index}",
                data={
                    "fewshot": fewshot,
                    "query": QUERY.format(question=item.question),
                    "shot_ids": shot_ids,
                },
                gold=gold_number(item.answer),
            )
            for item in load_gsm8k(data_dir, EVAL_SPLIT)
        ]

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        return {
            "gen": Request(
                input=CompletionInput(text=sample.data["fewshot"] + sample.data["query"]),
                sampling=Sampling(temperature=0.0, max_tokens=_max_tokens(config), stop=STOP),
            )
        }

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        text = first_choice(responses["gen"]).text
        strict, flexible = extract_strict(text), extract_flexible(text)
        return SampleResult(
            prediction=strict,
            gold=sample.gold,
            metrics={
                "exact_match": float(strict == sample.gold),
                "flexible_exact_match": float(flexible == sample.gold),
            },
            channels={"text": text, "strict": strict, "flexible": flexible},
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        return means(results)


TASK = Gsm8kBaseGen()
