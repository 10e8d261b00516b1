"""Choice log-likelihood: each choice scored as a continuation, the best one picked.

As lm-evaluation-harness 0.4.13's ``multiple_choice`` output type (``ConfigurableTask``): one
request per choice, context ``prefix + text`` and continuation ``target_delimiter + choice``;
``acc`` picks the largest log-likelihood, ``acc_norm`` the largest per character of the choice
(``len(choice)``, without the delimiter), ties to the first. Three forms beside the plain one:

- *variable context* (WinoGrande): when ``doc_to_text`` gives an index, the choices are the
  contexts and ``doc_to_target`` the continuation every choice shares; the gold is that index;
- *several gold choices*: a target that is a list counts a pick among them as right;
- *probability mass* (TruthfulQA MC2, ``mass=``): ``acc`` is the share of the choices' total
  probability that falls on the true ones (``exp`` of each log-likelihood, normalised), computed
  as lm-eval's ``process_results_mc2`` does, with numpy, so the figures agree to the bit.

Opt-in, because each doubles the requests: ``acc_mutual_info`` (lm-eval's: the log-likelihood
minus the same continuation's after an empty context, i.e. after the BOS alone), and, where a
spec names its context, ``acc_uncond`` (Brown et al. 2020: minus the continuation's after a
fixed context such as ``Answer:``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec

from ...errors import ConfigError
from ...ir.request import Request, Scoring
from ...ir.response import Response
from ...scoring import argmax, continuation_score, pick_acc_norm
from ...scoring.uncertainty import UNIT
from .._shared import score_channels, scoring_request
from ..base import ModelFacts, Requirement, Sample, SampleResult, TaskConfig
from ..prompt import Prompt, shown
from .base import Base, Prepared, flag

if TYPE_CHECKING:
    from ..prompt import Field
    from ..spec import Spec

__all__ = ["MultipleChoice"]

_NEEDS = (
    Requirement("text_prompt", "each choice is scored as a raw-text prompt"),
    Requirement("input_scoring", "the choice's log-likelihood comes from input logprobs"),
    Requirement("sampling", "temperature=0 and max_tokens=1 are set explicitly"),
)


@dataclass(frozen=True, kw_only=True)
class MultipleChoice(Base):
    metrics: tuple[str, ...] = ("acc", "acc_norm")
    """The per-sample metrics the reference reports (its ``metric_list``)."""
    mass: Field | None = None
    """The true/false label of each choice (a field, template or function of the row): ``acc``
    becomes the probability mass on the true choices (MC2)."""
    uncond_context: str | None = None
    """The fixed context of ``acc_uncond``; None: the task has no ``acc_uncond``."""
    uncond_default: bool = False
    variable_context: bool | None = False
    """``doc_to_text`` gives the gold index and the choices are the contexts (WinoGrande); None:
    whichever each row's text says (a task file, as lm-eval decides it)."""
    mutual_info_default: bool = False
    """``acc_mutual_info`` on unless the config turns it off (a task file that lists it)."""
    results: Any = None
    """lm-eval's ``process_results(doc, [(loglikelihood, is_greedy), ...])`` giving the metrics
    (a task file's): each choice is then scored with its top-1 alternative (for is_greedy)."""
    custom: Mapping[str, Any] = field(default_factory=dict)
    """Metrics aggregated over the samples' items, not averaged (a task file's ``f1``, ``mcc``,
    or a custom ``aggregation``: ``tasks/aggregations.py``)."""
    kind: str = "choice log-likelihood"
    options: Mapping[str, Any] = field(default_factory=dict)
    # every metric is right or wrong, or (MC2's acc) a probability mass
    ranges = MappingProxyType(dict.fromkeys(("acc", "acc_norm", "acc_uncond", "acc_mutual_info"),
                                            UNIT))  # fmt: skip

    def __post_init__(self) -> None:
        options: dict[str, Any] = {"acc_mutual_info": self.mutual_info_default}
        if self.uncond_context is not None:
            options["acc_uncond"] = self.uncond_default
        object.__setattr__(self, "options", options)

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        if self.results is None:
            return _NEEDS
        return (*_NEEDS, Requirement("input_top_k", "process_results reads is_greedy", 1))

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        for name in self.options:
            flag(spec.name, config, name, self.options)

    def protocol(self, spec: Spec) -> str:
        p = spec.prompt
        shape = (
            f"each choice rendered into the context (variable context, {shown(p.text)}), the "
            f"target {shown(p.target)} scored after it"
            if self.variable_context
            else f"each choice {shown(p.choices)} scored as {p.target_delimiter!r} + choice after "
            f"the context {shown(p.text)}"
        )
        scored = (
            "acc = normalised probability mass on the true choices (exp, then /sum, numpy)"
            if self.mass is not None
            else ", ".join(_METRIC_WORDS.get(m, m) for m in self.metrics)
        )
        opt = "opt-in: acc_mutual_info (minus the choice's log-likelihood after the BOS alone)"
        if self.uncond_context is not None:
            opt += f", acc_uncond (minus the choice's after {self.uncond_context!r})"
        return (
            f"{self.kind} ({spec.reference}): k shots joined by {p.fewshot_delimiter!r}, "
            f"{shape}, via input scoring; {scored}; ties -> lowest index"
            + ("; an empty choice fails its sample" if "acc_norm" in self.metrics else "")
            + f"; {opt}"
            + (f"; differs: {spec.differs}" if spec.differs else "")
        )

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        p = spec.prompt
        text = p.text_of(row)
        choices = p.choices_of(row)
        if self.variable_context is not None and isinstance(text, int) != self.variable_context:
            raise ConfigError(
                f"a row of {spec.name} gives the text {text!r}: a variable-context task's text is "
                "the gold index, any other task's a string; fix the spec (variable_context)",
                path=f"{spec.name}.prompt.text",
            )
        if isinstance(text, int):  # variable context: the choices are the contexts
            data: dict[str, Any] = {"contexts": choices, "continuation": p.target_of(row)}
            gold: Any = text
        else:
            data = {"query": text + p.tail(row, text), "choices": choices}
            gold = p.target_of(row)
            if isinstance(gold, str):
                gold = choices.index(gold) if gold in choices else -100
        if self.mass is not None:
            labels = _labels(self.mass, row)
            if len(labels) != len(choices):
                raise ConfigError(
                    f"{len(labels)} labels but {len(choices)} choices in a row of {spec.name}",
                    path=f"{spec.name}.mass",
                )
            data["labels"] = labels
        if self.results is not None:
            data["doc"] = dict(row)
        return Prepared(data=data, gold=gold)

    def arguments(
        self, spec: Spec, sample: Sample, config: TaskConfig
    ) -> dict[str, tuple[str, str]]:
        """Each request's (context, continuation), as lm-eval's instances' ``arguments``."""
        pairs = _pairs(spec, sample)
        out = {f"choice:{i}": pair for i, pair in enumerate(pairs)}
        if self._on(spec, config, "acc_uncond"):
            assert self.uncond_context is not None
            for i, (_, t) in enumerate(pairs):
                out[f"uncond:{i}"] = (self.uncond_context, t)
        if self._on(spec, config, "acc_mutual_info"):
            for i, choice in enumerate(_norm_texts(sample)):
                out[f"prior:{i}"] = ("", spec.prompt.target_delimiter + choice)
        return out

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        made = {
            name: scoring_request(context + continuation)
            for name, (context, continuation) in self.arguments(spec, sample, config).items()
        }
        if self.results is None:
            return made
        top1 = Scoring(input_logprobs=True, input_top_k=1)  # is_greedy, as lm-eval's API models
        return {name: msgspec.structs.replace(r, scoring=top1) for name, r in made.items()}

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        pairs = _pairs(spec, sample)
        cond = [
            continuation_score(responses[f"choice:{i}"], len(c), t)
            for i, (c, t) in enumerate(pairs)
        ]
        lls = [s.logprob_sum for s in cond]
        norm = _norm_texts(sample)
        picks: dict[str, int] = {"acc": argmax(lls)}
        if "acc_norm" in self.metrics:
            picks["acc_norm"] = pick_acc_norm(cond, norm)
        if "acc_bytes" in self.metrics:  # lm-eval: the log-likelihood per UTF-8 byte of the choice
            picks["acc_bytes"] = argmax(
                [x / len(c.encode()) for x, c in zip(lls, norm, strict=True)]
            )
        channels: dict[str, Any] = {"choices": score_channels(cond, norm)}
        if self._on(spec, config, "acc_uncond"):
            assert self.uncond_context is not None
            base = len(self.uncond_context)
            uncond = [
                continuation_score(responses[f"uncond:{i}"], base, t)
                for i, (_, t) in enumerate(pairs)
            ]
            picks["acc_uncond"] = argmax(
                [c - u.logprob_sum for c, u in zip(lls, uncond, strict=True)]
            )
            channels["unconditional"] = score_channels(uncond, norm)
        if self._on(spec, config, "acc_mutual_info"):
            delim = spec.prompt.target_delimiter
            prior = [
                continuation_score(responses[f"prior:{i}"], 0, delim + choice)
                for i, choice in enumerate(norm)
            ]
            picks["acc_mutual_info"] = argmax(
                [c - p.logprob_sum for c, p in zip(lls, prior, strict=True)]
            )
            channels["prior"] = score_channels(prior, norm)
        gold = sample.gold
        metrics = {name: _right(pick, gold) for name, pick in picks.items()}
        if self.mass is not None:
            metrics["acc"] = _mass(lls, sample.data["labels"])
        if self.results is not None:  # the task's own process_results gives the metrics
            pairs_ll = [(s.logprob_sum, bool(s.is_greedy)) for s in cond]
            found = dict(self.results(sample.data["doc"], pairs_ll))
            metrics = {k: float(v) for k, v in found.items() if k not in self.custom}
        else:
            found = {}
        items = {
            name: found[name]
            if name in found
            else [gold, picks["acc"]]
            if name in ("f1", "mcc")
            else metrics.get(name)
            for name in self.custom
        }
        from ..aggregations import items_prediction

        return SampleResult(
            prediction=items_prediction(picks.get(spec.headline, picks["acc"]), items),
            gold=gold,
            metrics=metrics,
            channels=channels,
        )

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        from .._shared import means
        from ..aggregations import aggregate

        return aggregate(results, self.custom) if self.custom else means(results)

    def _on(self, spec: Spec, config: TaskConfig, name: str) -> bool:
        return name in self.options and flag(spec.name, config, name, self.options)


_METRIC_WORDS = {
    "acc": "acc = argmax sum",
    "acc_norm": "acc_norm = argmax sum/len(choice), characters of the choice without the "
    "delimiter (lm-eval)",
    "acc_bytes": "acc_bytes = argmax sum/UTF-8 bytes of the choice",
    "f1": "f1 over (gold, argmax sum) of every sample",
    "mcc": "mcc over (gold, argmax sum) of every sample",
}


def _pairs(spec: Spec, sample: Sample) -> list[tuple[str, str]]:
    """(context, continuation) of each choice, as lm-eval's request arguments."""
    data, delim = sample.data, spec.prompt.target_delimiter
    fewshot = data["fewshot"]
    if "contexts" in data:
        return [(fewshot + c, delim + data["continuation"]) for c in data["contexts"]]
    return [(fewshot + data["query"], delim + c) for c in data["choices"]]


def _norm_texts(sample: Sample) -> list[str]:
    """What lm-eval divides by for acc_norm: ``doc_to_choice`` (the contexts, in a
    variable-context task)."""
    texts: list[str] = sample.data.get("choices") or sample.data["contexts"]
    return texts


def _right(pick: int, gold: Any) -> float:
    return float(pick in gold) if isinstance(gold, list) else float(pick == gold)


def _labels(field: Field, row: Mapping[str, Any]) -> list[int]:
    value = Prompt.read(field, row)
    if isinstance(value, str):  # a rendered template: the list it spells
        value = ast.literal_eval(value)
    return [int(v) for v in value]


def _mass(lls: Sequence[float], labels: Sequence[int]) -> float:
    """lm-eval's ``process_results_mc2``: ``exp``, normalise by the sum, add the true ones
    (numpy's ``exp`` and pairwise ``sum``, as there)."""
    import numpy as np

    probs = np.exp(np.array(lls))
    probs_norm = probs / np.sum(probs)
    return float(np.sum(probs_norm[np.array(labels) == 1]))
