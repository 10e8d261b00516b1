"""Generation as lm-evaluation-harness's ``generate_until``: filters, then named scorers.

The request is lm-eval's: the context (the shots' prefix and the row's text) generated until
one of ``until`` (``generation_kwargs``; lm-eval's default is the fewshot delimiter), at most
``max_gen_toks`` tokens (256), greedy unless ``do_sample``/``temperature`` say otherwise; the
other sampling keys (``top_p``, ``top_k``, ``seed``) are passed as they are. A raw-text model
gets the context as its prompt; a chat model gets it as one user message (the protocol says
which ran). Each filter pipeline (``filters.py``) reads the answer and each scorer
(``scorers.py``) compares what it extracted with the gold (``doc_to_target``; the choice it
indexes when the task has ``doc_to_choice``): a metric per (scorer, pipeline), named as lm-eval
names it, ``exact_match,strict-match`` (the scorer alone with the single ``none`` pipeline).
The record keeps the text, the finish reason, what each pipeline extracted and each scorer's
rule. ``process_results`` (a function of the row and ``[answer]``) replaces the scorers when a
task gives one, as in lm-eval.

A ``judge`` scorer (``scorers.py``) asks the judge role, after the generation and the filters,
one call per pipeline (named as its metric: ``judge`` or ``judge,<pipeline>``), temperature 0,
at most ``JUDGE_MAX_TOKENS``; its verdict is the metric, a reply without one a
``judge_parse_error`` (counted in ``judge_parse_errors``, the metric left out), and the record
keeps who judged (``judging.identity``). With ``cascade``, the scorer's rule decides first and
only what it cannot decide goes to the judge; ``decided_by_judge`` (1 or 0 a metric) gives the
share each decided. The task then needs ``roles: {judge: ...}`` and refuses
a judge serving the evaluated model unless its option ``judge_self`` is true.

``repeats: n`` (lm-eval's ``repeats``, as in ``gsm8k-cot-self-consistency``) sends the same
request n times (calls ``gen``, ``gen_2`` … ``gen_n``: the same body, so a greedy request gives n
copies, as lm-eval's would) and each pipeline starts from the list of the n texts
(``majority_vote``, ``take_first_k``, ``take_first``: ``filters.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...ir.request import Request, Sampling
from ...ir.response import Response
from .._shared import first_choice, means, prompt_input, user_message
from ..base import (
    ModelFacts,
    PlannedCall,
    Requirement,
    Sample,
    SampleResult,
    TaskConfig,
    answered,
)
from ..filters import NONE, Pipeline
from ..judging import JUDGE_SELF, identity, judge_self, prompt_hash, reply_text
from ..prompt import shown
from ..scorers import JUDGE_GRADE, Scorer
from .base import Base, Prepared

if TYPE_CHECKING:
    from ..context import Context
    from ..spec import Spec

__all__ = ["Generated"]

_SAMPLING = {"temperature", "top_p", "top_k", "seed", "max_gen_toks", "until", "do_sample"}
"""The ``generation_kwargs`` sieval sends (others are refused when the YAML is resolved)."""

JUDGE_MAX_TOKENS = 1024
"""The judge's budget for one verdict (its reasoning, then the grade)."""


@dataclass(frozen=True, kw_only=True)
class Generated(Base):
    scorers: tuple[Scorer, ...]
    pipelines: tuple[Pipeline, ...] = (NONE,)
    generation: Mapping[str, Any] = field(default_factory=dict)
    """lm-eval's ``generation_kwargs`` as resolved (``until`` always present)."""
    results: Callable[[Mapping[str, Any], list[Any]], Mapping[str, Any]] | None = None
    """``process_results``: the row and ``[answer]`` to the metrics."""
    keeps_doc: bool = False
    """The row is kept in the sample (a filter or scorer reads it)."""
    custom: Mapping[str, Any] = field(default_factory=dict)
    """Metrics aggregated over the samples' items (``tasks/aggregations.py``)."""
    kind: str = "generation, filtered and scored"
    repeat_calls: int = 1
    """The calls a document makes with the same request (lm-eval's ``repeats``)."""

    @property
    def _single(self) -> bool:
        """One pipeline, ``none``: metrics are named by scorer alone (``exact_match``)."""
        return len(self.pipelines) == 1 and self.pipelines[0].name == "none"

    @property
    def judges(self) -> tuple[Scorer, ...]:
        """The scorers that ask the judge role."""
        return tuple(s for s in self.scorers if s.judge_prompt is not None)

    @property
    def roles(self) -> tuple[str, ...]:
        return ("judge",) if self.judges else ()

    @property
    def options(self) -> Mapping[str, Any]:  # type: ignore[override]
        return {JUDGE_SELF: False} if self.judges else {}

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        if self.judges:
            judge_self(spec.name, config)

    @property
    def max_tokens(self) -> int:
        return int(self.generation.get("max_gen_toks", 256))

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        chat = model.input_kind == "chat"
        out = [
            Requirement("chat", "the context is one user message")
            if chat
            else Requirement("text_prompt", "the context is a raw-text prompt"),
            Requirement("sampling", "temperature and max_tokens are set explicitly"),
        ]
        if self.generation.get("until"):
            out.append(Requirement("stop_strings", f"generation stops at {self.until[0]!r}"))
        return tuple(out)

    @property
    def until(self) -> tuple[str, ...]:
        value = self.generation.get("until") or ()
        return (value,) if isinstance(value, str) else tuple(value)

    def protocol(self, spec: Spec) -> str:
        scored = (
            f"process_results {shown(self.results)}"
            if self.results is not None
            else "; ".join(f"{s.name}: {s.rule}" for s in self.scorers)
        )
        return (
            f"{self.kind} ({spec.reference}): the context {shown(spec.prompt.text)} after k shots "
            f"joined by {spec.prompt.fewshot_delimiter!r}; until {list(self.until)}, max_tokens "
            f"{self.max_tokens}, temperature {self._temperature()}; "
            + (f"the request sent {self.repeat_calls} times; " if self.repeat_calls > 1 else "")
            + "filters "
            f"{' | '.join(p.rule for p in self.pipelines)}; {scored}"
        )

    def protocol_for(self, spec: Spec, model: ModelFacts, protocol: str) -> str:
        how = "chat: the context as one user message" if model.input_kind == "chat" else "raw text"
        return f"{how}; {protocol}"

    def _temperature(self) -> float:
        value = self.generation.get("temperature")
        if value is None:
            return 1.0 if self.generation.get("do_sample") else 0.0
        return float(value)

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        p = spec.prompt
        text = p.text_of(row)
        if not isinstance(text, str):
            raise ConfigError(
                f"a row of {spec.name} gives the text {text!r}; generate_until needs a string "
                "(doc_to_text)",
                path=f"{spec.name}.doc_to_text",
            )
        gold = p.target_of(row)
        data: dict[str, Any] = {"query": text + p.tail(row, text)}
        if p.choices is not None:
            choices = p.choices_of(row)
            gold = choices[gold] if isinstance(gold, int) else gold
            data["choices"] = choices
        if self.keeps_doc or self.results is not None:
            data["doc"] = dict(row)
        return Prepared(data=data, gold=gold)

    def arguments(
        self, spec: Spec, sample: Sample, config: TaskConfig
    ) -> dict[str, tuple[Any, ...]]:
        """lm-eval's instance arguments: (context, generation_kwargs)."""
        context = sample.data["fewshot"] + sample.data["query"]
        return {name: (context, dict(self.generation)) for name in self._names()}

    def _names(self) -> list[str]:
        """The calls of a document: ``gen``, then ``gen_2`` … for its repeats."""
        return ["gen"] + [f"gen_{i}" for i in range(2, self.repeat_calls + 1)]

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        text = sample.data["fewshot"] + sample.data["query"]
        prompt = prompt_input(sample, text, model.input_kind == "chat")
        kwargs: dict[str, Any] = {
            "temperature": self._temperature(),
            "max_tokens": self.max_tokens,
        }
        if self.until:
            kwargs["stop"] = self.until
        for key in ("top_p", "top_k", "seed"):
            if key in self.generation:
                kwargs[key] = self.generation[key]
        request = Request(input=prompt, sampling=Sampling(**kwargs))
        return {name: request for name in self._names()}

    def _doc(self, sample: Sample) -> dict[str, Any]:
        doc = dict(sample.data.get("doc") or {})
        if "choices" in sample.data:
            doc["__choices__"] = sample.data["choices"]
        return doc

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        raise RuntimeError("Generated is scored by score_async")  # pragma: no cover

    async def score_async(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        choice = first_choice(responses["gen"])
        text = choice.text
        texts = [first_choice(responses[name]).text for name in self._names()]
        doc = self._doc(sample)
        metrics: dict[str, float] = {}
        items: dict[str, Any] = {}
        extracted: dict[str, Any] = {}
        channels: dict[str, Any] = {
            "text": text,
            "finish_reason": choice.finish_reason
            if isinstance(choice.finish_reason, str)
            else None,
        }
        if self.repeat_calls > 1:
            channels["texts"] = texts
        single = self._single
        for pipe in self.pipelines:
            answer = pipe.run(texts if self.repeat_calls > 1 else text, doc)
            extracted[pipe.name] = answer
            suffix = "" if single else f",{pipe.name}"
            if self.results is not None:
                found = dict(self.results(sample.data["doc"], [answer]))
            else:
                found = {}
                for scorer in self.scorers:
                    if scorer.judge_prompt is not None:  # asked in solve, after this
                        continue
                    value = scorer.score(answer, sample.gold, doc)
                    if inspect.isawaitable(value):
                        value, more = await value
                        channels.update(more)
                    found[scorer.name] = value
            for name, value in found.items():
                if f"{name}{suffix}" in self.custom or name in self.custom:
                    items[f"{name}{suffix}"] = _plain(value)
                else:
                    metrics[f"{name}{suffix}"] = _float(name, value, spec)
        channels["extracted"] = extracted
        channels["rule"] = {p.name: p.rule for p in self.pipelines}
        first = extracted[self.pipelines[0].name]
        from ..aggregations import items_prediction

        return SampleResult(
            prediction=items_prediction(first, items),
            gold=sample.gold,
            metrics=metrics,
            channels=channels,
        )

    # -- the judge scorer -----------------------------------------------------------------------

    def _judge_requests(
        self, sample: Sample, extracted: Mapping[str, Any], ruled: Mapping[str, float] = {}
    ) -> dict[str, Request]:
        """One judge call per (judge scorer, pipeline), named as the metric it gives, but for
        the ones a cascade's rule decided (``ruled``)."""
        gold = sample.gold
        reference = " / ".join(map(str, gold)) if isinstance(gold, list) else str(gold)
        single = self._single
        sampling = Sampling(temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)
        out = {}
        for scorer in self.judges:
            assert scorer.judge_prompt is not None
            for pipe in self.pipelines:
                text = (
                    scorer.judge_prompt.replace("{question}", str(sample.data["query"]))
                    .replace("{answer}", str(extracted[pipe.name]))
                    .replace("{reference}", reference)
                )
                name = scorer.name + ("" if single else f",{pipe.name}")
                if name not in ruled:
                    out[name] = Request(input=user_message(text), sampling=sampling)
        return out

    def _ruled(self, sample: Sample, extracted: Mapping[str, Any]) -> dict[str, float]:
        """The judge metrics a cascade's rule decides, by metric name."""
        single = self._single
        out = {}
        for scorer in self.judges:
            if scorer.cascade is None:
                continue
            for pipe in self.pipelines:
                verdict = scorer.cascade(extracted[pipe.name], sample.gold)
                if verdict is not None:
                    out[scorer.name + ("" if single else f",{pipe.name}")] = verdict
        return out

    def calls(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> list[PlannedCall]:
        """The generation's calls, then each judge call with a stand-in answer (each may hold up
        to ``max_tokens`` tokens unseen)."""
        named = self.requests(spec, sample, config, model)
        out = [PlannedCall(n, r) for n, r in named.items()]
        stand_in = {p.name: "(the answer)" for p in self.pipelines}
        for name, request in self._judge_requests(sample, stand_in).items():
            out.append(
                PlannedCall(name, request, role="judge", exact=False, unseen_tokens=self.max_tokens)
            )
        return out

    async def solve(self, spec: Spec, sample: Sample, ctx: Context) -> SampleResult:
        """The generation scored, then (with judge scorers) the judge asked of each answer."""
        responses = await answered(ctx, self.requests(spec, sample, ctx.config, ctx.facts))
        result = await self.score_async(spec, sample, responses, ctx.config, ctx.facts)
        if not self.judges:
            return result
        extracted = result.channels["extracted"]
        ruled = self._ruled(sample, extracted)
        requests = self._judge_requests(sample, extracted, ruled)
        judged = await ctx.role("judge").gather(requests) if requests else {}
        metrics = {**result.metrics, **ruled}
        verdicts: dict[str, str | None] = {}
        for name in requests:
            found = JUDGE_GRADE.search(reply_text(judged[name]))
            verdicts[name] = found.group(1) if found else None
            if found:
                metrics[name] = 1.0 if found.group(1) == "C" else 0.0
        metrics["judge_parse_errors"] = float(sum(v is None for v in verdicts.values()))
        channels = {**result.channels, "verdicts": verdicts}
        if any(s.cascade is not None for s in self.judges):
            metrics["decided_by_judge"] = len(requests) / (len(requests) + len(ruled))
            channels["decided_by"] = {
                **{n: "rule" for n in ruled},
                **{n: "judge" for n in requests},
            }
        if requests:
            prompts = {s.name: prompt_hash(s.judge_prompt or "") for s in self.judges}
            sampling = next(iter(requests.values())).sampling
            channels["judge"] = identity(list(judged.values()), prompts, sampling)
        return SampleResult(
            prediction=result.prediction, gold=result.gold, metrics=metrics, channels=channels
        )

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        if not self.custom:
            return means(results)
        from ..aggregations import aggregate

        names = {p.name for p in self.pipelines}
        single = self._single
        custom = {
            f"{metric}{'' if single else ',' + pipe}": fn
            for metric, fn in self.custom.items()
            for pipe in names
        }
        return aggregate(results, custom)


def _plain(value: Any) -> Any:
    """An item as a record holds it (tuples as lists, numpy numbers as Python's)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def _float(name: str, value: Any, spec: Spec) -> float:
    if isinstance(value, bool | int | float):
        return float(value)
    raise ConfigError(
        f"task {spec.name}: the metric {name} gave {value!r} for a sample, which is no number; "
        "give the metric its aggregation in metric_list (a corpus-level metric)",
        path=f"{spec.name}.process_results",
    )
