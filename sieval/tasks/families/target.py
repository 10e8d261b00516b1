"""Target log-likelihood (LAMBADA): the log-likelihood of one continuation, and whether greedy
decoding would produce it.

As lm-evaluation-harness 0.4.13's ``loglikelihood`` output type: the request is the context
(``doc_to_text``) followed by the target (``doc_to_target``, with its own leading space, no
delimiter added). The target's tokens are read from the server's prompt scoring with the top-1
alternative at each position (lm-eval asks its API models for ``logprobs: 1`` with ``echo``):
``is_greedy`` when every target token is that top-1 or ties it (lm-eval compares the values, so
which of two equal tokens the server lists first does not matter). Per sample: ``acc`` (1 when
greedy) and ``loglikelihood``; the task's ``perplexity`` is ``exp(-mean(loglikelihood))`` (lm-eval's
``perplexity`` aggregation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import ContractViolation
from ...ir.request import CompletionInput, Request, Sampling, Scoring
from ...ir.response import Response
from ...scoring import continuation_score
from ...scoring.uncertainty import UNIT, Derived
from .._shared import means, score_channels
from ..base import ModelFacts, Requirement, Sample, SampleResult, TaskConfig
from ..prompt import shown
from .base import Base, Prepared

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["TargetLogLikelihood"]


@dataclass(frozen=True, kw_only=True)
class TargetLogLikelihood(Base):
    kind: str = "target log-likelihood"
    ranges = MappingProxyType({"acc": UNIT, "loglikelihood": (-math.inf, 0.0)})
    # perplexity = exp(-mean loglikelihood): its interval is the mean's, mapped (lm-eval
    # bootstraps a standard error instead; the mapped interval needs no resampling)
    derived = MappingProxyType({"perplexity": Derived(of="loglikelihood", scale=-1, exp=True)})

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        return (
            Requirement("text_prompt", "the context and target are scored as a raw-text prompt"),
            Requirement("input_scoring", "the target's log-likelihood comes from input logprobs"),
            Requirement("input_top_k", "is_greedy compares each target token with the top-1", 1),
            Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
        )

    def protocol(self, spec: Spec) -> str:
        p = spec.prompt
        return (
            f"{self.kind} ({spec.reference}): the target {shown(p.target)} scored after the "
            f"context {shown(p.text)} via input scoring with the top-1 at each position; acc = "
            "every target token is the top-1 or ties it (lm-eval is_greedy); perplexity = "
            "exp(-mean(loglikelihood))"
        )

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        p = spec.prompt
        target = p.target_of(row)
        text = p.text_of(row)
        query = text + p.tail(row, text) if isinstance(text, str) else text
        return Prepared(data={"query": query, "target": target}, gold=target)

    def arguments(
        self, spec: Spec, sample: Sample, config: TaskConfig
    ) -> dict[str, tuple[str, str]]:
        """The request's (context, target), as lm-eval's instance's ``arguments``."""
        return {"target": (sample.data["fewshot"] + sample.data["query"], sample.data["target"])}

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        context, target = self.arguments(spec, sample, config)["target"]
        text = context + target
        return {
            "target": Request(
                input=CompletionInput(text=text),
                sampling=Sampling(temperature=0.0, max_tokens=1),
                scoring=Scoring(input_logprobs=True, input_top_k=1),
            )
        }

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        context = len(sample.data["fewshot"]) + len(sample.data["query"])
        target = sample.data["target"]
        scored = continuation_score(responses["target"], context, target)
        if scored.is_greedy is None:
            raise ContractViolation(
                "the reply has no top-1 alternative at the target's positions, so is_greedy "
                "cannot be read; the request asked for input_top_k=1",
                path="input_tokens[].top",
            )
        return SampleResult(
            prediction=scored.is_greedy,
            gold=True,
            metrics={"acc": float(scored.is_greedy), "loglikelihood": scored.logprob_sum},
            channels={"target": score_channels([scored], [target])[0]},
        )

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        out = means(results)
        out["perplexity"] = math.exp(-out["loglikelihood"])
        return out
