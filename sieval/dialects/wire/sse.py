"""Server-sent events: split a streamed body into events, and check that it ended properly.

Three framings are seen on the seven wires (wire reference 0.1):

* ``DATA_DONE``: data-only events ending with ``data: [DONE]`` (OpenAI completions and chat,
  vLLM, SGLang); a body without it was cut short;
* ``Terminal(names)``: typed events (``event: name`` and a ``type`` in the data) ending with one
  of ``names`` (Responses: ``response.completed``; Anthropic: ``message_stop``);
* ``END_OF_BODY``: events until the body ends (Google's ``alt=sse``); completeness is the fold's
  business (a final ``finishReason``).

A streamed reply has sent HTTP 200 before it starts, so errors arrive in band; the folds turn them
into the same errors a non-stream reply gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import msgspec

from ..reply_checks import Checker

__all__ = ["DATA_DONE", "END_OF_BODY", "SseEvent", "Terminal", "event_type", "parse"]


class SseEvent(NamedTuple):
    event: str | None
    """The ``event:`` name, when the wire sends one."""
    data: bytes
    """The ``data:`` lines joined by newlines."""


def parse(body: bytes) -> list[SseEvent]:
    """Every event of an SSE body, in order (comments and empty blocks skipped)."""
    out: list[SseEvent] = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        event: str | None = None
        data: list[bytes] = []
        for line in block.split(b"\n"):
            if line.startswith(b"data:"):
                data.append(line[5:].strip())
            elif line.startswith(b"event:"):
                event = line[6:].strip().decode("utf-8", "replace")
        if data:
            out.append(SseEvent(event, b"\n".join(data)))
    return out


@dataclass(frozen=True)
class _DataDone:
    def events(self, body: bytes, check: Checker) -> list[SseEvent]:
        events = parse(body)
        for i, event in enumerate(events):
            if event.data == b"[DONE]":
                return events[:i]
        raise check.violation(
            "",
            f"the stream ended without 'data: [DONE]' after {len(events)} events: the reply is "
            "truncated",
        )


class _Typed(msgspec.Struct):
    type: str = ""


_typed = msgspec.json.Decoder(_Typed)


def event_type(event: SseEvent) -> str:
    """The event's name: its ``event:`` line, else the ``type`` field of its data."""
    if event.event:
        return event.event
    try:
        return _typed.decode(event.data).type
    except (msgspec.DecodeError, RecursionError):
        return ""  # no type to read: the fold refuses the event


@dataclass(frozen=True)
class Terminal:
    """Typed events; the stream must end with one of ``names`` (or an in-band error event,
    which the fold turns into the error it reports)."""

    names: frozenset[str]
    errors: frozenset[str] = frozenset({"error"})

    def events(self, body: bytes, check: Checker) -> list[SseEvent]:
        events = parse(body)
        for i, event in enumerate(events):
            if event_type(event) in self.names | self.errors:
                return events[: i + 1]
        raise check.violation(
            "",
            f"the stream ended without a {' or '.join(sorted(self.names))} event after "
            f"{len(events)} events: the reply is truncated",
        )


@dataclass(frozen=True)
class _EndOfBody:
    def events(self, body: bytes, check: Checker) -> list[SseEvent]:
        return parse(body)


DATA_DONE = _DataDone()
END_OF_BODY = _EndOfBody()
