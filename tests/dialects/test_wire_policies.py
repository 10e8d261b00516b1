"""Per-wire policy hooks, each proven with a wire that needs it, through its one consumer:

* ``Retry.in_band``: an error event inside a stream that began with HTTP 200 is retried as the
  status it stands for (the transport, through ``Model.call``), and read as the wire's error when
  the retries run out;
* ``Retry.overload``: Anthropic's 529 is reported as an overload, not a failed server;
* ``Endpoint.tokenize_body``: the pre-run checks post SGLang's tokenize body to SGLang and
  vLLM's to vLLM (they differ: vLLM's asks for the token texts).

The server is a scripted aiohttp server on loopback port 0 (the transport's retry loop is real);
the replies are recorded ones, with an error event spliced in where a server sends it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from conftest import load_fixture

from dialects import test_anthropic_messages as anthropic
from dialects import test_openai_chat as chat
from sieval.dialects.registry import get_dialect
from sieval.dialects.wire import anthropic as anthropic_wire
from sieval.dialects.wire import openai as openai_wire
from sieval.errors import ServerRejected, TransportError
from sieval.model import Model
from sieval.runner.checks import resolve_token_ids
from sieval.transport import HttpTransport, Limits
from sieval.transport.fake import FakeTransport, json_reply

MODEL = "gemma-3-270m"
Step = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Script:
    """Each request takes the next step (the last one repeats); ``seen`` counts them."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, bytes]] = []
        self.seen = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        self.seen += 1
        status, body = self.steps[min(self.seen, len(self.steps)) - 1]
        kind = "text/event-stream" if body.startswith((b"event:", b"data:")) else "application/json"
        return web.Response(status=status, body=body, content_type=kind)


@pytest.fixture
async def server() -> AsyncIterator[tuple[Script, str]]:
    script = Script()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", script.handle)
    test_server = TestServer(app, host="127.0.0.1", port=0)
    await test_server.start_server()
    try:
        yield script, str(test_server.make_url("")).rstrip("/")
    finally:
        await test_server.close()


async def _no_wait(seconds: float) -> None:
    return None


def model(dialect: str, url: str, retries: int = 2) -> Model:
    transport = HttpTransport(limits=Limits(retries=retries), sleep=_no_wait)
    return Model(dialect=dialect, base_url=url, model_id=MODEL, transport=transport)


def anthropic_error(kind: str) -> bytes:
    """Anthropic's stream cut by an in-band error event after its first events."""
    events = anthropic.events_of(anthropic.SSE)[:4]
    failure = ("error", {"type": "error", "error": {"type": kind, "message": "Overloaded"}})
    return anthropic.sse_of([*events, failure])


# -- an error event inside a 200 stream ----------------------------------------------------------


async def test_an_overloaded_error_event_in_a_200_stream_is_retried(
    server: tuple[Script, str],
) -> None:
    script, url = server
    script.steps = [(200, anthropic_error("overloaded_error")), (200, anthropic.SSE.encode())]
    async with model("anthropic_messages", url) as m:
        call = await m.call(anthropic.CASES["stream"])
    assert call.ok and call.attempts == 2 and script.seen == 2
    assert call.response is not None
    assert call.response.choices[0].text == anthropic.run("stream").choices[0].text


async def test_an_in_band_error_that_outlasts_the_retries_is_the_wires_error(
    server: tuple[Script, str],
) -> None:
    script, url = server
    script.steps = [(200, anthropic_error("overloaded_error"))]
    async with model("anthropic_messages", url, retries=2) as m:
        call = await m.call(anthropic.CASES["stream"])
    assert script.seen == 3 and call.attempts == 3
    assert isinstance(call.error, TransportError) and call.error.status == 529
    assert "in-band overloaded_error" in str(call.error)


async def test_an_in_band_request_error_is_not_retried(server: tuple[Script, str]) -> None:
    script, url = server
    script.steps = [(200, anthropic_error("invalid_request_error"))]
    async with model("anthropic_messages", url) as m:
        call = await m.call(anthropic.CASES["stream"])
    assert script.seen == 1 and isinstance(call.error, ServerRejected)
    assert call.error.status == 400


async def test_an_openai_error_chunk_in_a_200_stream_is_retried(
    server: tuple[Script, str],
) -> None:
    """vLLM's chat stream carries an engine failure as ``data: {"error": {...}}``."""
    script, url = server
    recorded = load_fixture("openai_chat", "stream")["reply_sse"]
    first = recorded.split("\n\n")[0]
    broken = f'{first}\n\ndata: {{"error": {{"message": "engine died", "code": 503}}}}\n\n'
    script.steps = [(200, broken.encode()), (200, recorded.encode())]
    async with model("openai_chat", url) as m:
        call = await m.call(chat.CASES["stream"])
    assert call.ok and call.attempts == 2 and script.seen == 2


def test_the_in_band_hooks_read_only_error_events() -> None:
    assert anthropic_wire.in_band_status(anthropic.SSE.encode()) is None
    assert anthropic_wire.in_band_status(anthropic_error("overloaded_error")) == 529
    assert anthropic_wire.in_band_status(anthropic_error("rate_limit_error")) == 429
    recorded = load_fixture("openai_chat", "stream")["reply_sse"].encode()
    assert openai_wire.in_band_status(recorded) is None
    content = json.dumps({"choices": [{"index": 0, "delta": {"content": '"error"'}}]})
    assert openai_wire.in_band_status(f"data: {content}\n\n".encode()) is None
    assert openai_wire.in_band_status(b'data: {"error": {"message": "x"}}\n\n') == 500
    assert openai_wire.in_band_status(b'{"error": {"message": "x", "code": 503}}') is None


# -- a wire's own overload status -----------------------------------------------------------------


async def test_anthropics_529_is_an_overload_and_a_plain_5xx_is_not(
    server: tuple[Script, str],
) -> None:
    script, url = server
    overloaded = json.dumps({"type": "error", "error": {"type": "overloaded_error"}}).encode()
    script.steps = [(529, overloaded)]
    async with model("anthropic_messages", url, retries=1) as m:
        call = await m.call(anthropic.CASES["plain"])
    assert script.seen == 2 and isinstance(call.error, TransportError)
    assert "the server is overloaded; lower the concurrency" in str(call.error)
    script.seen, script.steps = 0, [(529, overloaded)]
    async with model("openai_chat", url, retries=1) as m:  # 529 means nothing special there
        call = await m.call(chat.CASES["plain"])
    assert script.seen == 2 and "check the server's logs" in str(call.error)
    assert get_dialect("anthropic_messages").retry.overload == frozenset({529})
    assert get_dialect("openai_chat").retry.overload == frozenset()


# -- the tokenize route's body ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (
            "sglang_native",
            load_fixture("sglang_native", "tokenize_letters", "0.5.23")["request"],
        ),
        (
            "vllm_native",
            {
                "model": MODEL,
                "prompt": " A B C D",
                "add_special_tokens": False,
                "return_token_strs": True,
            },
        ),
    ],
)
async def test_the_tokenize_check_posts_the_wires_own_body(
    dialect: str, expected: dict[str, Any]
) -> None:
    sent: list[Any] = []

    def answer(request: Any) -> Any:
        sent.append((request.url, json.loads(request.body)))
        return json_reply({"tokens": [562, 603, 565, 622], "count": 4, "max_model_len": 2048})

    transport = FakeTransport(answer)
    m = Model(dialect=dialect, base_url="http://server", model_id=MODEL, transport=transport)
    assert await resolve_token_ids(m, [" A B C D"]) == {}  # four tokens: not a single one
    assert sent == [("http://server/tokenize", expected)]
