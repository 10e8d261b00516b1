"""The chat reply (``POST /v1/chat/completions``): its Structs and the SSE fold.

Wire truth: ``shared/reference/wire-reference.md`` section 2. Only the fields sieval reads are
declared; ``openai_chat`` reads them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..reply_checks import Checker
from .openai import WireUsage, in_band_error
from .sse import SseEvent

__all__ = ["ChatChoice", "ChatReply", "LogprobEntry", "fold"]


class TopLogprob(msgspec.Struct, gc=False):  # scalars only: the collector need not track them
    token: str
    logprob: float


class LogprobEntry(msgspec.Struct):
    token: str
    logprob: float
    bytes: list[int] | None = None
    top_logprobs: list[TopLogprob] = []


class ChoiceLogprobs(msgspec.Struct):
    content: list[LogprobEntry] | None = None


class FunctionCall(msgspec.Struct):
    name: str
    arguments: str


class WireToolCall(msgspec.Struct):
    id: str
    function: FunctionCall


class WireMessage(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None  # the name before vLLM 0.32 (and other servers)
    tool_calls: list[WireToolCall] | None = None


class ChatChoice(msgspec.Struct):
    index: int
    message: WireMessage
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


class ChatReply(msgspec.Struct):
    choices: list[ChatChoice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None


class _FunctionDelta(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallDelta(msgspec.Struct):
    index: int
    id: str | None = None
    function: _FunctionDelta | None = None


class _Delta(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[_ToolCallDelta] | None = None


class _ChunkChoice(msgspec.Struct):
    index: int
    delta: _Delta | None = None
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


class _Chunk(msgspec.Struct):
    choices: list[_ChunkChoice] = []
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(_Chunk)


def _join(a: str | None, b: str | None) -> str | None:
    return b if a is None else a + (b or "")


def fold(events: list[SseEvent], check: Checker) -> ChatReply:
    """``chat.completion.chunk`` events as one reply: per choice index, text fragments and
    logprob lists concatenate; tool calls gather by their own index (id and name once, argument
    pieces concatenated); usage comes from the last chunk (``choices: []``)."""
    reply = ChatReply(choices=[])
    choices: dict[int, ChatChoice] = {}
    calls: dict[int, dict[int, WireToolCall]] = {}
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
        reply.model = chunk.model or reply.model
        reply.system_fingerprint = chunk.system_fingerprint or reply.system_fingerprint
        reply.usage = chunk.usage or reply.usage
        for part in chunk.choices:
            into = choices.setdefault(part.index, ChatChoice(part.index, WireMessage()))
            into.finish_reason = part.finish_reason or into.finish_reason
            into.stop_reason = (
                part.stop_reason if part.stop_reason is not None else into.stop_reason
            )
            if part.logprobs is not None and part.logprobs.content is not None:
                if into.logprobs is None or into.logprobs.content is None:
                    into.logprobs = ChoiceLogprobs(content=[])
                assert into.logprobs.content is not None
                into.logprobs.content += part.logprobs.content
            d = part.delta
            if d is None:
                continue
            m = into.message
            m.content = _join(m.content, d.content)
            m.refusal = _join(m.refusal, d.refusal)
            m.reasoning = _join(m.reasoning, d.reasoning)
            m.reasoning_content = _join(m.reasoning_content, d.reasoning_content)
            for piece in d.tool_calls or ():
                _add_call(check, calls.setdefault(part.index, {}), piece, part.index)
    for index, gathered in calls.items():
        choices[index].message.tool_calls = [gathered[i] for i in sorted(gathered)]
    reply.choices = list(choices.values())
    return reply


def _add_call(
    check: Checker, calls: dict[int, WireToolCall], piece: _ToolCallDelta, choice: int
) -> None:
    fn = piece.function or _FunctionDelta()
    call = calls.get(piece.index)
    if call is None:
        if piece.id is None or fn.name is None:
            raise check.violation(
                f"choices[{choice}].delta.tool_calls[{piece.index}]",
                f"tool call {piece.index} of choice {choice} starts without its id and name: the "
                "stream is missing its first fragment",
            )
        calls[piece.index] = WireToolCall(piece.id, FunctionCall(fn.name, fn.arguments or ""))
        return
    call.function.arguments += fn.arguments or ""
