"""FakeTransport turns functions into transports and records every call."""

from __future__ import annotations

import pytest

from sieval.errors import TransportError
from sieval.transport import FakeTransport, HttpReply, HttpRequest, Transport, json_reply


def test_json_reply() -> None:
    reply = json_reply({"ok": [1, 2]}, status=201, headers={"X-Id": "7"})
    assert (reply.status, reply.body, reply.attempts) == (201, b'{"ok":[1,2]}', 1)
    assert reply.headers == {"content-type": "application/json", "x-id": "7"}


async def test_sync_handler_records_calls() -> None:
    transport = FakeTransport(lambda request: json_reply({"echo": request.url}))
    assert isinstance(transport, Transport)
    request = HttpRequest(url="http://h/v1/models", method="GET")
    reply = await transport.send(request)
    assert reply.body == b'{"echo":"http://h/v1/models"}'
    assert transport.calls == [request]
    await transport.aclose()
    assert transport.closed


async def test_async_handler() -> None:
    async def handler(request: HttpRequest) -> HttpReply:
        return json_reply(None, status=404)

    transport = FakeTransport(handler)
    assert (await transport.send(HttpRequest(url="http://h/"))).status == 404


async def test_handler_errors_pass_through_and_nothing_sent() -> None:
    def handler(request: HttpRequest) -> HttpReply:
        raise TransportError("down", status=503, attempts=5)

    transport = FakeTransport(handler)
    with pytest.raises(TransportError) as info:
        await transport.send(HttpRequest(url="http://h/"))
    assert info.value.attempts == 5 and len(transport.calls) == 1
    assert FakeTransport(handler).calls == []
