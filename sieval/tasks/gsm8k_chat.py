"""GSM8K, 0-shot, greedy generation for chat models, scored by exact match of the final number.

Cobbe et al. 2021, "Training Verifiers to Solve Math Word Problems",
https://arxiv.org/abs/2110.14168

The question is the user message, followed by one instruction line asking for the final answer as
``#### <number>``; the reply is generated greedily (through the model's chat template). Headline
``exact_match`` reads a marked answer: the last ``#### N`` or ``\\boxed{N}`` of the reply;
``flexible_exact_match`` reads the last number of the reply (lm-evaluation-harness's
flexible-extract). Both compare after lm-eval's gsm8k normalisation (``scoring/numbers.py``):
commas, ``$``, one trailing period removed, lowercased. A reply that ends for length, or is empty,
is scored (as the model's answer) and its finish reason is recorded beside it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.gsm8k import gsm8k_file, load_gsm8k
from ..errors import ConfigError
from ..ir.request import Request, Sampling
from ..ir.response import Response
from ..scoring import extract_flexible, gold_number, normalize_answer
from ._shared import check_options, first_choice, int_option, means, user_message
from .base import COMPLETION_MODEL, ModelFacts, Requirement, Sample, SampleResult, TaskConfig

INSTRUCTION = "Solve the problem step by step, then give the final answer as '#### <number>'."
MARKED = re.compile(r"####\s*(\-?[$0-9.,]+)|\\boxed\{\s*(\-?[$0-9.,]+)\s*\}")
DEFAULT_MAX_TOKENS = 256
EVAL_SPLIT = "test"


def _max_tokens(config: TaskConfig) -> int:
    return int_option(Gsm8kChat.name, config, "max_tokens", DEFAULT_MAX_TOKENS, 1)


def extract_marked(text: str) -> str | None:
    """The normalised last ``#### N`` or ``\\boxed{N}`` of ``text``, or None."""
    matches = MARKED.findall(text)
    if not matches:
        return None
    return normalize_answer(next(group for group in matches[-1] if group).strip())


class Gsm8kChat:
    name = "gsm8k_0shot_gen"
    headline = "exact_match"
    defaults = MappingProxyType({"num_fewshot": 0, "max_tokens": DEFAULT_MAX_TOKENS})
    protocol = (
        "chat, 0-shot: the question and one instruction line as the user message; greedy "
        "generation (temperature 0, max_tokens 256); exact_match = the last '#### N' or "
        "'\\boxed{N}'; flexible_exact_match = the last number (lm-eval flexible-extract); both "
        "after lm-eval's gsm8k normalisation (',', '$', a trailing '.' removed, lowercased)"
    )
    requirements = (
        Requirement("chat", "the question is a user message"),
        Requirement("sampling", "greedy decoding and max_tokens are set explicitly"),
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return [gsm8k_file(data_dir, EVAL_SPLIT)]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        check_options(self.name, config, ("max_tokens",))
        _max_tokens(config)
        if config.num_fewshot not in (None, 0):
            raise ConfigError(
                f"task {self.name} is 0-shot; drop num_fewshot", path=f"tasks.{self.name}"
            )
        return [
            Sample(
                id=f"{EVAL_SPLIT}/{item.index}",
                data={"question": item.question},
                gold=gold_number(item.answer),
            )
            for item in load_gsm8k(data_dir, EVAL_SPLIT)
        ]

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        text = f"{sample.data['question']}\n\n{INSTRUCTION}"
        return {
            "gen": Request(
                input=user_message(text),
                sampling=Sampling(temperature=0.0, max_tokens=_max_tokens(config)),
            )
        }

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        choice = first_choice(responses["gen"])
        marked, flexible = extract_marked(choice.text), extract_flexible(choice.text)
        return SampleResult(
            prediction=marked,
            gold=sample.gold,
            metrics={
                "exact_match": float(marked == sample.gold),
                "flexible_exact_match": float(flexible == sample.gold),
            },
            channels={
                "text": choice.text,
                "flexible": flexible,
                "finish_reason": choice.finish_reason
                if isinstance(choice.finish_reason, str)
                else None,
            },
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        return means(results)


TASK = Gsm8kChat()
