"""Anthropic's Messages reply: the envelope, content blocks, usage, typed SSE events and their
fold (wire reference 4.3, 4.4, 4.6 and 0.4).

``{"type": "message", "role": "assistant", "content": [blocks], "stop_reason",
"stop_sequence", "usage"}``; blocks are a tagged union on ``type`` (``text``, ``thinking``,
``redacted_thinking``, ``tool_use``): a block type not listed here (a server tool's) does not
decode, so it is a contract violation, never silently skipped. A stream is named events
``message_start`` … ``message_stop`` with ``ping`` anywhere and ``error`` in band; ``fold`` checks
their order (one ``message_start`` first, blocks started in index order, every delta for the open
block and of its kind, every block stopped, a ``message_delta`` before the end) and rebuilds the
non-stream ``Reply``, so both paths share one reader.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import msgspec

from ...errors import ServerRejected, SievalError, TransportError
from ..reply_checks import Checker
from .sse import SseEvent, event_type, parse

__all__ = [
    "Block",
    "RedactedThinkingBlock",
    "Reply",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "WireUsage",
    "blocks",
    "fold",
    "in_band_status",
    "stream_error",
]


# -- the reply ------------------------------------------------------------------------------------


class WireUsage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class TextBlock(msgspec.Struct, tag="text"):
    text: str


class ThinkingBlock(msgspec.Struct, tag="thinking"):
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(msgspec.Struct, tag="redacted_thinking"):
    data: str = ""


class ToolUseBlock(msgspec.Struct, tag="tool_use"):
    id: str
    name: str
    input: dict[str, Any]


Block = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock


class Reply(msgspec.Struct):
    type: Literal["message"]
    role: Literal["assistant"]
    content: list[Block]
    model: str | None = None
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: WireUsage | None = None


def blocks(reply: Reply, kind: type, attribute: str) -> list[Any]:
    """``attribute`` of every content block of ``kind`` in ``reply``, in order."""
    return [getattr(b, attribute) for b in reply.content if isinstance(b, kind)]


# -- in-band and status errors --------------------------------------------------------------------

_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""Anthropic's error types and the statuses they come with (wire reference 0.4); any other type
(vLLM's ``internal_error``) is a server failure."""


class _ErrorBody(msgspec.Struct):
    type: str = ""
    message: str = ""


def stream_error(dialect: str, error: _ErrorBody) -> SievalError:
    """An ``event: error`` after HTTP 200, as the error its status would have given: an
    ``overloaded_error`` (529) or ``api_error`` is a server failure, a request error is a
    rejection."""
    status = _STATUS_OF_TYPE.get(error.type, 500)
    said = f"the stream carried an in-band {error.type or 'untyped'} error event"
    if 400 <= status < 500 and status != 429:
        return ServerRejected(
            f"{dialect}: {said} (as HTTP {status}): {error.message}",
            status=status,
            server_message=error.message,
            dialect=dialect,
            path=error.type or None,
        )
    return TransportError(
        f"{dialect}: {said} (as HTTP {status}): {error.message}", status=status, dialect=dialect
    )


class _ErrorOnly(msgspec.Struct):
    error: _ErrorBody


_error_only = msgspec.json.Decoder(_ErrorOnly)


def in_band_status(body: bytes) -> int | None:
    """The status an ``error`` event of a stream stands for (as ``stream_error`` reads its type:
    529 for ``overloaded_error``), or ``None``: the wire's retry hook (``spec.Retry.in_band``)."""
    if b'"error"' not in body:
        return None
    for event in parse(body):
        if event_type(event) == "error":
            try:
                return _STATUS_OF_TYPE.get(_error_only.decode(event.data).error.type, 500)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                return 500
    return None


# -- stream events --------------------------------------------------------------------------------


class TextDelta(msgspec.Struct, tag="text_delta"):
    text: str


class InputJsonDelta(msgspec.Struct, tag="input_json_delta"):
    partial_json: str


class ThinkingDelta(msgspec.Struct, tag="thinking_delta"):
    thinking: str


class SignatureDelta(msgspec.Struct, tag="signature_delta"):
    signature: str


Delta = TextDelta | InputJsonDelta | ThinkingDelta | SignatureDelta


class _MessageDeltaBody(msgspec.Struct):
    stop_reason: str | None = None
    stop_sequence: str | None = None


class MessageStart(msgspec.Struct, tag="message_start"):
    message: Reply


class ContentBlockStart(msgspec.Struct, tag="content_block_start"):
    index: int
    content_block: Block


class ContentBlockDelta(msgspec.Struct, tag="content_block_delta"):
    index: int
    delta: Delta


class ContentBlockStop(msgspec.Struct, tag="content_block_stop"):
    index: int


class MessageDelta(msgspec.Struct, tag="message_delta"):
    delta: _MessageDeltaBody
    usage: WireUsage | None = None


class MessageStop(msgspec.Struct, tag="message_stop"):
    pass


class Ping(msgspec.Struct, tag="ping"):
    pass


class ErrorEvent(msgspec.Struct, tag="error"):
    error: _ErrorBody


Event = (
    MessageStart
    | ContentBlockStart
    | ContentBlockDelta
    | ContentBlockStop
    | MessageDelta
    | MessageStop
    | Ping
    | ErrorEvent
)

_event = msgspec.json.Decoder(Event)
_TAG: dict[type, str] = {cls: str(cls.__struct_config__.tag) for cls in get_args(Event)}

# the delta kinds each block kind takes (wire reference 4.4)
_DELTAS: dict[type, tuple[type, ...]] = {
    TextBlock: (TextDelta,),
    ThinkingBlock: (ThinkingDelta, SignatureDelta),
    RedactedThinkingBlock: (),
    ToolUseBlock: (InputJsonDelta,),
}


class _Fold:
    """The state of one stream being folded; each event is checked where it stands."""

    def __init__(self, check: Checker) -> None:
        self.check = check
        self.reply: Reply | None = None
        self.open: int | None = None
        self.json: list[str] = []
        self.delta_seen = False

    def started(self, at: str) -> Reply:
        if self.reply is None:
            raise self.check.violation(at, f"{at} comes before message_start")
        return self.reply

    def start(self, at: str, event: ContentBlockStart) -> None:
        reply = self.started(at)
        if self.open is not None:
            raise self.check.violation(
                at, f"{at} starts block {event.index} while block {self.open} is still open"
            )
        if event.index != len(reply.content):
            raise self.check.violation(
                at,
                f"{at} starts block {event.index}, expected block {len(reply.content)}: blocks "
                "must start in index order",
            )
        reply.content.append(event.content_block)
        self.open, self.json = event.index, []

    def add(self, at: str, event: ContentBlockDelta) -> None:
        reply = self.started(at)
        if event.index != self.open:
            raise self.check.violation(
                at, f"{at} is a delta for block {event.index}, which is not open"
            )
        block = reply.content[event.index]
        delta = event.delta
        if not isinstance(delta, _DELTAS[type(block)]):
            raise self.check.violation(
                at, f"{at} carries a {_TAG_OF_DELTA[type(delta)]} for a {_block_tag(block)} block"
            )
        if isinstance(delta, TextDelta) and isinstance(block, TextBlock):
            block.text += delta.text
        elif isinstance(delta, ThinkingDelta) and isinstance(block, ThinkingBlock):
            block.thinking += delta.thinking
        elif isinstance(delta, SignatureDelta) and isinstance(block, ThinkingBlock):
            block.signature = (block.signature or "") + delta.signature
        elif isinstance(delta, InputJsonDelta):
            self.json.append(delta.partial_json)

    def stop(self, at: str, event: ContentBlockStop) -> None:
        reply = self.started(at)
        if event.index != self.open:
            raise self.check.violation(at, f"{at} stops block {event.index}, which is not open")
        block = reply.content[event.index]
        if isinstance(block, ToolUseBlock) and self.json:
            block.input = _tool_input(self.check, at, "".join(self.json))
        self.open = None

    def finish(self, at: str, event: MessageDelta) -> None:
        reply = self.started(at)
        if self.open is not None:
            raise self.check.violation(at, f"{at} arrives while block {self.open} is open")
        self.delta_seen = True
        reply.stop_reason = event.delta.stop_reason
        reply.stop_sequence = event.delta.stop_sequence
        if event.usage is not None:
            reply.usage = _merged(reply.usage, event.usage)


_TAG_OF_DELTA: dict[type, str] = {cls: str(cls.__struct_config__.tag) for cls in get_args(Delta)}


def _block_tag(block: Block) -> str:
    return str(type(block).__struct_config__.tag)


_object = msgspec.json.Decoder(dict[str, Any])


def _tool_input(check: Checker, at: str, text: str) -> dict[str, Any]:
    try:
        return _object.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise check.violation(
            at,
            f"the tool_use input streamed before {at} is not a JSON object ({text[:80]!r}): the "
            "call was cut short and is not believed",
        ) from exc


def _merged(first: WireUsage | None, later: WireUsage) -> WireUsage:
    """message_delta's counts are cumulative: a field it reports replaces message_start's."""
    if first is None:
        return later
    fields = msgspec.structs.asdict(first)
    fields.update({k: v for k, v in msgspec.structs.asdict(later).items() if v is not None})
    return WireUsage(**fields)


def fold(events: list[SseEvent], check: Checker) -> Reply:
    """The named events of one stream as the non-stream reply (order checked as it goes)."""
    state = _Fold(check)
    for i, raw in enumerate(events):
        at = f"events[{i}]"
        event = check.decode(raw.data, _event)
        name = _TAG[type(event)]
        if raw.event is not None and raw.event != name:
            raise check.violation(
                at, f"{at} is named {raw.event!r} but its data is a {name!r} event"
            )
        if isinstance(event, ErrorEvent):
            raise stream_error(check.dialect, event.error)
        if isinstance(event, MessageStart):
            if state.reply is not None:
                raise check.violation(at, f"{at} is a second message_start")
            state.reply = event.message
        elif isinstance(event, ContentBlockStart):
            state.start(at, event)
        elif isinstance(event, ContentBlockDelta):
            state.add(at, event)
        elif isinstance(event, ContentBlockStop):
            state.stop(at, event)
        elif isinstance(event, MessageDelta):
            state.finish(at, event)
        elif isinstance(event, MessageStop):
            state.started(at)
    reply = state.started("the stream")
    if not state.delta_seen:
        raise check.violation(
            "message_delta",
            "the stream ended without a message_delta: its stop_reason and usage are missing",
        )
    return reply
