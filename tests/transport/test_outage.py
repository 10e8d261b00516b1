"""A server that answered and then refuses connections (a restart) costs time, not samples."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from sieval.errors import TransportError
from sieval.transport import HttpRequest, HttpTransport, Limits, Timeouts


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Restartable:
    """A loopback server on a fixed port that can be stopped and started again."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1/models"
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        async def ok(_: web.Request) -> web.Response:
            return web.json_response({"ok": True})

        app = web.Application()
        app.router.add_post("/v1/models", ok)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


class _Clock:
    """A fake monotonic clock the injected sleep advances; ``on_sleep`` runs after each sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.on_sleep: Callable[[], Awaitable[None]] | None = None

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            await self.on_sleep()


def _transport(clock: _Clock, **limits: float) -> HttpTransport:
    return HttpTransport(
        limits=Limits(retries=2, **limits),  # type: ignore[arg-type]
        timeouts=Timeouts(connect=2, read=5, total=10),
        sleep=clock.sleep,
        clock=clock,
        random=lambda: 1.0,  # every backoff its full ceiling: 0.5, 1, 2, 4, ...
    )


def _post(url: str) -> HttpRequest:
    return HttpRequest(url=url, body=b"{}")


async def test_a_restart_longer_than_the_retries_is_waited_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, clock = _Restartable(), _Clock()
    await server.start()
    async with _transport(clock) as transport:
        assert (await transport.send(_post(server.url))).attempts == 1
        await server.stop()  # away for 90 s of the fake clock, far past 3 attempts' backoff

        async def back_after_90_s() -> None:
            if clock.now >= 90 and clock.on_sleep is not None:
                clock.on_sleep = None
                await server.start()

        clock.on_sleep = back_after_90_s
        reply = await transport.send(_post(server.url))
        assert reply.status == 200 and reply.attempts > 3  # past retries=2, by the outage rule
        assert 90 <= clock.now < 90 + 30 + 1  # one backoff ceiling after its return, at most
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 2, said  # once when it went away, once when it came back
    assert "refuses connections after answering before" in said[0] and "outage_s=300" in said[0]
    assert "answers again, after" in said[1]
    await server.stop()


async def test_an_outage_longer_than_outage_s_fails_the_request() -> None:
    server, clock = _Restartable(), _Clock()
    await server.start()
    async with _transport(clock, outage_s=20.0) as transport:
        await transport.send(_post(server.url))
        await server.stop()
        with pytest.raises(TransportError, match="could not connect") as info:
            await transport.send(_post(server.url))
        assert info.value.attempts > 3 and 20 <= clock.now < 20 + 30


async def test_a_server_never_reached_gets_only_its_retries() -> None:
    clock = _Clock()
    url = f"http://127.0.0.1:{_free_port()}/v1/models"
    async with _transport(clock) as transport:
        with pytest.raises(TransportError, match="could not connect") as info:
            await transport.send(_post(url))
    assert info.value.attempts == 3 and len(clock.sleeps) == 2  # a wrong URL fails fast


def test_outage_s_must_be_a_positive_number() -> None:
    from sieval.errors import ConfigError

    with pytest.raises(ConfigError, match="outage_s"):
        Limits(outage_s=0)


class _Gateway:
    """A loopback gateway that answers 200 while its upstream is up and 502 (or 503) while it is
    away, as LiteLLM or nginx in front of a vLLM being restarted does."""

    def __init__(self, away_status: int = 502) -> None:
        self.up = True
        self.away_status = away_status
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        async def route(_: web.Request) -> web.Response:
            if self.up:
                return web.json_response({"ok": True})
            return web.json_response({"error": "upstream away"}, status=self.away_status)

        app = web.Application()
        app.router.add_post("/v1/models", route)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/v1/models"

    async def stop(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


async def test_a_gateways_502_while_its_upstream_restarts_is_waited_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gateway, clock = _Gateway(), _Clock()
    await gateway.start()
    async with _transport(clock) as transport:
        assert (await transport.send(_post(gateway.url))).attempts == 1
        gateway.up = False

        async def back_after_90_s() -> None:
            if clock.now >= 90:
                gateway.up = True

        clock.on_sleep = back_after_90_s
        reply = await transport.send(_post(gateway.url))
        assert reply.status == 200 and reply.attempts > 3  # past retries=2, by the outage rule
        assert 90 <= clock.now < 90 + 30 + 1
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 2, said
    assert "answers 502 (a gateway whose upstream is away)" in said[0]
    assert "answers again, after" in said[1]
    await gateway.stop()


async def test_a_503_gets_only_its_retries_even_after_answering() -> None:
    """An overloaded server's 503 is not an outage: the retries bound it, as before."""
    gateway, clock = _Gateway(away_status=503), _Clock()
    await gateway.start()
    async with _transport(clock) as transport:
        await transport.send(_post(gateway.url))
        gateway.up = False
        with pytest.raises(TransportError, match="503") as info:
            await transport.send(_post(gateway.url))
    assert info.value.attempts == 3
    await gateway.stop()


async def test_a_gateway_never_answering_ok_gets_only_its_retries() -> None:
    gateway, clock = _Gateway(), _Clock()
    gateway.up = False
    await gateway.start()
    async with _transport(clock) as transport:
        with pytest.raises(TransportError, match="502") as info:
            await transport.send(_post(gateway.url))
    assert info.value.attempts == 3
    await gateway.stop()


async def test_a_transient_fault_after_a_long_outage_still_has_its_retries() -> None:
    """The waits of an outage are not retries: a 503 right after the upstream is back (seen in
    the restart-under-faults soak, docs/reliability.md) gets the full retries, not what the
    outage's attempts left of them."""
    gateway, clock = _Gateway(), _Clock()
    await gateway.start()
    async with _transport(clock) as transport:
        await transport.send(_post(gateway.url))
        gateway.up = False
        sleeps_after_90_s = 0

        async def back_after_90_s_but_503_twice() -> None:
            nonlocal sleeps_after_90_s
            if clock.now >= 90:
                sleeps_after_90_s += 1
                gateway.away_status = 503  # the upstream is back, overloaded for two attempts
                gateway.up = sleeps_after_90_s > 2

        clock.on_sleep = back_after_90_s_but_503_twice
        reply = await transport.send(_post(gateway.url))
    assert reply.status == 200 and reply.attempts > 3 + 2
    await gateway.stop()


def _script(gateway: _Gateway, clock: _Clock, statuses: list[int], repeat: bool = False) -> None:
    """After each backoff, the gateway's next answer is the next of ``statuses`` (200: up)."""
    queue = list(statuses)

    async def next_answer() -> None:
        status = queue.pop(0)
        if repeat:
            queue.append(status)
        gateway.up, gateway.away_status = status == 200, status

    clock.on_sleep = next_answer


async def test_faults_among_an_outages_waits_each_get_the_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Three faults in one request, more than its retries (2), but never more than 2 in a row
    between the restart's 502s: the request is scored (the restart-under-faults soak); the
    gateway's own 429 does not end the outage, which is said once and its end once."""
    gateway, clock = _Gateway(), _Clock()
    await gateway.start()
    async with _transport(clock) as transport:
        await transport.send(_post(gateway.url))
        gateway.up = False
        _script(gateway, clock, [503, 429, 502, 503, 502, 502, 200])
        reply = await transport.send(_post(gateway.url))
    assert reply.status == 200 and reply.attempts == 8
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 2 and "answers again" in said[1], said
    await gateway.stop()


async def test_a_gateway_alternating_502_and_503_still_fails_after_outage_s() -> None:
    gateway, clock = _Gateway(), _Clock()
    await gateway.start()
    async with _transport(clock, outage_s=20.0) as transport:
        await transport.send(_post(gateway.url))
        gateway.up = False
        _script(gateway, clock, [503, 502], repeat=True)
        with pytest.raises(TransportError, match="50[23]"):
            await transport.send(_post(gateway.url))
    assert 20 <= clock.now < 20 + 2 * 30  # outage_s from the first 502, then the retries at most
    await gateway.stop()
