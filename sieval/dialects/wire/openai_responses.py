"""The Responses reply (``POST /v1/responses``): the typed SSE events and their fold, its usage.

Wire reference sections 3.2, 3.3 and 3.5. The reply's Structs are in ``responses_reply.py``;
only the fields sieval reads are declared, extra ones are accepted. Output items and their
content parts are typed on ``type``: an item kind sieval never asked for (a hosted tool call)
is refused.

The fold keeps the terminal event's ``response`` (it carries the whole output) and checks it
against what was streamed: the text deltas of each part must concatenate to the part's text, and
the logprobs that rode on the deltas must be the part's logprobs. A stream whose final response
disagrees with its own deltas is not believed.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...errors import SievalError
from ..channels import UsageAt
from ..reply_checks import Checker
from .openai import in_band_error
from .responses_reply import (
    FunctionCallItem,
    Item,
    Logprob,
    MessageItem,
    OutputText,
    ReasoningItem,
    Refusal,
    Reply,
    ReplyError,
    WireReply,
    typed,
)
from .sse import SseEvent, event_type

__all__ = [
    "TERMINALS",
    "USAGE",
    "FunctionCallItem",
    "Logprob",
    "MessageItem",
    "OutputText",
    "ReasoningItem",
    "Refusal",
    "Reply",
    "WireReply",
    "failure",
    "fold",
    "typed",
]

TERMINALS = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The events that end a Responses stream (vLLM 0.32 only ever sends ``response.completed``,
with ``status: "incomplete"`` inside when ``max_output_tokens`` was reached)."""


# -- streamed events ----------------------------------------------------------------------------


class _TextDelta(msgspec.Struct, tag="response.output_text.delta", tag_field="type"):
    output_index: int
    content_index: int
    delta: str
    logprobs: list[Logprob] | None = None


class _ItemDone(msgspec.Struct, tag="response.output_item.done", tag_field="type"):
    output_index: int
    item: Item


class _Completed(msgspec.Struct, tag="response.completed", tag_field="type"):
    response: Reply


class _Incompleted(msgspec.Struct, tag="response.incomplete", tag_field="type"):
    response: Reply


class _Failed(msgspec.Struct, tag="response.failed", tag_field="type"):
    response: Reply


class _ErrorEvent(msgspec.Struct, tag="error", tag_field="type"):
    code: str | int | None = None
    message: str = ""


Event = _TextDelta | _ItemDone | _Completed | _Incompleted | _Failed | _ErrorEvent
_READ = frozenset({"response.output_text.delta", "response.output_item.done", "error", *TERMINALS})


class _Peek(msgspec.Struct):
    type: str = ""


_event = msgspec.json.Decoder(Event)
_peek = msgspec.json.Decoder(_Peek)


def fold(events: list[SseEvent], check: Checker) -> Reply:
    """The terminal event's response, checked against the deltas streamed before it."""
    texts: dict[tuple[int, int], list[str]] = {}
    streamed: dict[tuple[int, int], list[Logprob]] = {}
    done: dict[int, Item] = {}
    final: Reply | None = None
    for i, event in enumerate(events):
        peek = check.decode(event.data, _peek)
        name = event_type(event)
        if event.event and peek.type and event.event != peek.type:
            raise check.violation(
                f"events[{i}]",
                f"event {i} is named {event.event!r} but its data says type {peek.type!r}",
            )
        if name not in _READ:
            continue
        typed = check.decode(event.data, _event)
        if isinstance(typed, _ErrorEvent):
            raise _error(check, {"code": typed.code, "message": typed.message})
        if isinstance(typed, _TextDelta):
            key = (typed.output_index, typed.content_index)
            texts.setdefault(key, []).append(typed.delta)
            streamed.setdefault(key, []).extend(typed.logprobs or [])
        elif isinstance(typed, _ItemDone):
            done[typed.output_index] = typed.item
        else:
            final = typed.response
    if final is None:  # pragma: no cover - the Terminal framing ends every list on a terminal
        raise check.violation("", "the stream has no terminal event")
    if not final.output and done:
        final.output = [done[i] for i in sorted(done)]
    _agree(check, final, texts, streamed)
    return final


def _agree(
    check: Checker,
    final: Reply,
    texts: dict[tuple[int, int], list[str]],
    streamed: dict[tuple[int, int], list[Logprob]],
) -> None:
    parts = {
        (i, j): part
        for i, item in enumerate(final.output)
        if isinstance(item, MessageItem)
        for j, part in enumerate(item.content)
        if isinstance(part, OutputText)
    }
    for key in sorted(set(parts) | set(texts)):
        where = f"output[{key[0]}].content[{key[1]}]"
        part = parts.get(key)
        sent = "".join(texts.get(key, []))
        if part is None or part.text != sent:
            final_text = part.text if part is not None else None
            raise check.violation(
                where,
                f"the stream's text deltas for {where} give {sent[:60]!r} but its final response "
                f"says {final_text if final_text is None else final_text[:60]!r}: the stream "
                "disagrees with itself",
            )
        if part.logprobs is not None and [(e.token, e.logprob) for e in part.logprobs] != [
            (e.token, e.logprob) for e in streamed.get(key, [])
        ]:
            raise check.violation(
                f"{where}.logprobs",
                f"{where}.logprobs in the final response ({len(part.logprobs)} tokens) are not "
                f"the {len(streamed.get(key, []))} that rode on the text deltas",
            )


# -- errors and usage -------------------------------------------------------------------------


def _error(check: Checker, error: dict[str, Any]) -> SievalError:
    payload = msgspec.json.encode({"error": error})
    return in_band_error(check.dialect, error, payload)


def failure(check: Checker, reply: Reply) -> SievalError:
    """The error a ``status: "failed"`` response reports (its ``error`` object)."""
    error = reply.error or ReplyError(message="the response failed without an error object")
    return _error(check, {"code": error.code, "message": error.message})


USAGE = UsageAt(
    input="input_tokens",
    output="output_tokens",
    cached="input_tokens_details.cached_tokens",
    reasoning="output_tokens_details.reasoning_tokens",
    total="total_tokens",
)
"""Where the Responses usage keeps each count."""
