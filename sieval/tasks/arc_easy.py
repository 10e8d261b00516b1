"""ARC-Easy, k-shot, scored by the log-likelihood of each choice's text.

Clark et al. 2018, "Think you have Solved Question Answering? Try ARC, the AI2 Reasoning
Challenge", https://arxiv.org/abs/1803.05457

The text is lm-evaluation-harness's ``arc_easy``: ``Question: {question}\\nAnswer:``, each choice
scored as ``" {choice}"``, shots joined by blank lines. Headline ``acc_norm`` as lm-eval defines
it: the sum divided by ``len(choice)``, the characters of the choice text without the leading
space it was scored with. 25 shots is the Open LLM Leaderboard's setting for ARC (its
ARC-Challenge task); lm-eval's ``arc_easy`` itself defaults to 0 shots and draws its own shots.
``acc_uncond`` (Brown et al. 2020: the choice's log-likelihood after the context minus after a
bare ``Answer:``) is the prior SiEval headline and is reported alongside, as is plain ``acc``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.arc import arc_easy_file, load_arc_easy
from ..ir.request import Request
from ..ir.response import Response
from ..scoring import argmax, continuation_score, pick_acc, pick_acc_norm
from ._shared import (
    check_options,
    draw_shots,
    join_shots,
    means,
    num_shots,
    score_channels,
    scoring_request,
)
from .base import COMPLETION_MODEL, ModelFacts, Requirement, Sample, SampleResult, TaskConfig

QUERY = "Question: {question}\nAnswer:"
SHOT = "Question: {question}\nAnswer: {answer}"
CONTINUATION = " {text}"
UNCONDITIONAL_CONTEXT = "Answer:"
DEFAULT_SHOTS = 25
SHOT_SPLIT, EVAL_SPLIT = "train", "test"


class ArcEasyPPL:
    name = "arc_easy_kshot_ppl"
    headline = "acc_norm"
    defaults = MappingProxyType({"num_fewshot": DEFAULT_SHOTS})
    protocol = (
        "loglikelihood of ' {choice}' after k seeded train shots + 'Question: {q}\\nAnswer:' via "
        "input scoring; acc = argmax sum, acc_norm = argmax sum/len(choice), characters of the "
        "choice without its leading space (lm-eval), acc_uncond = argmax sum minus the sum "
        "after a bare 'Answer:' (Brown et al.); ties -> lowest index"
    )
    requirements = (
        Requirement("text_prompt", "each choice is scored as a raw-text prompt"),
        Requirement("input_scoring", "the choice's log-likelihood comes from input logprobs"),
        Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return [arc_easy_file(data_dir, SHOT_SPLIT), arc_easy_file(data_dir, EVAL_SPLIT)]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        check_options(self.name, config)
        k = num_shots(self.name, config, DEFAULT_SHOTS)
        pool = load_arc_easy(data_dir, SHOT_SPLIT) if k else []
        shots = draw_shots(self.name, pool, k, config.seed)
        fewshot = join_shots(
            SHOT.format(question=s.question, answer=s.choices[s.answer]) for s in shots
        )
        shot_ids = [s.id for s in shots]
        return [
            Sample(
                id=item.id,
                data={
                    "fewshot": fewshot,
                    "query": QUERY.format(question=item.question),
                    "choices": list(item.choices),
                    "labels": list(item.labels),
                    "shot_ids": shot_ids,
                },
                gold=item.answer,
            )
            for item in load_arc_easy(data_dir, EVAL_SPLIT)
        ]

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        context = sample.data["fewshot"] + sample.data["query"]
        texts = [CONTINUATION.format(text=t) for t in sample.data["choices"]]
        out = {f"choice:{i}": scoring_request(context + t) for i, t in enumerate(texts)}
        for i, t in enumerate(texts):
            out[f"uncond:{i}"] = scoring_request(UNCONDITIONAL_CONTEXT + t)
        return out

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        context = len(sample.data["fewshot"]) + len(sample.data["query"])
        texts = [CONTINUATION.format(text=t) for t in sample.data["choices"]]
        cond = [
            continuation_score(responses[f"choice:{i}"], context, t) for i, t in enumerate(texts)
        ]
        base = len(UNCONDITIONAL_CONTEXT)
        uncond = [
            continuation_score(responses[f"uncond:{i}"], base, t) for i, t in enumerate(texts)
        ]
        picks = {
            "acc": pick_acc(cond),
            "acc_norm": pick_acc_norm(cond, sample.data["choices"]),
            "acc_uncond": argmax(
                [c.logprob_sum - u.logprob_sum for c, u in zip(cond, uncond, strict=True)]
            ),
        }
        return SampleResult(
            prediction=picks[self.headline],
            gold=sample.gold,
            metrics={name: float(pick == sample.gold) for name, pick in picks.items()},
            channels={
                "choices": score_channels(cond, sample.data["choices"]),
                "unconditional": score_channels(uncond, sample.data["choices"]),
            },
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        return means(results)


TASK = ArcEasyPPL()
