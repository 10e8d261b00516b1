"""Generation scored by a checker: the model writes, a task's checker (``scoring/``) reads the
answer and says what it scores — the instruct tasks (IFEval, BBH, MATH, GPQA, MMLU-Pro, code).

What every checked task gets, written once here:

- the prompt as raw text (``input="completion"``) or as one user message (``"chat"``), and the
  chat message whenever the model takes only chat (``ModelFacts.input_kind``); the protocol
  names which ran;
- the reasoning channel kept apart: the checker reads ``Choice.text`` only, never
  ``Choice.reasoning`` (recorded as the ``reasoning`` channel); a ``<think>…</think>`` block left
  in the text is cut off before the checker reads it;
- ``truncated``: the answer ended for length (in its wire's word: ``length``, ``max_tokens``,
  ...) or a ``<think>`` block never closed; counted per sample and as ``truncated_rate``,
  beside ``invalid`` (no rule of the checker matched: ``invalid_rate``) and wrong;
- ``censored``: the budget cut the answer before it gave one, so it is neither right nor wrong
  (``scoring/censored.py``): a ``<think>`` block never closed, or the answer ended for length
  with no final answer read (nothing extracted, or what was read is not final: the whole text
  for IFEval, a code block whose fence never closed, ``Verdict.final``); counted per sample and
  as ``censored_rate``; the report gives the headline's bounds (censored counted wrong, left
  out);
- the record's channels: ``text`` (the raw answer), ``extracted`` (what the checker read, None
  when nothing), ``rule`` (the rule that matched), ``finish_reason``, and the checker's own;
- ``repeats: n`` (an option): each row is ``n`` samples, ids ``<id>#r<i>`` (each its own record,
  so a resumed run redoes only the missing ones), sampled at ``temperature`` with seed
  ``seed + i``; the figures add ``pass@k`` (Chen et al.'s unbiased estimator, ``scoring/
  repeats.py``) over the headline for k = 1, 2, 4, … up to n, and ``repeats``; the headline mean
  is then the mean over repeats. Where answers are votes (``vote``), ``maj@k`` too: the answers
  grouped by the task's ``equivalence`` (math-verify for the math tasks, the extracted text by
  default), the largest group wins, a tie goes to the group seen first (said in the protocol).

A checker is ``check(answer_text, sample) -> Verdict`` (or a coroutine of one: code execution),
the headline among its metrics.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...ir.request import Request, Sampling
from ...ir.response import Response, ended_for_length
from ...scoring.censored import censored
from ...scoring.dependencies import Dependency, require
from ...scoring.repeats import SAME_TEXT, Equivalence, maj_at_k, pass_at_k, vote_groups
from .._shared import (
    first_choice,
    int_option,
    means,
    prompt_input,
    temperature_option,
    tool_calls,
)
from ..base import ModelFacts, Readiness, Requirement, Sample, SampleResult, TaskConfig
from .base import Base, Prepared

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = ["MAX_REPEATS", "REPEAT", "Checked", "Verdict", "answer_text", "item_of"]

MAX_REPEATS = 1000
"""The most ``repeats`` a row may have: five times the 200 samples a row Chen et al. drew for
pass@100 (a larger count makes a plan that never ends: it holds every repeat of every row)."""

REPEAT = "#r"
"""What separates a row's id from its repeat's number in a sample id (``test/3#r2``)."""
_REPEAT_ID = re.compile(r"^(.*)#r(\d+)$")
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What a checker found in one answer."""

    metrics: dict[str, float]
    extracted: Any
    """The answer as read; None when no rule matched (the sample is invalid)."""
    rule: str | None
    channels: dict[str, Any] = field(default_factory=dict)
    """What else the record keeps (IFEval's per-instruction verdicts, the program's run)."""
    final: bool = True
    """Whether what was read is a final answer even when the text ran on past it (a closed box,
    'Answer: X'); False where it is the text itself or a block whose end was not reached
    (IFEval's response, code without a closing fence): then an answer that ended for length
    gave no final answer (censored)."""


Check = Callable[[str, Sample], "Verdict | Awaitable[Verdict]"]
Fields = Callable[[Mapping[str, Any], TaskConfig], dict[str, Any]]


def answer_text(text: str) -> tuple[str, bool]:
    """The text a checker reads and whether a reasoning block in it never ended: what follows
    the last ``</think>``; nothing when a ``<think>`` is left open."""
    if _THINK_CLOSE in text:
        return text.rsplit(_THINK_CLOSE, 1)[1], False
    if _THINK_OPEN in text:
        return "", True
    return text, False


def item_of(sample_id: str) -> str:
    """The row a sample id is a repeat of (the id itself when it is no repeat)."""
    match = _REPEAT_ID.match(sample_id)
    return match.group(1) if match else sample_id


@dataclass(frozen=True, kw_only=True)
class Checked(Base):
    check: Check
    gold: Callable[[Mapping[str, Any]], Any]
    headline: str
    input: Literal["completion", "chat"] = "chat"
    max_tokens: int = 1024
    stop: tuple[str, ...] = ()
    """Stop strings of a raw-text prompt (a chat answer ends at its end of turn)."""
    fields: Fields | None = None
    """The row's fields for the prompt, when they depend on the config (GPQA's shuffle)."""
    chat_text: Callable[[str], str] | None = None
    """The user message a chat model gets, from the raw-text prompt; None: the prompt itself."""
    needs: tuple[Dependency, ...] = ()
    """What the checker imports beyond sieval's own dependencies (the ``instruct`` extra):
    imported before the first request, a run refused with the install command when one fails."""
    vote: bool = True
    """maj@k over the repeats' extracted answers (False where answers are not votes: IFEval's
    counts, code)."""
    equivalence: Equivalence = SAME_TEXT
    """When two extracted answers are one vote: the checker's own sameness (math-verify for the
    math tasks); by default the same text."""
    protocol_text: str = ""
    kind: str = "generation, checked"
    options: Mapping[str, Any] = field(default_factory=dict)
    ready: Callable[[bool], Readiness] | None = None
    """The checker's own check before the run (the code tasks' sandbox), given whether the user
    allowed unsandboxed code (``--allow-unsafe-code``)."""

    def __post_init__(self) -> None:
        options = {"max_tokens": self.max_tokens, "repeats": 1, "temperature": 0.0}
        object.__setattr__(self, "options", options)

    # -- options ---------------------------------------------------------------------------------

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        self._max_tokens(spec, config)
        self.repeats(spec, config)
        self._temperature(spec, config)

    def _max_tokens(self, spec: Spec, config: TaskConfig) -> int:
        return int_option(spec.name, config, "max_tokens", self.max_tokens, 1)

    def repeats(self, spec: Spec, config: TaskConfig) -> int:
        return int_option(spec.name, config, "repeats", 1, 1, MAX_REPEATS)

    def _temperature(self, spec: Spec, config: TaskConfig) -> float:
        return temperature_option(spec.name, config)

    # -- what the runner asks ---------------------------------------------------------------------

    def equivalent(self, first: str, other: str) -> bool:
        return self.equivalence.same(first, other)

    def _chat(self, model: ModelFacts) -> bool:
        return self.input == "chat" or model.input_kind == "chat"

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]:
        out = [
            Requirement("chat", "the prompt is one user message")
            if self._chat(model)
            else Requirement("text_prompt", "the prompt is raw text"),
            Requirement("sampling", "temperature and max_tokens are set explicitly"),
        ]
        if self.stop and not self._chat(model):
            out.append(Requirement("stop_strings", f"generation stops at {self.stop[0]!r}"))
        return tuple(out)

    def protocol(self, spec: Spec) -> str:
        return self.protocol_text or f"{self.kind} ({spec.reference})"

    def check_ready(self, spec: Spec, allow_unsafe_code: bool) -> Readiness:
        require(spec.name, self.needs)  # a checker that cannot import fails some answers only
        return self.ready(allow_unsafe_code) if self.ready is not None else Readiness()

    def protocol_for(self, spec: Spec, model: ModelFacts, protocol: str) -> str:
        how = "chat: the prompt as one user message" if self._chat(model) else "raw-text prompt"
        stop = f", stop {list(self.stop)}" if self.stop and not self._chat(model) else ""
        vote = (
            f"; maj@k (with repeats) groups the answers by {self.equivalence.about}, the largest "
            "group wins, a tie goes to the group answered first"
            if self.vote
            else ""
        )
        return (
            f"{how}{stop}; {protocol}; the options temperature, max_tokens and repeats replace "
            f"these defaults (recorded with the run){vote}"
        )

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared:
        fields = self.fields(row, config) if self.fields is not None else dict(row)
        data: dict[str, Any] = {"query": spec.prompt.text_of(fields)}
        for key, value in fields.items():
            if key.startswith("shown_"):  # what the prompt showed that the row does not hold
                data[key] = value
        return Prepared(data=data, gold=self.gold(fields))

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]:
        text = sample.data["fewshot"] + sample.data["query"]
        chat = self._chat(model)
        if chat and self.chat_text is not None:
            text = self.chat_text(text)
        prompt = prompt_input(sample, text, chat)
        repeat = sample.data.get("repeat")
        kwargs: dict[str, Any] = {
            "temperature": self._temperature(spec, config),
            "max_tokens": self._max_tokens(spec, config),
        }
        if self.stop and not chat:
            kwargs["stop"] = self.stop
        if isinstance(repeat, int) and kwargs["temperature"] > 0:
            kwargs["seed"] = config.seed + repeat  # one seed a repeat: repeats are not copies
        return {"gen": Request(input=prompt, sampling=Sampling(**kwargs))}

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        text, open_block, channels = self._read(responses)
        verdict = self.check(text, sample)
        if inspect.isawaitable(verdict):  # code execution: await it here, outside any loop
            if _in_loop():
                close = getattr(verdict, "close", None)
                if close is not None:
                    close()
                raise RuntimeError(
                    f"task {spec.name} runs code to score: await score_async inside an event loop"
                )
            verdict = asyncio.run(_awaited(verdict))
        return self._result(sample, verdict, open_block, channels)

    async def score_async(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult:
        text, open_block, channels = self._read(responses)
        verdict = self.check(text, sample)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return self._result(sample, verdict, open_block, channels)

    def _read(self, responses: Mapping[str, Response]) -> tuple[str, bool, dict[str, Any]]:
        choice = first_choice(responses["gen"])
        text, open_block = answer_text(choice.text)
        reason = choice.finish_reason if isinstance(choice.finish_reason, str) else None
        channels: dict[str, Any] = {"text": choice.text, "finish_reason": reason}
        if isinstance(choice.reasoning, str):
            channels["reasoning"] = choice.reasoning
        if calls := tool_calls(choice):
            channels["tool_calls"] = calls
        return text, open_block, channels

    def _result(
        self, sample: Sample, verdict: Verdict, open_block: bool, channels: dict[str, Any]
    ) -> SampleResult:
        """The sample's metrics and channels; ``open_block``: a ``<think>`` never closed."""
        finish = channels["finish_reason"]
        metrics = dict(verdict.metrics)
        metrics["invalid"] = float(verdict.extracted is None)
        metrics["truncated"] = float(open_block or ended_for_length(finish))
        answered = verdict.extracted is not None and verdict.final
        metrics["censored"] = float(censored(finish, answered, open_reasoning=open_block))
        channels = {
            **channels, "extracted": verdict.extracted, "rule": verdict.rule, **verdict.channels,
        }  # fmt: skip
        return SampleResult(
            prediction=verdict.extracted, gold=sample.gold, metrics=metrics, channels=channels
        )

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        kept = list(results)
        out = means(kept)
        out["invalid_rate"] = out.pop("invalid", 0.0)
        out["truncated_rate"] = out.pop("truncated", 0.0)
        if "censored" in out:  # records made before it have none
            out["censored_rate"] = out.pop("censored")
        same = self.equivalent if self.vote else None
        out.update(repeat_figures(kept, self.headline, same))
        return out


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _awaited(value: Awaitable[Verdict]) -> Verdict:
    return await value


def repeat_figures(
    results: Iterable[tuple[Sample, SampleResult]],
    headline: str,
    same: Callable[[str, str], bool] | None = None,
) -> dict[str, Any]:
    """``repeats``, ``pass@k`` and (given ``same``, the task's equivalence) ``maj@k``, for k = 1,
    2, 4, … up to the fewest repeats of an item, when the samples are repeats of their rows;
    nothing otherwise. maj@k votes over the extracted answers (the predictions) in repeat order,
    grouped once per row by ``same`` (``scoring/repeats.py``)."""
    items: dict[str, list[bool]] = {}
    answers: dict[str, list[str | None]] = {}
    repeated = False
    for sample, result in results:
        repeated = repeated or _REPEAT_ID.match(sample.id) is not None
        item = item_of(sample.id)
        items.setdefault(item, []).append(result.metrics.get(headline, 0.0) >= 1.0)
        answer = result.prediction
        answers.setdefault(item, []).append(None if answer is None else str(answer))
    if not repeated or not items:
        return {}
    n = min(len(v) for v in items.values())
    out: dict[str, Any] = {"repeats": n}
    groups = {i: vote_groups(answers[i], same) for i in items} if same is not None else {}
    k = 1
    while k <= n:
        out[f"pass@{k}"] = sum(pass_at_k(len(v), sum(v), k) for v in items.values()) / len(items)
        if same is not None:
            votes = [maj_at_k(answers[i], items[i], k, groups=groups[i]) for i in items]
            out[f"maj@{k}"] = sum(votes) / len(votes)
        k *= 2
    return out
