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

The same task runs on a chat model (its dialect takes only chat input): the prompt is then one
user message, through the model's chat template, and the letter is read from the first sampled
token of the reply. On a dialect that scores chosen token ids (``candidate_scoring``, SGLang's
``token_ids_logprob``), the letters' ids are resolved through the server's tokenizer before the
run and scored directly, whatever their rank: no top-k is needed. The record names the protocol
that ran (``protocol_for``).

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
from ..ir.request import ChatInput, CompletionInput, Request, Sampling, Scoring
from ..ir.response import Response
from ..scoring import argmax, candidate_letter_logprobs, letter_logprobs
from ._shared import (
    check_options,
    grouped_means,
    int_option,
    join_shots,
    means,
    num_shots,
    user_message,
)
from .base import COMPLETION_MODEL, ModelFacts, Requirement, Sample, SampleResult, TaskConfig

HEADER = "The following are multiple choice questions (with answers) about {subject}.\n\n"
QUESTION = "{question}\nA. {a}\nB. {b}\nC. {c}\nD. {d}\nAnswer:"
SHOT = QUESTION + " {answer}"
LETTERS = ("A", "B", "C", "D")
SPELLINGS = tuple(f"{space}{letter}" for letter in LETTERS for space in ("", " "))
"""The letters as the next token may spell them; each one that is a single token of the model's
tokenizer is scored by id on a dialect with ``candidate_scoring``."""
DEFAULT_SHOTS = 5
DEFAULT_TOP_K = 100
SHOT_SPLIT, EVAL_SPLIT = "dev", "test"


def _question(item: MmluItem, template: str = QUESTION) -> str:
    a, b, c, d = item.options
    return template.format(question=item.question, a=a, b=b, c=c, d=d, answer=item.answer)


def _top_k(config: TaskConfig) -> int:
    return int_option(MmluCLP.name, config, "top_k", DEFAULT_TOP_K, len(LETTERS))


def _by_id(model: ModelFacts) -> bool:
    """Score the letters by token id: the dialect can, and every letter has a one-token id."""
    if "candidate_scoring" not in model.capabilities:
        return False
    return all(any(f"{sp}{x}" in model.token_ids for sp in ("", " ")) for x in LETTERS)


def _input(text: str, model: ModelFacts) -> CompletionInput | ChatInput:
    if model.input_kind == "chat":
        return user_message(text)
    return CompletionInput(text=text)


class MmluCLP:
    name = "mmlu_kshot_clp"
    headline = "acc"
    cluster_by = "group"
    """A subject's questions come from the same sources: their errors are clustered by subject."""
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

    def requirements_for(self, model: ModelFacts) -> tuple[Requirement, ...]:
        prompt = (
            Requirement("chat", "the k-shot prompt is one user message")
            if model.input_kind == "chat"
            else self.requirements[0]
        )
        letters = (
            Requirement("candidate_scoring", "the four letters are scored by token id")
            if "candidate_scoring" in model.capabilities
            else self.requirements[3]
        )
        return (prompt, self.requirements[1], self.requirements[2], letters)

    def protocol_for(self, model: ModelFacts) -> str:
        how = (
            "the letters' token ids (' A' and 'A' spellings, max) scored directly at the first "
            "sampled position (no top-k)"
            if _by_id(model)
            else self.protocol
        )
        if model.input_kind == "chat":
            return f"chat: the k-shot prompt as one user message; {how}"
        return how

    def token_texts(self, config: TaskConfig) -> tuple[str, ...]:
        return SPELLINGS

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

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        if _by_id(model):
            ids = tuple(model.token_ids[t] for t in SPELLINGS if t in model.token_ids)
            scoring = Scoring(sampled_logprobs=True, candidate_token_ids=ids)
        else:
            scoring = Scoring(sampled_logprobs=True, sampled_top_k=_top_k(config))
        return {
            "letter": Request(
                input=_input(sample.data["fewshot"] + sample.data["query"], model),
                sampling=Sampling(temperature=0.0, max_tokens=1),
                scoring=scoring,
            )
        }

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        if _by_id(model):
            logprobs = candidate_letter_logprobs(responses["letter"], LETTERS, model.token_ids)
        else:
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
