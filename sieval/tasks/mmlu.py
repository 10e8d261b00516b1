"""MMLU, k-shot, scored by the next-token log-probability of the answer letter (CLP).

Hendrycks et al. 2021, "Measuring Massive Multitask Language Understanding",
https://arxiv.org/abs/2009.03300

The prompt is the original ``evaluate.py`` (hendrycks/test) wording: a subject header, the first k
dev rows of the same subject (default 5, in file order), then the target ending in ``Answer:``.
Two details differ from one or the other reference: the header has one space before the subject,
as lm-evaluation-harness's ``mmlu`` description has (``evaluate.py`` prints two), and questions are
used as written, as ``evaluate.py`` does (lm-eval strips them). One request reads the top-k
(default 100, option ``top_k``) next-token list; the prediction is the argmax over the four letters
(ties -> the earliest letter); a letter outside the top-k fails the sample. This is neither
``evaluate.py``'s scoring (the `` A`` entry of the top-100 only, -100 when absent) nor lm-eval's
(the full log-likelihood of each continuation `` A`` ... `` D``).

Samples interleave subjects (row 0 of every subject in alphabetical order, then row 1, ...) so
that a small ``n`` spans many subjects. ``acc`` is the micro-average, with per-subject and
per-category (STEM / humanities / social sciences / other) breakdowns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import zip_longest
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.mmlu import SUBJECTS, MmluItem, load_mmlu, mmlu_file
from ..errors import ConfigError
from ..ir.request import CompletionInput, Request, Sampling, Scoring
from ..ir.response import Response
from ..scoring import argmax, letter_logprobs
from ._shared import check_options, grouped_means, int_option, join_shots, means, num_shots
from .base import Requirement, Sample, SampleResult, TaskConfig

HEADER = "The following are multiple choice questions (with answers) about {subject}.\n\n"
QUESTION = "{question}\nA. {a}\nB. {b}\nC. {c}\nD. {d}\nAnswer:"
SHOT = QUESTION + " {answer}"
LETTERS = ("A", "B", "C", "D")
DEFAULT_SHOTS = 5
DEFAULT_TOP_K = 100
SHOT_SPLIT, EVAL_SPLIT = "dev", "test"


def _question(item: MmluItem, template: str = QUESTION) -> str:
    a, b, c, d = item.options
    return template.format(question=item.question, a=a, b=b, c=c, d=d, answer=item.answer)


def _top_k(config: TaskConfig) -> int:
    return int_option(MmluCLP.name, config, "top_k", DEFAULT_TOP_K, len(LETTERS))


class MmluCLP:
    name = "mmlu_kshot_clp"
    headline = "acc"
    defaults = MappingProxyType({"num_fewshot": DEFAULT_SHOTS, "top_k": DEFAULT_TOP_K})
    protocol = (
        "next-token logprob of the letters A-D (stripped of leading space/'▁', max over "
        "spellings) read from the top-k list after k dev shots in hendrycks' format; "
        "prediction = argmax, ties -> earliest letter; any letter missing from top-k fails; "
        "acc = micro-average"
    )
    requirements = (
        Requirement("text_prompt", "the k-shot prompt is raw text"),
        Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
        Requirement("sampled_logprobs", "the letters' logprobs come from the sampled position"),
        Requirement("sampled_top_k", "all four letters must appear in the top-k", DEFAULT_TOP_K),
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return [
            mmlu_file(data_dir, s, split) for s in SUBJECTS for split in (SHOT_SPLIT, EVAL_SPLIT)
        ]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        check_options(self.name, config, ("top_k",))
        _top_k(config)
        k = num_shots(self.name, config, DEFAULT_SHOTS)
        per_subject = []
        for subject in sorted(SUBJECTS):
            dev = load_mmlu(data_dir, subject, SHOT_SPLIT) if k else []
            if k > len(dev):
                raise ConfigError(
                    f"task {self.name}: num_fewshot={k} but {subject} has {len(dev)} dev rows",
                    path=f"tasks.{self.name}.num_fewshot",
                    received=k,
                )
            header = HEADER.format(subject=subject.replace("_", " "))
            fewshot = header + join_shots(_question(s, SHOT) for s in dev[:k])
            per_subject.append(
                [
                    Sample(
                        id=f"{subject}/{item.index}",
                        data={"fewshot": fewshot, "query": _question(item)},
                        gold=item.answer,
                        group=subject,
                    )
                    for item in load_mmlu(data_dir, subject, EVAL_SPLIT)
                ]
            )
        return [s for row in zip_longest(*per_subject) for s in row if s is not None]

    def requests(self, sample: Sample, config: TaskConfig) -> Mapping[str, Request]:
        return {
            "letter": Request(
                input=CompletionInput(text=sample.data["fewshot"] + sample.data["query"]),
                sampling=Sampling(temperature=0.0, max_tokens=1),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=_top_k(config)),
            )
        }

    def score(
        self, sample: Sample, responses: Mapping[str, Response], config: TaskConfig
    ) -> SampleResult:
        logprobs = letter_logprobs(responses["letter"], LETTERS)
        prediction = LETTERS[argmax([logprobs[x] for x in LETTERS])]
        return SampleResult(
            prediction=prediction,
            gold=sample.gold,
            metrics={"acc": float(prediction == sample.gold)},
            channels={"letter_logprobs": logprobs},
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        out = means(results)
        out["by_subject"] = grouped_means(results, lambda s: s.group)
        out["by_category"] = grouped_means(results, lambda s: SUBJECTS[s.group])
        return out


TASK = MmluCLP()
