"""Generation with extraction: the model writes, documented rules extract the answer, it is compared
with the gold answer.

The prompt is the shots' prefix and the row's text, sent as a raw-text prompt (``input=
"completion"``) or as one user message through the model's chat template (``"chat"``). Decoding is
greedy unless the ``temperature`` option says otherwise; ``max_tokens`` is an option, and
``repeats`` sends each row that many times (a seed a repeat when sampling), adding ``pass@k`` and
``maj@k`` over the repeats (``checked.py``'s ``repeat_figures``). Each ``Answer`` names a metric,
the rule that extracts an answer from the reply (None when nothing matches) and the channel that
records it; the metric is 1 when the extracted answer equals the gold one. The first answer is the
prediction. With ``invalid``, the first rule's misses are counted (per sample ``invalid``,
``invalid_rate`` in the figures). An answer that ended for length before the first rule found
anything is ``censored`` (``scoring/censored.py``; per sample, ``censored_rate`` in the figures):
the budget cut it, it is neither right nor wrong, and the report gives the headline's bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...ir.request import Request, Sampling
from ...ir.response import Response
from ...scoring.censored import censored
from .._shared import (
    first_choice,
    int_option,
    means,
    prompt_input,
    temperature_option,
    tool_calls,
)
from ..base import ModelFacts, Requirement, Sample, SampleResult, TaskConfig
from .base import Base, Prepared
from .checked import MAX_REPEATS, repeat_figures

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["Answer", "Generation"]


@dataclass(frozen=True, kw_only=True)
class Answer:
    metric: str
    extract: Callable[[str], str | None]
    channel: str | None = None
    """The channel the extracted answer is recorded in; None: not recorded."""


@dataclass(frozen=True, kw_only=True)
class Generation(Base):
    answers: tuple[Answer, ...]
    gold: Callable[[Mapping[str, Any]], Any]
    """The gold answer of a row."""
    input: Literal["completion", "chat"] = "completion"
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    invalid: Any = None
    """What the prediction is when the first rule matches nothing; set, the misses are counted."""
    count_invalid: bool = False
    finish_channel: bool = False
    """Record the reply's finish reason as the ``finish_reason`` channel."""
    protocol_text: str = ""
    request: str = "gen"
    """The request's name in the records."""
    kind: str = "generation"
    options: Mapping[str, Any] = field(default_factory=dict)
    has_max_tokens_option: bool = True
    vote: bool = True
    """maj@k over the repeats' extracted answers (the predictions are kept for it)."""

    def __post_init__(self) -> None:
        options: dict[str, Any] = (
            {"max_tokens": self.max_tokens} if self.has_max_tokens_option else {}
        )
        options |= {"repeats": 1, "temperature": 0.0}
        object.__setattr__(self, "options", options)

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        self._max_tokens(spec, config)
        self.repeats(spec, config)
        temperature_option(spec.name, config)

    def repeats(self, spec: Spec, config: TaskConfig) -> int:
        return int_option(spec.name, config, "repeats", 1, 1, MAX_REPEATS)

    def _max_tokens(self, spec: Spec, config: TaskConfig) -> int:
        if not self.has_max_tokens_option:
            return self.max_tokens
        return int_option(spec.name, config, "max_tokens", self.max_tokens, 1)

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        prompt = (
            Requirement("chat", "the question is a user message")
            if self.input == "chat"
            else Requirement("text_prompt", "the k-shot prompt is raw text")
        )
        out = [prompt, Requirement("sampling", "greedy decoding and max_tokens are set explicitly")]
        if self.stop:
            out.append(Requirement("stop_strings", f"generation stops at {self.stop[0]!r}"))
        return tuple(out)

    def protocol(self, spec: Spec) -> str:
        return self.protocol_text or (
            f"{self.kind} ({spec.reference}): {self.input} prompt, greedy, max_tokens "
            f"{self.max_tokens}, stop {list(self.stop)}; "
            + "; ".join(f"{a.metric} by {a.extract.__name__}" for a in self.answers)
        )

    def protocol_for(self, spec: Spec, model: ModelFacts, protocol: str) -> str:
        sized = "max_tokens, " if self.has_max_tokens_option else ""
        return (
            f"{protocol}; the options temperature, {sized}repeats replace these defaults "
            "(recorded with the run)"
        )

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        return Prepared(data={"query": spec.prompt.text_of(row)}, gold=self.gold(row))

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        text = sample.data["fewshot"] + sample.data["query"]
        kwargs: dict[str, Any] = {
            "temperature": temperature_option(spec.name, config),
            "max_tokens": self._max_tokens(spec, config),
        }
        if self.stop:
            kwargs["stop"] = self.stop
        repeat = sample.data.get("repeat")
        if isinstance(repeat, int) and kwargs["temperature"] > 0:
            kwargs["seed"] = config.seed + repeat  # one seed a repeat: repeats are not copies
        sampling = Sampling(**kwargs)
        prompt = prompt_input(sample, text, self.input == "chat")
        return {self.request: Request(input=prompt, sampling=sampling)}

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        choice = first_choice(responses[self.request])
        found = [a.extract(choice.text) for a in self.answers]
        metrics = {
            a.metric: float(x == sample.gold) for a, x in zip(self.answers, found, strict=True)
        }
        if self.count_invalid:
            metrics["invalid"] = float(found[0] is None)
        finish = choice.finish_reason if isinstance(choice.finish_reason, str) else None
        metrics["censored"] = float(censored(finish, answered=found[0] is not None))
        channels: dict[str, Any] = {"text": choice.text}
        if calls := tool_calls(choice):
            channels["tool_calls"] = calls
        for answer, value in zip(self.answers, found, strict=True):
            if answer.channel is not None:
                channels[answer.channel] = value
        if self.finish_channel:
            channels["finish_reason"] = finish
        prediction = found[0] if found[0] is not None else self.invalid
        return SampleResult(
            prediction=prediction, gold=sample.gold, metrics=metrics, channels=channels
        )

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        kept = list(results)
        out = means(kept)
        if self.count_invalid:
            out["invalid_rate"] = out.pop("invalid", 0.0)
        if "censored" in out:  # records made before it have none
            out["censored_rate"] = out.pop("censored")
        out.update(repeat_figures(kept, spec.headline, self.equivalent if self.vote else None))
        return out
