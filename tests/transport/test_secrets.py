"""A key given to the transport never shows in the wire log, errors or log records."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from aiohttp import web

from sieval.errors import TransportError
from sieval.transport import HttpRequest, HttpTransport, Limits, WireLog

from .conftest import Script

SECRET = "sk-test-SECRET123"


async def test_secret_never_leaks(
    server: Script,
    make: Callable[..., HttpTransport],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def echo(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        auth = request.headers["Authorization"]
        return web.Response(status=500, text=f"bad key {auth}; you sent {body.decode()}")

    server.then(echo)
    wire = tmp_path / "logs" / "wire.jsonl"
    transport = make(limits=Limits(retries=2), wire_log=WireLog(wire))
    body = {"model": "tiny-llm", "messages": [{"role": "user", "content": f"hi {SECRET} there"}]}
    request = HttpRequest(
        url=server.url(f"/v1/chat/completions?key={SECRET}&mode=fast"),
        headers={"Authorization": f"Bearer {SECRET}", "X-Trace": "abc"},
        body=msgspec.json.encode(body),
    )
    caplog.set_level(logging.DEBUG, logger="sieval.transport")
    with pytest.raises(TransportError) as info:
        await transport.send(request)

    # the server really got the key (redaction is for records only)
    assert server.seen[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET in server.seen[0]["body"].decode()

    exc = info.value
    for text in (str(exc), repr(exc), exc.message, json.dumps(exc.to_record())):
        assert SECRET not in text
        assert "SECRET" not in text
    assert "mode=fast" in str(exc) and "[REDACTED]" in str(exc)

    retries = [r for r in caplog.records if r.name == "sieval.transport"]
    assert len(retries) == 2 and all(r.levelno == logging.INFO for r in retries)
    for record in retries:
        assert SECRET not in record.getMessage()
        assert "/v1/chat/completions" in record.getMessage()

    text = wire.read_text()
    assert SECRET not in text and "SECRET" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["attempt"] for line in lines] == [1, 2, 3]
    assert len({line["exchange_id"] for line in lines}) == 1
    first = lines[0]
    assert first["request_headers"]["Authorization"] == "[REDACTED]"
    assert first["request_headers"]["X-Trace"] == "abc"
    assert first["request_body"]["model"] == "tiny-llm"  # stored as JSON, not a string
    assert first["request_body"]["messages"][0]["content"] == "hi [REDACTED] there"
    assert first["url"].endswith("?key=[REDACTED]&mode=fast")
    assert first["status"] == 500 and "you sent" in first["reply_body"]
    assert first["method"] == "POST" and first["error"] is None
    assert set(first["timings"]) == {"first_byte_s", "total_s"}


async def test_secret_not_in_connection_errors(
    closed_port: int,
    make: Callable[..., HttpTransport],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = tmp_path / "wire.jsonl"
    transport = make(retries=1, wire_log=wire)
    request = HttpRequest(
        url=f"http://127.0.0.1:{closed_port}/v1/models?api_key={SECRET}",
        headers={"x-api-key": SECRET},
    )
    caplog.set_level(logging.INFO, logger="sieval.transport")
    with pytest.raises(TransportError) as info:
        await transport.send(request)
    assert SECRET not in str(info.value) + repr(info.value)
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    lines = [json.loads(line) for line in wire.read_text().splitlines()]
    assert len(lines) == 2 and lines[0]["status"] is None
    assert "ClientConnectorError" in lines[0]["error"]
    assert SECRET not in wire.read_text()
