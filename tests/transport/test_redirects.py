"""No credential header follows a redirect off the origin the caller named."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from sieval.errors import TransportError
from sieval.transport import HttpRequest, HttpTransport

KEY = "sk-test-REDIRECT-KEY-123"
CREDENTIALS = {
    "Authorization": f"Bearer {KEY}",
    "x-api-key": KEY,  # anthropic_messages
    "x-goog-api-key": KEY,  # google_genai
    "api-key": KEY,
    "Cookie": f"session={KEY}",
}


class Recorder:
    """A server that records what it was sent and answers 200, or redirects."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.base = ""
        self.redirect: tuple[int, str] | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append(
            {
                "method": request.method,
                "path": request.path,
                "headers": dict(request.headers),
                "body": body,
            }
        )
        if self.redirect is not None and request.path == "/start":
            status, location = self.redirect
            return web.Response(status=status, headers={"Location": location})
        return web.json_response({"ok": True})


async def _serve(host: str) -> AsyncIterator[tuple[Recorder, TestServer]]:
    rec = Recorder()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", rec.handle)
    srv = TestServer(app, host=host, port=0)
    await srv.start_server()
    rec.base = str(srv.make_url("")).rstrip("/")
    yield rec, srv
    await srv.close()


@pytest.fixture
async def origin() -> AsyncIterator[Recorder]:
    async for rec, _ in _serve("127.0.0.1"):
        yield rec


@pytest.fixture
async def other() -> AsyncIterator[Recorder]:
    async for rec, _ in _serve("127.0.0.1"):
        yield rec


def _request(url: str) -> HttpRequest:
    return HttpRequest(url=url, headers={**CREDENTIALS, "X-Trace": "t1"}, body=b'{"a": 1}')


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_no_credential_follows_a_redirect_to_another_origin(
    status: int, origin: Recorder, other: Recorder, make: Callable[..., HttpTransport]
) -> None:
    # same host, another port: another origin all the same
    origin.redirect = (status, other.base + "/landed")
    reply = await make().send(_request(origin.base + "/start"))
    assert reply.status == 200
    assert [s["path"] for s in origin.seen] == ["/start"]
    assert [s["path"] for s in other.seen] == ["/landed"]
    landed = {k.lower(): v for k, v in other.seen[0]["headers"].items()}
    for name in CREDENTIALS:
        assert name.lower() not in landed, name
    assert KEY not in repr(other.seen)
    assert landed["x-trace"] == "t1"  # only credentials are dropped
    if status in (307, 308):
        assert other.seen[0]["method"] == "POST" and other.seen[0]["body"] == b'{"a": 1}'
    else:
        assert other.seen[0]["method"] == "GET" and other.seen[0]["body"] == b""


async def test_credentials_kept_on_a_same_origin_redirect(
    origin: Recorder, make: Callable[..., HttpTransport]
) -> None:
    origin.redirect = (307, "/landed")
    assert (await make().send(_request(origin.base + "/start"))).status == 200
    landed = {k.lower(): v for k, v in origin.seen[1]["headers"].items()}
    assert landed["x-api-key"] == KEY and landed["x-goog-api-key"] == KEY
    assert landed["authorization"] == f"Bearer {KEY}"


async def test_credentials_not_regained_on_the_way_back(
    origin: Recorder, other: Recorder, make: Callable[..., HttpTransport]
) -> None:
    origin.redirect = (307, other.base + "/start")
    other.redirect = (307, origin.base + "/landed")
    assert (await make().send(_request(origin.base + "/start"))).status == 200
    back = {k.lower() for k in origin.seen[-1]["headers"]}
    assert origin.seen[-1]["path"] == "/landed"
    assert not back & {n.lower() for n in CREDENTIALS}


async def test_redirect_loop_is_a_clear_error(
    origin: Recorder, make: Callable[..., HttpTransport]
) -> None:
    origin.redirect = (307, "/start")
    with pytest.raises(TransportError, match="redirected too many times"):
        await make(retries=0).send(_request(origin.base + "/start"))
    assert len(origin.seen) == 11
