"""HttpTransport against a real loopback server: retries, refusals, timeouts, limits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

import msgspec
import pytest
from aiohttp import web

from sieval.errors import ConfigError, TransportError, TransportTimeout
from sieval.setting_names import named_as
from sieval.transport import (
    HttpRequest,
    HttpTransport,
    Limits,
    Pool,
    Timeouts,
    Transport,
    WireLog,
)

from .conftest import Script, Sleeps, reply

Make = Callable[..., HttpTransport]


def post(url: str, **kw: object) -> HttpRequest:
    return HttpRequest(url=url, body=b'{"model": "m"}', **kw)  # type: ignore[arg-type]


async def test_429_honours_retry_after_then_succeeds(
    server: Script, make: Make, sleeps: Sleeps
) -> None:
    server.then(reply(429, "slow down", {"Retry-After": "2"}), reply(200, b'{"ok": true}'))
    result = await make().send(post(server.url()))
    assert (result.status, result.body, result.attempts) == (200, b'{"ok": true}', 2)
    assert len(sleeps) == 1 and sleeps[0] >= 2.0  # random() is 0: only Retry-After can wait
    assert len(server.seen) == 2


async def test_retry_after_is_capped(server: Script, make: Make, sleeps: Sleeps) -> None:
    server.then(reply(429, "", {"Retry-After": "9999"}), reply(200))
    limits = Limits(retries=1, retry_after_max_s=7)
    assert (await make(limits=limits).send(post(server.url()))).status == 200
    assert sleeps == [7.0]


async def test_500_exhausts_retries(server: Script, make: Make) -> None:
    server.then(reply(500, "engine " + "exploded " * 100))
    with pytest.raises(TransportError) as info:
        await make(retries=2).send(post(server.url()))
    exc = info.value
    assert not isinstance(exc, TransportTimeout)
    assert (exc.status, exc.attempts, exc.error_class) == (500, 3, "TransportError")
    assert len(server.seen) == 3
    message = str(exc)
    assert server.url() in message and "HTTP 500" in message and "3 attempts" in message
    assert "engine exploded" in message
    quoted = message.split("(body: ")[1].split("); ")[0]
    assert len(eval(quoted)) <= 300  # the excerpt is short
    assert exc.server == server.base and exc.to_record()["status"] == 500


async def test_429_exhausted_names_concurrency(server: Script, make: Make) -> None:
    server.then(reply(429, "rate limited"))
    # the hint names the config keys a user can set, never the library's Limits fields
    with pytest.raises(
        TransportError,
        match=r"lower the concurrency \(concurrency_limit: N\) or raise the retries \(retries: N\)",
    ) as info:
        await make(retries=0).send(post(server.url()))
    assert (info.value.status, info.value.attempts, len(server.seen)) == (429, 1, 1)
    assert "1 attempt " in str(info.value)


async def test_503_then_200(server: Script, make: Make, sleeps: Sleeps) -> None:
    server.then(reply(503, "warming up"), reply(200, b"{}"))
    result = await make().send(post(server.url()))
    assert (result.status, result.attempts, len(server.seen), len(sleeps)) == (200, 2, 2, 1)


@pytest.mark.parametrize("status", [400, 401, 404, 413, 422])
async def test_4xx_is_returned_never_retried(
    server: Script, make: Make, sleeps: Sleeps, status: int
) -> None:
    server.then(reply(status, b'{"error": {"message": "no such model"}}'), reply(200))
    result = await make(retries=4).send(post(server.url()))
    assert result.status == status
    assert result.body == b'{"error": {"message": "no such model"}}'
    assert (result.attempts, len(server.seen), sleeps) == (1, 1, [])


async def test_connection_refused_is_retried(closed_port: int, make: Make, sleeps: Sleeps) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1/models"
    with pytest.raises(TransportError, match="could not connect") as info:
        await make(retries=3).send(post(url))
    assert not isinstance(info.value, TransportTimeout)
    assert (info.value.attempts, info.value.status, len(sleeps)) == (4, None, 3)
    assert isinstance(info.value.__cause__, OSError)


async def test_read_timeout(server: Script, make: Make) -> None:
    server.then(server.stall())
    transport = make(retries=1, timeouts=Timeouts(read=0.2, total=10))
    with pytest.raises(TransportTimeout, match=r"sent no byte for 0\.2 s") as info:
        await transport.send(post(server.url()))
    assert "raise the timeout (timeout_s: N)" in str(info.value)
    assert "Timeouts." not in str(info.value)  # a setting the user has, in the user's words
    assert isinstance(info.value, TimeoutError)
    assert isinstance(info.value, TransportError)
    assert (info.value.attempts, len(server.seen)) == (2, 2)


async def test_total_timeout_and_per_call_override(server: Script, make: Make) -> None:
    server.then(server.stall())
    transport = make(retries=0, timeouts=Timeouts(read=60, total=60))
    request = post(server.url(), timeout=Timeouts(read=60, total=0.2))
    with pytest.raises(TransportTimeout, match=r"longer than the timeout of 0\.2 s") as info:
        await asyncio.wait_for(transport.send(request), 5)
    assert "raise the timeout (timeout_s: N)" in str(info.value)
    with named_as("flags"), pytest.raises(TransportTimeout) as info:
        await asyncio.wait_for(transport.send(request), 5)
    assert "raise the timeout (--timeout N)" in str(info.value)


@pytest.fixture
async def cut_short() -> AsyncIterator[tuple[str, list[int]]]:
    """A raw server that sends headers and part of the body, then drops the socket."""
    hits: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hits.append(1)
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{"partial": ')
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1/completions", hits
    srv.close()
    await srv.wait_closed()


async def test_reset_mid_body(cut_short: tuple[str, list[int]], make: Make) -> None:
    url, hits = cut_short
    with pytest.raises(TransportError, match="cut short") as info:
        await make(retries=2).send(post(url))
    assert not isinstance(info.value, TransportTimeout)
    assert (info.value.attempts, len(hits)) == (3, 3)


async def test_garbage_reply_is_not_retried(make: Make) -> None:
    hits: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hits.append(1)
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"GARBAGE\r\n\r\n")
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    try:
        with pytest.raises(TransportError, match="not valid HTTP") as info:
            await make(retries=3).send(post(f"http://127.0.0.1:{port}/x?key=abc"))
    finally:
        srv.close()
        await srv.wait_closed()
    assert (info.value.attempts, len(hits)) == (1, 1)
    assert "key=abc" not in str(info.value)


async def test_backoff_is_exponential_and_capped(
    server: Script, make: Make, sleeps: Sleeps
) -> None:
    server.then(reply(502, "bad gateway"))
    limits = Limits(retries=5, backoff_base_s=0.5, backoff_max_s=3)
    with pytest.raises(TransportError):
        await make(limits=limits, random=lambda: 0.999).send(post(server.url()))
    assert sleeps == pytest.approx([0.4995, 0.999, 1.998, 2.997, 2.997])


async def test_backoff_jitter_is_drawn_from_random(
    server: Script, make: Make, sleeps: Sleeps
) -> None:
    draws = iter([0.25, 0.75])
    server.then(reply(500), reply(500), reply(200))
    limits = Limits(retries=2, backoff_base_s=2, backoff_max_s=30)
    await make(limits=limits, random=lambda: next(draws)).send(post(server.url()))
    assert sleeps == [0.5, 3.0]


async def test_concurrency_is_limited_per_endpoint(server: Script, make: Make) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.05)
        return web.Response(text="{}")

    server.then(slow)
    transport = make(limits=Limits(concurrency=2, retries=0))
    replies = await asyncio.gather(*(transport.send(post(server.url())) for _ in range(6)))
    assert [r.status for r in replies] == [200] * 6
    assert server.peak == 2


async def test_transports_on_one_pool_share_its_connections(server: Script, make: Make) -> None:
    """Two models' transports on one shared pool: the server sees at most the pool's size at
    once, each transport keeps its own retries, and closing one leaves the pool to its owner."""

    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.05)
        return web.Response(text="{}")

    server.then(slow)
    pool = Pool(3)
    first = make(limits=Limits(concurrency=8, retries=0), pool=pool)
    second = make(limits=Limits(concurrency=8, retries=1), pool=pool)
    replies = await asyncio.gather(
        *(t.send(post(server.url())) for t in (first, second) for _ in range(6))
    )
    assert [r.status for r in replies] == [200] * 12
    assert server.peak == 3  # not 8, not 2 x 3
    assert first.limits.retries != second.limits.retries
    await first.aclose()
    assert pool.opened and (await second.send(post(server.url()))).status == 200
    await pool.aclose()
    assert not pool.opened


async def test_waiting_for_a_slot_is_not_charged_to_total(server: Script, make: Make) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(0.25)
        return web.Response(text="{}")

    server.then(slow)
    transport = make(limits=Limits(concurrency=1, retries=0), timeouts=Timeouts(total=0.4))
    replies = await asyncio.gather(*(transport.send(post(server.url())) for _ in range(3)))
    assert [r.status for r in replies] == [200] * 3
    assert server.peak == 1


async def test_reply_shape_and_default_headers(server: Script, make: Make) -> None:
    async def headers(request: web.Request) -> web.StreamResponse:
        response = web.Response(body=b"data: {}\n\n", content_type="text/event-stream")
        response.headers.add("X-Multi", "a")
        response.headers.add("x-multi", "b")
        return response

    server.then(headers)
    transport = make()
    result = await transport.send(post(server.url(), stream=True))
    assert result.headers["x-multi"] == "a, b"
    assert all(name == name.lower() for name in result.headers)
    assert result.body == b"data: {}\n\n"
    t = result.timings
    assert 0 <= t.first_byte_s <= t.total_s <= t.wall_s and t.started > 1.6e9
    assert result.exchange_id and len(result.exchange_id) == 32
    sent = server.seen[0]["headers"]
    assert sent["Content-Type"] == "application/json"
    assert sent["Accept"] == "text/event-stream"
    assert sent["User-Agent"] == "sieval"


async def test_streamed_reply_is_read_to_the_end(server: Script, make: Make) -> None:
    async def sse(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for i in range(3):
            await response.write(b'data: {"i": %d}\n\n' % i)
            await asyncio.sleep(0.05)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    server.then(sse)
    result = await make().send(post(server.url(), stream=True))
    assert result.body.count(b"data: ") == 4 and result.body.endswith(b"[DONE]\n\n")
    assert result.timings.total_s - result.timings.first_byte_s >= 0.1


async def test_get_without_body_and_caller_headers_win(server: Script, make: Make) -> None:
    server.then(reply(204))
    request = HttpRequest(method="GET", url=server.url("/health"), headers={"accept": "text/plain"})
    result = await make().send(request)
    assert (result.status, result.body) == (204, b"")
    assert result.timings.first_byte_s <= result.timings.total_s
    seen = server.seen[0]
    assert (seen["method"], seen["path"], seen["body"]) == ("GET", "/health", b"")
    assert seen["headers"]["Accept"] == "text/plain"
    assert "Content-Type" not in seen["headers"]


async def test_one_session_for_the_lifetime(server: Script, tmp_path: object) -> None:
    server.then(reply(200))
    async with HttpTransport(wire_log=f"{tmp_path}/wire.jsonl") as transport:
        assert isinstance(transport, Transport)
        assert isinstance(transport.wire_log, WireLog)
        await transport.send(post(server.url()))
        session = transport.pool.session()
        await transport.send(post(server.url()))
        assert transport.pool.session() is session and not session.closed
    assert not transport.pool.opened and session.closed
    await transport.aclose()  # closing twice is harmless
    with pytest.raises(RuntimeError, match="closed"):
        await transport.send(post(server.url()))


async def test_unknown_exceptions_pass_through(make: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    transport = make()

    async def boom(exchange: object) -> None:
        raise KeyError("not a transport failure")

    monkeypatch.setattr(transport, "_attempt", boom)
    with pytest.raises(KeyError):
        await transport.send(post("http://127.0.0.1:9/"))


def test_request_url_must_be_absolute() -> None:
    with pytest.raises(ConfigError, match="absolute") as info:
        HttpRequest(url="/v1/models")
    assert info.value.path == "HttpRequest.url"
    assert msgspec.structs.replace(HttpRequest(url="HTTPS://h/"), method="GET").method == "GET"


async def test_a_long_retry_after_is_cut_to_the_default_cap_and_said(
    server: Script, make: Make, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sieval.transport")
    hour = {"Retry-After": "3600"}
    server.then(reply(429, "", hour), reply(503, "", hour), reply(200))
    assert (await make(limits=Limits(retries=2)).send(post(server.url()))).status == 200
    assert Limits().retry_after_max_s == 60.0
    assert sleeps == [60.0, 60.0]
    said = [r for r in caplog.records if "Retry-After" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.WARNING, logging.INFO]  # warned once
    message = said[0].getMessage()
    assert "3600 s" in message and "cap of 60 s" in message and "retry_after_max_s" in message
    assert server.url() in message
