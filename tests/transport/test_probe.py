"""get_json: the GET probes decoded, failures mapped to the taxonomy."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sieval.errors import ContractViolation, ServerRejected
from sieval.transport import FakeTransport, HttpReply, HttpTransport, get_json, json_reply

from .conftest import Script, reply


async def test_get_json_over_the_wire(server: Script, make: Callable[..., HttpTransport]) -> None:
    server.then(reply(200, b'{"data": [{"id": "tiny"}]}'))
    models = await get_json(make(), server.url("/v1/models"), headers={"X-A": "1"})
    assert models == {"data": [{"id": "tiny"}]}
    assert server.seen[0]["method"] == "GET" and server.seen[0]["headers"]["X-A"] == "1"


async def test_empty_body_is_none() -> None:
    fake = FakeTransport(lambda r: HttpReply(status=200, headers={}, body=b" "))
    assert await get_json(fake, "http://h/health") is None
    assert fake.calls[0].method == "GET" and fake.calls[0].body is None


async def test_4xx_is_server_rejected_and_redacted() -> None:
    key = "sk-test-SECRET123"
    fake = FakeTransport(lambda r: json_reply({"error": f"bad key {key}"}, status=401))
    with pytest.raises(ServerRejected) as info:
        await get_json(fake, "http://h/v1/models", headers={"Authorization": f"Bearer {key}"})
    assert info.value.status == 401 and "bad key [REDACTED]" in info.value.server_message
    assert key not in str(info.value)


async def test_other_status_and_bad_json_break_the_contract() -> None:
    fake = FakeTransport(lambda r: HttpReply(status=302, headers={}, body=b""))
    with pytest.raises(ContractViolation, match="HTTP 302"):
        await get_json(fake, "http://h/version")
    fake = FakeTransport(lambda r: HttpReply(status=200, headers={}, body=b"<html>"))
    with pytest.raises(ContractViolation, match="not JSON") as info:
        await get_json(fake, "http://h/version?key=abc")
    assert "key=abc" not in str(info.value)


async def test_json_too_deep_to_decode_breaks_the_contract() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    fake = FakeTransport(lambda r: HttpReply(status=200, headers={}, body=deep))
    with pytest.raises(ContractViolation, match="nested deeper"):
        await get_json(fake, "http://h/v1/models")
