"""MMLU, 0-shot, the model answers with a letter (generation), for wires without logprobs.

Hendrycks et al. 2021, "Measuring Massive Multitask Language Understanding",
https://arxiv.org/abs/2009.03300

The user message is the subject header, the question with its four options in hendrycks' format,
and one instruction line; the reply is generated greedily (max 8 tokens, through the model's chat
template). The letter is extracted strictly: the reply, stripped, must begin with the letter
alone (optionally in parentheses or bold, optionally after ``Answer:``), followed by nothing, a
space or punctuation; anything else is ``invalid`` and scored wrong (``invalid_rate`` counts
them). ``acc`` is the micro-average, with per-subject and per-category breakdowns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import zip_longest
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.mmlu import SUBJECTS, load_mmlu, mmlu_file
from ..errors import ConfigError
from ..ir.request import Request, Sampling
from ..ir.response import Response
from ._shared import check_options, first_choice, grouped_means, means, user_message
from .base import COMPLETION_MODEL, ModelFacts, Requirement, Sample, SampleResult, TaskConfig
from .mmlu import EVAL_SPLIT, HEADER, LETTERS, QUESTION

INSTRUCTION = "Answer with the letter of the correct option (A, B, C or D) only."
STRICT = re.compile(r"^(?:answer\s*:\s*)?(?:\*\*)?\(?([ABCD])\)?(?:\*\*)?(?=$|[\s.,:;!)])", re.I)
MAX_TOKENS = 8


def extract_letter(text: str) -> str | None:
    """The answer letter when the reply, stripped, begins with it alone; else None."""
    match = STRICT.match(text.strip())
    return match.group(1).upper() if match else None


class MmluGen:
    name = "mmlu_0shot_gen"
    headline = "acc"
    cluster_by = "group"
    """A subject's questions come from the same sources: their errors are clustered by subject."""
    defaults = MappingProxyType({"num_fewshot": 0})
    protocol = (
        "chat, 0-shot: subject header + question + options A-D in hendrycks' format + an "
        "instruction to answer with the letter only, as the user message; greedy generation "
        "(temperature 0, max_tokens 8); the letter extracted strictly from the start of the "
        "reply, anything else invalid and wrong; acc = micro-average"
    )
    requirements = (
        Requirement("chat", "the question is a user message"),
        Requirement("sampling", "greedy decoding and max_tokens are set explicitly"),
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return [mmlu_file(data_dir, s, EVAL_SPLIT) for s in SUBJECTS]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        check_options(self.name, config)
        if config.num_fewshot not in (None, 0):
            raise ConfigError(
                f"task {self.name} is 0-shot; drop num_fewshot", path=f"tasks.{self.name}"
            )
        per_subject = []
        for subject in sorted(SUBJECTS):
            header = HEADER.format(subject=subject.replace("_", " "))
            rows = []
            for item in load_mmlu(data_dir, subject, EVAL_SPLIT):
                a, b, c, d = item.options
                question = QUESTION.format(question=item.question, a=a, b=b, c=c, d=d)
                text = header + question.removesuffix("Answer:").rstrip() + "\n\n" + INSTRUCTION
                rows.append(
                    Sample(
                        id=f"{subject}/{item.index}",
                        data={"prompt": text},
                        gold=item.answer,
                        group=subject,
                    )
                )
            per_subject.append(rows)
        return [s for row in zip_longest(*per_subject) for s in row if s is not None]

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        return {
            "answer": Request(
                input=user_message(sample.data["prompt"]),
                sampling=Sampling(temperature=0.0, max_tokens=MAX_TOKENS),
            )
        }

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        text = first_choice(responses["answer"]).text
        letter = extract_letter(text)
        return SampleResult(
            prediction=letter if letter in LETTERS else "invalid",
            gold=sample.gold,
            metrics={"acc": float(letter == sample.gold), "invalid": float(letter is None)},
            channels={"text": text},
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        out = means(results)
        out["invalid_rate"] = out.pop("invalid", 0.0)
        out["by_subject"] = grouped_means(results, lambda s: s.group)
        out["by_category"] = grouped_means(results, lambda s: SUBJECTS[s.group])
        return out


TASK = MmluGen()
