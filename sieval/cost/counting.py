"""Prompt tokens, counted as the forecast and a budget count them: exact through a model's
tokenize route where its wire has one (``Endpoint.tokenize``: vLLM's and SGLang's ``/tokenize``,
the route the ``context`` check asks, with the special tokens a server adds to a text prompt),
each distinct prompt asked once, ``TOKENIZE_CONCURRENCY`` at a time; a prompt of token ids is its
length. Elsewhere an estimate, named with its method: the prompt's UTF-8 bytes times a ratio
measured on ``CALIBRATION_PROMPTS`` of the model's prompts through another model's tokenize route
(``calibrated``), else ``bytes / 4``. A chat prompt's estimate counts the text of its messages
(tool calls and results as JSON; images count nothing), not the template the server wraps
around them; a chat prompt sent on a completion wire through the server's chat template
(``--apply-chat-template``: ``chat=True``) is counted exactly as it is sent, its rendering's ids.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET

from ..dialects.vocabulary import tokenized
from ..errors import SievalError
from ..ir.defaults import with_defaults, with_overrides
from ..ir.request import (
    ChatInput,
    CompletionInput,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

if TYPE_CHECKING:
    from ..model import Model
    from ..plan.plan import Plan, PlannedModel, PlannedTask
    from ..tasks.base import ModelFacts, PlannedCall, Sample

__all__ = [
    "CALIBRATION_PROMPTS",
    "ESTIMATE_BYTES_PER_TOKEN",
    "TOKENIZE_CONCURRENCY",
    "PromptCounter",
    "calibrated",
    "calls_of",
    "max_output",
    "prompt_text",
    "requests_of",
]

ESTIMATE_BYTES_PER_TOKEN = 4.0
"""The estimate without any tokenizer to calibrate it: a token per 4 bytes of UTF-8 text."""
CALIBRATION_PROMPTS = 32
"""How many of a model's distinct prompts measure its tokens per byte, when it is calibrated."""
TOKENIZE_CONCURRENCY = 8
"""Tokenize requests in flight at once, per model."""


def prompt_text(request: Request) -> str:
    """The text a request's prompt is made of: a completion's text (and suffix), or a chat's
    text parts, tool calls and results (as JSON); images count nothing."""
    given = request.input
    if isinstance(given, CompletionInput):
        text = given.text if isinstance(given.text, str) else ""
        return text + (given.suffix if isinstance(given.suffix, str) else "")
    parts: list[str] = []
    for message in given.messages:
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append(part.text)
            elif isinstance(part, ToolCallPart):
                parts.append(part.name + msgspec.json.encode(part.arguments).decode())
            elif isinstance(part, ToolResultPart):
                parts.append(msgspec.json.encode(part.result).decode())
    return "\n".join(parts)


def max_output(request: Request) -> int | None:
    """The most output tokens ``request`` may generate (``max_tokens`` times ``n``), or None
    when it sets no maximum."""
    limit = request.sampling.max_tokens
    return None if limit is UNSET else int(limit) * request.sampling.n


class PromptCounter:
    """A model's prompt tokens, each distinct prompt counted once: through ``route`` (a
    tokenize route) where the prompt is text the route can count, else estimated at ``ratio``
    tokens a byte (``how`` names the estimate)."""

    def __init__(
        self,
        route: str | None,
        *,
        ratio: float = 1 / ESTIMATE_BYTES_PER_TOKEN,
        how: str = f"bytes / {ESTIMATE_BYTES_PER_TOKEN:g}",
        chat: bool = False,
    ) -> None:
        self.route = route
        self.chat = chat
        """Chat prompts are rendered by the server's chat template (``Model.render_chat``)."""
        self.ratio = ratio
        self.how = how
        self.tokenized = 0
        self._known: dict[int, int] = {}
        self._pending: dict[int, asyncio.Task[int | None]] = {}
        self._gate: asyncio.Semaphore | None = None
        self._broken = False

    @property
    def method(self) -> str:
        """How this counter counts text prompts, as every view names it."""
        if self.route is not None and not self._broken:
            return f"exact: POST {self.route}"
        return f"estimate: {self.how}"

    def estimate(self, text: str) -> int:
        return round(len(text.encode("utf-8")) * self.ratio)

    def now(self, request: Request) -> tuple[int, bool] | None:
        """The count when no route need be asked (a token prompt, a known or estimated one)."""
        given = request.input
        if isinstance(given, CompletionInput) and isinstance(given.token_ids, tuple):
            return len(given.token_ids), True
        text = prompt_text(request)
        if not self._countable(request):
            return self.estimate(text), False
        known = self._known.get(self._key(request, text))
        return (known, True) if known is not None else None

    async def count(self, request: Request, model: Model) -> tuple[int, bool]:
        """``(prompt tokens, exact)`` of ``request``, asking ``model``'s tokenize route at most
        once per distinct prompt (a prompt the route does not count is estimated)."""
        ready = self.now(request)
        if ready is not None:
            return ready
        text = prompt_text(request)
        key = self._key(request, text)
        task = self._pending.get(key)
        if task is None:
            chat = request.input if isinstance(request.input, ChatInput) else None
            task = asyncio.ensure_future(self._ask(model, text, chat))
            self._pending[key] = task
            task.add_done_callback(lambda done: self._settle(key, done))
        counted = await asyncio.shield(task)
        return (counted, True) if counted is not None else (self.estimate(text), False)

    def _key(self, request: Request, text: str) -> int:
        given = request.input
        return hash(msgspec.json.encode(given)) if isinstance(given, ChatInput) else hash(text)

    def _countable(self, request: Request) -> bool:
        given = request.input
        if isinstance(given, ChatInput):
            return self.chat and not self._broken and not request.tools.functions
        return (
            self.route is not None
            and not self._broken
            and isinstance(given, CompletionInput)
            and isinstance(given.text, str)
            and given.suffix is UNSET
        )

    def _settle(self, key: int, done: asyncio.Task[int | None]) -> None:
        self._pending.pop(key, None)
        if not done.cancelled() and done.exception() is None:
            counted = done.result()
            if counted is not None:
                self._known[key] = counted

    async def _ask(self, model: Model, text: str, chat: ChatInput | None = None) -> int | None:
        """The route's count of ``text`` (special tokens added, as to a text prompt), or of
        ``chat`` through the server's chat template, or None; a route that answers its first
        question with anything but a count is not asked again."""
        if self._gate is None:
            self._gate = asyncio.Semaphore(TOKENIZE_CONCURRENCY)
        async with self._gate:
            if self._broken:
                return None
            if chat is not None:
                try:
                    counted = len(await model.render_chat(chat))
                except SievalError:
                    self._broken = not self.tokenized
                    return None
                self.tokenized += 1
                return counted
            if self.route is None:
                return None
            body = {"model": model.model_id, "prompt": text, "add_special_tokens": True}
            try:
                status, data = await model.fetch(self.route, body)
            except SievalError:
                status, data = 0, None
        tokens = tokenized(data, text) if status == 200 else None
        if tokens is not None:
            self.tokenized += 1
            return len(tokens)
        if not self.tokenized:
            self._broken = True  # no such route here: estimate, rather than ask every prompt
        return None


def requests_of(
    pm: PlannedModel, pt: PlannedTask, facts: ModelFacts, sample: Sample
) -> list[Request]:
    """A sample's requests for this model as planning knows them (a static task's all; a
    conversation's first turn and the requests standing for its later ones), with the model's
    request defaults and overrides applied (as ``Model.call`` applies them: a default
    ``max_tokens`` is the request's maximum)."""
    return [c.request for c in calls_of(pm, pt, facts, sample)]


def calls_of(
    answering: PlannedModel,
    pt: PlannedTask,
    facts: ModelFacts,
    sample: Sample,
    role: str | None = None,
) -> list[PlannedCall]:
    """A sample's planned calls to the model playing ``role`` (None: the evaluated model, whose
    ``facts`` the task builds them for), with ``answering``'s request defaults and overrides
    applied."""
    defaults, overrides = answering.config.request_defaults, answering.config.overrides
    return [
        dataclasses.replace(
            c, request=with_overrides(with_defaults(c.request, defaults), overrides)
        )
        for c in pt.calls(sample, facts, role)
    ]


def _requests(pm: PlannedModel, pt: PlannedTask, facts: ModelFacts) -> Iterator[Request]:
    """Every request of the task for this model, in sample order."""
    for sample in pt.samples:
        yield from requests_of(pm, pt, facts, sample)


async def calibrated(
    pm: PlannedModel,
    plan: Plan,
    facts: ModelFacts,
    models: Mapping[str, Model],
) -> PromptCounter:
    """An estimating counter for a model whose wire has no tokenize route: its tokens per byte
    measured on its first distinct prompts through another model's route (one at the same
    endpoint first), else ``bytes / 4``."""
    others = sorted(
        (p for p in plan.models if p.dialect.endpoint.tokenize and p.label != pm.label),
        key=lambda p: p.config.base_url != pm.config.base_url,
    )
    texts: list[str] = []
    for pt in plan.tasks:
        for request in _requests(pm, pt, facts):
            text = prompt_text(request)
            if text and text not in texts:
                texts.append(text)
            if len(texts) >= CALIBRATION_PROMPTS:
                break
        if len(texts) >= CALIBRATION_PROMPTS:
            break
    for other in others:
        model, route = models[other.label], str(other.dialect.endpoint.tokenize)
        counted = 0
        for text in texts:
            body = {"model": model.model_id, "prompt": text, "add_special_tokens": False}
            try:
                status, data = await model.fetch(route, body)
            except SievalError:
                break
            tokens = tokenized(data, text) if status == 200 else None
            if tokens is None:
                break
            counted += len(tokens)
        else:
            size = sum(len(t.encode("utf-8")) for t in texts)
            if size:
                ratio = counted / size
                return PromptCounter(
                    None,
                    ratio=ratio,
                    how=f"{ratio:.3f} tokens a byte, measured on {len(texts)} prompts through "
                    f"POST {route} of {other.label!r}",
                )
    return PromptCounter(None)
