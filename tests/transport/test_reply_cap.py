"""A reply's body is bounded (``Limits.max_reply_bytes``): a gzip bomb, an endless stream, a body
that declares or sends more than the cap fails the send as a ``ContractViolation`` naming the cap
and its setting, at once, never retried, without holding more than about the cap in memory."""

from __future__ import annotations

import gzip
import os
import tracemalloc
import zlib
from collections.abc import Callable

import pytest
from aiohttp import web

from sieval.errors import ConfigError, ContractViolation
from sieval.setting_names import named_as
from sieval.transport import HttpRequest, HttpTransport, Limits

from .conftest import Script, reply

Make = Callable[..., HttpTransport]
MIB = 2**20


def post(url: str, stream: bool = False) -> HttpRequest:
    return HttpRequest(url=url, body=b'{"model": "m"}', stream=stream)


def bomb(mib: int) -> bytes:
    """``mib`` MiB of spaces, gzip-compressed (about 1,000 : 1)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(b" " * MIB) for _ in range(mib)]
    return b"".join([*out, z.flush()])


def gzipped(body: bytes) -> web.Response:
    return web.Response(body=body, headers={"Content-Encoding": "gzip"})


async def test_a_gzip_bomb_stops_at_the_cap(server: Script, make: Make) -> None:
    body = bomb(64)
    assert len(body) < MIB // 8  # 64 MiB once decompressed
    server.then(lambda request: _async(gzipped(body)))
    transport = make(limits=Limits(retries=2, max_reply_bytes=MIB))
    tracemalloc.start()
    try:
        with pytest.raises(ContractViolation) as info:
            await transport.send(post(server.url()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "larger than the cap of 1 MiB" in message and "max_reply_mib: N" in message
    assert info.value.path == "body" and info.value.server is not None
    assert len(server.seen) == 1  # never retried: the same server gives the same reply
    assert peak < 8 * MIB  # about the cap, not the 64 MiB the body decompresses to


async def test_the_compressed_bytes_count_too(server: Script, make: Make) -> None:
    """Random bytes do not compress: their gzip is a little longer than they are, so a body
    just under the cap arrives as more than the cap."""
    raw = os.urandom(MIB - 64)
    body = gzip.compress(raw)
    assert len(body) > MIB
    server.then(lambda request: _async(gzipped(body)))
    with pytest.raises(ContractViolation, match="larger than the cap"):
        await make(limits=Limits(max_reply_bytes=MIB)).send(post(server.url()))
    server.then(lambda request: _async(web.Response(body=raw)))  # plain, it fits
    assert (await make(limits=Limits(max_reply_bytes=MIB)).send(post(server.url()))).body == raw


async def test_a_declared_length_past_the_cap_fails_before_the_body(
    server: Script, make: Make
) -> None:
    async def step(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_length = 10 * MIB
        await resp.prepare(request)
        await resp.write(b"{")
        await server.release.wait()  # the rest never comes: only the header can end this
        return resp

    server.then(step)
    with pytest.raises(ContractViolation, match="its Content-Length is 10,485,760 bytes"):
        await make(limits=Limits(max_reply_bytes=MIB)).send(post(server.url()))


async def test_an_endless_stream_stops_at_the_cap(server: Script, make: Make) -> None:
    async def step(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        event = b'data: {"choices": [{"index": 0, "delta": {"content": "aaaa"}}]}\n\n' * 100
        try:
            while not server.release.is_set():
                await resp.write(event)
        except ConnectionError:
            pass  # the client closed the connection: what it must do
        return resp

    server.then(step)
    with named_as("flags"), pytest.raises(ContractViolation) as info:
        await make(limits=Limits(max_reply_bytes=MIB)).send(post(server.url(), stream=True))
    message = str(info.value)
    assert "its stream had not ended after" in message and "--max-reply-mib N" in message


async def test_a_reply_of_exactly_the_cap_is_read(server: Script, make: Make) -> None:
    server.then(reply(200, b"x" * 1000))
    assert len((await make(limits=Limits(max_reply_bytes=1000)).send(post(server.url()))).body)
    server.then(reply(200, b"x" * 1001))
    with pytest.raises(ContractViolation, match="1,001 bytes"):
        await make(limits=Limits(max_reply_bytes=1000)).send(post(server.url()))


def test_the_cap_is_a_positive_whole_number() -> None:
    assert Limits().max_reply_bytes == 64 * MIB
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="max_reply_bytes"):
            Limits(max_reply_bytes=bad)  # type: ignore[arg-type]


async def _async(response: web.StreamResponse) -> web.StreamResponse:
    return response
