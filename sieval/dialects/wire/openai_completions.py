"""The OpenAI completions reply (``POST /v1/completions``): its Structs and the SSE fold.

Shared by ``openai_completions`` and ``vllm_native`` (wire reference 1.3-1.5), which read them.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

from ..reply_checks import Checker
from .openai import WireUsage, in_band_error
from .sse import SseEvent

__all__ = ["Choice", "Chunk", "Logprobs", "Reply", "fold"]


class Logprobs(msgspec.Struct):
    tokens: list[str]
    token_logprobs: list[float | None]
    text_offset: list[int]
    top_logprobs: list[dict[str, float] | None] | None = None


class Choice(msgspec.Struct):
    index: int
    text: str
    logprobs: Logprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


C = TypeVar("C", bound=Choice)


class Reply(msgspec.Struct, Generic[C]):
    choices: list[C]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None


class Chunk(msgspec.Struct):
    choices: list[Choice] = []
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(Chunk)


def fold(events: list[SseEvent], check: Checker) -> Reply[Choice]:
    """SSE chunks as one reply: text and logprob lists concatenate per choice index."""
    choices: dict[int, Choice] = {}
    reply: Reply[Choice] = Reply(choices=[])
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
        reply.model = chunk.model or reply.model
        reply.system_fingerprint = chunk.system_fingerprint or reply.system_fingerprint
        reply.usage = chunk.usage or reply.usage
        for delta in chunk.choices:
            current = choices.setdefault(delta.index, Choice(index=delta.index, text=""))
            current.text += delta.text
            current.finish_reason = delta.finish_reason or current.finish_reason
            current.stop_reason = delta.stop_reason or current.stop_reason
            if delta.logprobs is not None:
                if current.logprobs is None:
                    current.logprobs = Logprobs(tokens=[], token_logprobs=[], text_offset=[])
                    current.logprobs.top_logprobs = []
                _extend(current.logprobs, delta.logprobs)
    reply.choices = list(choices.values())
    return reply


def _extend(into: Logprobs, more: Logprobs) -> None:
    into.tokens += more.tokens
    into.token_logprobs += more.token_logprobs
    into.text_offset += more.text_offset
    assert into.top_logprobs is not None
    into.top_logprobs += more.top_logprobs or [None] * len(more.tokens)
