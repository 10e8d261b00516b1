"""Small helpers the families share: an integer option, request shapes, means."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ConfigError, ContractViolation
from ..ir.ranges import INT32_MAX, RANGES
from ..ir.request import ChatInput, CompletionInput, Message, Request, Sampling, Scoring, TextPart
from ..ir.response import Choice, Response
from ..scoring.continuation import ContinuationScore
from ..setting_names import named, setting
from .base import Sample, SampleResult, TaskConfig


def int_option(
    task: str,
    config: TaskConfig,
    name: str,
    default: int,
    minimum: int,
    maximum: int = INT32_MAX,
) -> int:
    """An integer task option with its default, refused outside ``[minimum, maximum]`` (named in
    the error); the default maximum is the largest count a wire carries (``ir/ranges.py``)."""
    value = config.options.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= maximum:
        raise ConfigError(
            f"task {task}: option {name} must be an integer in [{minimum}, {maximum}], got "
            f"{value!r}",
            path=f"tasks.{task}.options.{name}",
            received=value,
        )
    return value


def temperature_option(task: str, config: TaskConfig, default: float = 0.0) -> float:
    """A task's ``temperature`` option (greedy by default), refused unless a finite number >= 0."""
    value = config.options.get("temperature", default)
    if not RANGES["sampling.temperature"].holds(value):
        raise ConfigError(
            f"task {task}: option temperature must be a finite number >= 0, got {value!r}",
            path=f"tasks.{task}.options.temperature",
            received=value,
        )
    return float(value)


def check_options(task: str, config: TaskConfig, allowed: Iterable[str]) -> None:
    """Refuse an option the task does not read, and shots for a task that takes none (a task
    that is not a ``Spec``: ``SpecTask`` checks its own)."""
    known = sorted(allowed)
    unknown = sorted(set(config.options) - set(known))
    if unknown:
        raise ConfigError(
            f"task {task} has no option {', '.join(unknown)}; it accepts: "
            f"{', '.join(known) or '(none)'}",
            path=f"tasks.{task}.options",
            received=unknown,
        )
    if config.num_fewshot:
        raise ConfigError(f"task {task} is 0-shot; drop num_fewshot", path=f"tasks.{task}")


def user_message(text: str) -> ChatInput:
    """A conversation of one user message holding ``text`` (what chat tasks send)."""
    return ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),))


def prompt_input(sample: Sample, text: str, chat: bool) -> ChatInput | CompletionInput:
    """The prompt of ``text`` (the sample's shots and query as one text): one user message on a
    chat wire, raw text otherwise; with the shots as turns (``fewshot_as_multiturn``), the
    system message, each shot's user and assistant turns, then ``text`` (the query) as the last
    user turn, and a completion wire refused (``ConfigError``: nothing is sent)."""
    turns = sample.data.get("fewshot_turns")
    if turns is None:
        return user_message(text) if chat else CompletionInput(text=text)
    if not chat:
        raise ConfigError(
            f"{named('fewshot_as_multiturn')} sends the shots as chat turns, which a raw-text "
            f"prompt cannot hold; run it on a chat wire with {setting('kind', 'chat')}, or with "
            f"{named('apply_chat_template')} (the server's chat template renders the turns), or "
            "drop it",
            path="fewshot_as_multiturn",
        )
    messages: list[Message] = []
    if sample.data.get("fewshot_system"):
        messages.append(_message("system", sample.data["fewshot_system"]))
    for user, assistant in turns:
        messages.append(_message("user", user))
        if assistant is not None:
            messages.append(_message("assistant", assistant))
    messages.append(_message("user", text))
    return ChatInput(messages=tuple(messages))


def _message(role: str, text: str) -> Message:
    return Message(role=role, content=(TextPart(text=text),))  # type: ignore[arg-type]


def first_choice(response: Response) -> Choice:
    """The reply's first choice, which a generation task scores."""
    if not response.choices:
        raise ContractViolation("the generation reply has no choices", path="choices")
    return response.choices[0]


def tool_calls(choice: Choice) -> list[dict[str, Any]]:
    """The tool calls a choice made, as a record keeps them (``sieval samples`` shows them)."""
    calls = choice.tool_calls if isinstance(choice.tool_calls, tuple) else ()
    return [{"name": c.name, "arguments": c.arguments} for c in calls]


def scoring_request(text: str) -> Request:
    """Input scoring of ``text``; the one generated token (max_tokens=1, as 0 is refused on some
    vLLM routes) is ignored."""
    return Request(
        input=CompletionInput(text=text),
        sampling=Sampling(temperature=0.0, max_tokens=1),
        scoring=Scoring(input_logprobs=True),
    )


def score_channels(
    scores: Sequence[ContinuationScore], choices: Sequence[str]
) -> list[dict[str, Any]]:
    """What a choice score used, for the record: ``n_chars`` counts the continuation as scored
    (delimiter included), ``norm_chars`` the choice acc_norm divides by (without it)."""
    channels = []
    for score, choice in zip(scores, choices, strict=True):
        channel: dict[str, Any] = {"logprob_sum": score.logprob_sum, "n_tokens": score.n_tokens,
                                   "n_chars": score.n_chars, "norm_chars": len(choice)}  # fmt: skip
        if score.is_greedy is not None:  # only where the wire says (the top-1 was asked for)
            channel["is_greedy"] = score.is_greedy
        channels.append(channel)
    return channels


class _Means:
    """Running sums of each metric every result has (the first one's, less any a later one
    lacks: records written before a metric was added), added in the results' order (so the
    figures are those of ``sum`` over a list, to the last bit)."""

    def __init__(self) -> None:
        self.n = 0
        self.sums: dict[str, float] = {}

    def add(self, result: SampleResult) -> None:
        if not self.n:
            self.sums = dict.fromkeys(result.metrics, 0)
        self.n += 1
        for name in [n for n in self.sums if n not in result.metrics]:
            del self.sums[name]
        for name in self.sums:
            self.sums[name] += result.metrics[name]

    def out(self) -> dict[str, Any]:
        return {"n": self.n, **{name: total / self.n for name, total in self.sums.items()}}


def means(results: Iterable[tuple[Sample, SampleResult]]) -> dict[str, Any]:
    """``{metric: mean}`` over the results, plus ``n``; one pass, holding no result."""
    acc = _Means()
    for _, result in results:
        acc.add(result)
    return acc.out()


def grouped_means(
    results: Iterable[tuple[Sample, SampleResult]], key: Any
) -> dict[str, dict[str, Any]]:
    """``means`` per group, where ``key(sample)`` names the group; groups sorted."""
    groups: dict[str, _Means] = {}
    for sample, result in results:
        groups.setdefault(key(sample), _Means()).add(result)
    return {name: groups[name].out() for name in sorted(groups)}
