"""``FakeTransport``: any function becomes a transport, so callers test without sockets.

For example:

    transport = FakeTransport(lambda request: json_reply({"ok": True}))
    reply = await transport.send(request)
    assert transport.calls == [request]
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from sieval.transport.types import HttpReply, HttpRequest

__all__ = ["FakeTransport", "Handler", "json_reply"]

Handler = Callable[[HttpRequest], HttpReply | Awaitable[HttpReply]]
"""A function (plain or async) from a request to a reply; it may raise a sieval error."""


def json_reply(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> HttpReply:
    """An ``HttpReply`` whose body is ``data`` encoded as JSON."""
    merged = {"content-type": "application/json"}
    merged.update({k.lower(): v for k, v in (headers or {}).items()})
    return HttpReply(status=status, headers=merged, body=msgspec.json.encode(data))


class FakeTransport:
    """A transport answering through ``handler`` and recording every request in ``calls``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.calls: list[HttpRequest] = []
        self.closed = False

    async def send(self, request: HttpRequest) -> HttpReply:
        """Record ``request`` and return (or raise) whatever the handler does."""
        self.calls.append(request)
        reply = self.handler(request)
        if inspect.isawaitable(reply):
            return await reply
        return reply

    async def aclose(self) -> None:
        """Mark the transport closed (``closed`` becomes ``True``)."""
        self.closed = True
