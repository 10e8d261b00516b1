"""A disposable scripted HTTP server on loopback port 0, and transports wired to it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sieval.transport import HttpTransport, Limits, Timeouts

Step = Callable[[web.Request], Awaitable[web.StreamResponse]]


def reply(status: int, body: bytes | str = b"", headers: dict[str, str] | None = None) -> Step:
    """A step answering ``status`` with ``body``."""

    async def step(request: web.Request) -> web.StreamResponse:
        data = body.encode() if isinstance(body, str) else body
        return web.Response(status=status, body=data, headers=headers)

    return step


class Script:
    """The server's behaviour: each request takes the next step (the last one repeats)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.seen: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak = 0
        self.release = asyncio.Event()
        self.base = ""

    def url(self, path: str = "/v1/chat/completions") -> str:
        return self.base + path

    def then(self, *steps: Step) -> Script:
        self.steps.extend(steps)
        return self

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        seen = {"method": request.method, "path": request.path_qs, "body": body}
        self.seen.append({**seen, "headers": dict(request.headers)})
        step = self.steps[min(len(self.seen), len(self.steps)) - 1]
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            return await step(request)
        finally:
            self.in_flight -= 1

    def stall(self, seconds: float = 5.0) -> Step:
        """A step that answers only after teardown (or ``seconds``)."""

        async def step(request: web.Request) -> web.StreamResponse:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), seconds)
            return web.Response(text="late")

        return step


@pytest.fixture
async def server() -> AsyncIterator[Script]:
    script = Script()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", script.handle)
    srv = TestServer(app, host="127.0.0.1", port=0)
    await srv.start_server()
    script.base = str(srv.make_url("")).rstrip("/")
    yield script
    script.release.set()
    await srv.close()


class Sleeps(list[float]):
    """An injected ``sleep`` that records the delay instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def make(sleeps: Sleeps) -> AsyncIterator[Callable[..., HttpTransport]]:
    """Build transports that never really sleep; all are closed at teardown."""
    made: list[HttpTransport] = []

    def build(
        *, retries: int = 2, random: Callable[[], float] = lambda: 0.0, **kw: Any
    ) -> HttpTransport:
        kw.setdefault("limits", Limits(retries=retries))
        kw.setdefault("timeouts", Timeouts(connect=2, read=5, total=10))
        transport = HttpTransport(sleep=sleeps, random=random, **kw)
        made.append(transport)
        return transport

    yield build
    for transport in made:
        await transport.aclose()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
