"""The reference server's /v1/messages against the replies recorded from vLLM 0.32.0.

Every recorded body (model replaced) is sent to the reference server: same status, the same keys
at every level of the reply (and of each named stream event), the SDK parses what comes back. Auth
is vLLM's (Bearer only), shown with both header sets; the dialect lifts what the reference sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pydantic
import pytest
from aiohttp import web
from anthropic.types import Message as SdkMessage
from anthropic.types import MessageTokensCount, RawMessageStreamEvent

from sieval.dialects.anthropic_messages import DIALECT
from sieval.dialects.table import lift, lower
from sieval.dialects.vocabulary import BEARER
from sieval.dialects.wire.sse import parse
from sieval.errors import ServerRejected, TransportError
from sieval.ir.request import (
    ChatInput,
    FunctionTool,
    Message,
    Request,
    Sampling,
    Scheduling,
    TextPart,
    Tools,
)
from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.transport import Limits

from .test_fixture_structure import diff, shape

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic_messages" / "0.32.0"
FIXTURES = sorted(FOLDER.glob("*.json"))
STREAM_ADAPTER = pydantic.TypeAdapter(RawMessageStreamEvent)


def test_the_fixture_folder_exists() -> None:
    assert len(FIXTURES) >= 20, (
        f"record them: scripts/record_anthropic_messages_fixtures.py ({FOLDER})"
    )


async def send(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    route: str,
    body: Any,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    async with client.post(server.url + route, json=body, headers=headers) as r:
        return r.status, await r.text()


def events(text: str) -> list[tuple[str | None, Any]]:
    return [(e.event, json.loads(e.data)) for e in parse(text.encode())]


def first_of_each(stream: list[tuple[str | None, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, data in stream:
        key = f"{name}:{data.get('delta', {}).get('type', '')}" if name else ""
        out.setdefault(key, data)
    return out


def _stop_sequence_agrees(want: Any, got: Any) -> Any:
    """vLLM writes ``stop_sequence`` only when a stop string matched; the reference model may stop
    elsewhere, so the key is compared only when both stopped the same way."""
    if (
        isinstance(want, dict)
        and isinstance(got, dict)
        and want.get("stop_reason") != got.get("stop_reason")
    ):
        want = {k: v for k, v in want.items() if k != "stop_sequence"}
        got = {k: v for k, v in got.items() if k != "stop_sequence"}
    return want, got


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
async def test_fixture_matches_reference(
    client: aiohttp.ClientSession, server: ReferenceServer, path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    body = dict(fixture["request"])
    if fixture["status"] != 404:
        body["model"] = server.model_name
    headers = {k: v for k, v in fixture["headers"].items() if k != "x-api-key"}
    status, text = await send(client, server, fixture["route"], body, headers)
    assert status == fixture["status"], text
    if "reply_sse" in fixture:
        want, got = events(fixture["reply_sse"]), events(text)
        assert (
            [n for n, _ in want][:2]
            == [n for n, _ in got][:2]
            == [
                "message_start",
                "content_block_start",
            ]
        )
        assert [n for n, _ in want][-2:] == [n for n, _ in got][-2:]
        mine = first_of_each(got)
        problems = []
        for key, event in first_of_each(want).items():
            assert key in mine, f"the reference never sends {key}"
            problems += diff(shape(event), shape(mine[key]), f"${key}")
        for _, data in got:
            STREAM_ADAPTER.validate_python(data)
    else:
        want, got = _stop_sequence_agrees(fixture["reply"], json.loads(text))
        problems = diff(shape(want), shape(got))
        if status == 200 and fixture["route"] == "/v1/messages":
            assert SdkMessage.model_validate(got).type == "message"
        elif status == 200:
            assert MessageTokensCount.model_validate(got).input_tokens > 0
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_shape_comparison_sees_a_missing_key() -> None:
    recorded = json.loads((FOLDER / "plain.json").read_text())["reply"]
    broken = {k: v for k, v in recorded.items() if k != "usage"}
    assert diff(shape(recorded), shape(broken)) == ["$: missing keys ['usage']"]


def chat(text: str, **groups: Any) -> Request:
    return Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),)),
        **groups,
    )


async def test_a_matched_stop_sequence_is_reported(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    lowered = lower(
        DIALECT,
        chat(
            "Continue the list: 1, 2, 3,",
            sampling=Sampling(temperature=0.0, max_tokens=20, stop=(":",)),
        ),
        server.model_name,
    )
    status, text = await send(client, server, lowered.path, lowered.body)
    reply = json.loads(text)
    assert (status, reply["stop_reason"], reply["stop_sequence"]) == (200, "stop_sequence", ":")
    choice = lift(DIALECT, lowered, status, {}, text.encode()).choices[0]
    assert choice.stop_reason == ":" and ":" not in choice.text


async def test_count_tokens_counts_the_prompt_of_the_same_messages(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    lowered = lower(DIALECT, chat("Hi there.", sampling=Sampling(max_tokens=2)), server.model_name)
    _, text = await send(client, server, lowered.path, lowered.body)
    counted = {k: v for k, v in lowered.body.items() if k in ("model", "messages")}
    status, count = await send(client, server, "/v1/messages/count_tokens", counted)
    assert status == 200
    assert json.loads(count)["input_tokens"] == json.loads(text)["usage"]["input_tokens"]


async def test_a_named_tool_choice_calls_that_tool(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    tools = [
        {"name": "a", "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        {"name": "b", "input_schema": {"type": "object", "properties": {"y": {"type": "boolean"}}}},
    ]
    body = {
        "model": server.model_name,
        "max_tokens": 30,
        "messages": [{"role": "user", "content": "go"}],
        "tools": tools,
        "tool_choice": {"type": "tool", "name": "b"},
    }
    status, text = await send(client, server, "/v1/messages", body)
    (block,) = json.loads(text)["content"]
    assert status == 200 and block["name"] == "b" and isinstance(block["input"]["y"], bool)


async def test_the_folded_stream_is_the_non_stream_reply(server: ReferenceServer) -> None:
    tool = FunctionTool(
        name="f", parameters={"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    base = {"sampling": Sampling(temperature=0.0, max_tokens=24)}
    requests = [
        chat("Once upon a time", **base),
        chat("Once upon a time", **base, scheduling=Scheduling(stream=True)),
        chat("call f", **base, tools=Tools(functions=(tool,), choice="required")),
        chat(
            "call f",
            **base,
            tools=Tools(functions=(tool,), choice="required"),
            scheduling=Scheduling(stream=True),
        ),
    ]
    async with Model(dialect=DIALECT, base_url=server.url, model_id=server.model_name) as model:
        text, text_stream, call, call_stream = [await model.run(r) for r in requests]
    assert text.choices == text_stream.choices and text.usage == text_stream.usage
    assert call.choices[0].tool_calls[0].arguments == call_stream.choices[0].tool_calls[0].arguments
    assert call.choices[0].finish_reason == call_stream.choices[0].finish_reason == "tool_use"


# -- auth: vLLM's route reads only Authorization: Bearer ------------------------------------------


async def test_a_keyed_server_takes_bearer_and_refuses_x_api_key(
    client: aiohttp.ClientSession,
) -> None:
    body = {
        "model": "sieval-reference",
        "max_tokens": 2,
        "messages": [{"role": "user", "content": "hi"}],
    }
    async with ReferenceServer(port=0, api_key="sk-ref-key") as keyed:
        anthropic_headers = DIALECT.auth.headers("sk-ref-key")
        assert set(anthropic_headers) == {"x-api-key", "anthropic-version"}
        status, text = await send(client, keyed, "/v1/messages", body, anthropic_headers)
        assert (status, json.loads(text)) == (401, {"error": "Unauthorized"})
        bearer = DIALECT.auth.with_scheme("bearer").headers("sk-ref-key")
        assert bearer == {"anthropic-version": "2023-06-01", "Authorization": "Bearer sk-ref-key"}
        status, _ = await send(client, keyed, "/v1/messages", body, bearer)
        assert status == 200
        request = chat("hi", sampling=Sampling(max_tokens=2))
        async with Model(
            dialect=DIALECT, base_url=keyed.url, model_id=keyed.model_name, api_key="sk-ref-key"
        ) as default_auth:
            call = await default_auth.call(request)
        assert isinstance(call.error, ServerRejected) and call.error.status == 401
        assert "sk-ref-key" not in str(call.error)
        async with Model(
            dialect=DIALECT,
            base_url=keyed.url,
            model_id=keyed.model_name,
            api_key="sk-ref-key",
            auth=BEARER,
        ) as bearer_auth:
            assert (await bearer_auth.run(request)).choices[0].text


async def test_a_keyless_server_ignores_the_x_api_key(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {
        "model": server.model_name,
        "max_tokens": 2,
        "messages": [{"role": "user", "content": "hi"}],
    }
    status, _ = await send(
        client, server, "/v1/messages", body, DIALECT.auth.headers("sk-anything")
    )
    assert status == 200


# -- vLLM's mixed error shapes --------------------------------------------------------------------


async def test_validation_errors_are_openai_shaped_and_handler_errors_anthropic_shaped(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    base = {"model": server.model_name, "messages": [{"role": "user", "content": "hi"}]}
    status, text = await send(client, server, "/v1/messages", base)
    assert status == 400
    error = json.loads(text)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "Bad Request" and error["param"] == "body.max_tokens"
    status, text = await send(
        client, server, "/v1/messages", {**base, "max_tokens": 4, "model": "x"}
    )
    assert status == 404
    assert json.loads(text) == {
        "type": "error",
        "error": {
            "type": "NotFoundError",
            "message": f"The model `x` does not exist. Valid aliases: {server.model_name}.",
        },
    }


async def test_a_body_that_is_not_json_is_a_validation_error(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    async with client.post(
        server.url + "/v1/messages", data=b"not json", headers={"Content-Type": "application/json"}
    ) as r:
        status, reply = r.status, await r.json()
    assert status == 400 and reply["error"]["param"] == "body.0"
    assert "JSON decode error" in reply["error"]["message"]


# -- 529 overloaded: retried by the transport as a 5xx ---------------------------------------------

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


async def overloaded_then(server: ReferenceServer, failures: int) -> tuple[web.AppRunner, str]:
    """A front that answers 529 ``failures`` times, then passes the call to the reference server."""
    seen = {"n": 0}

    async def handle(request: web.Request) -> web.Response:
        seen["n"] += 1
        if seen["n"] <= failures:
            return web.json_response(OVERLOADED, status=529, headers={"Retry-After": "0"})
        body = await request.read()
        async with (
            aiohttp.ClientSession() as session,
            session.post(server.url + request.path, data=body) as r,
        ):
            return web.Response(
                body=await r.read(), status=r.status, content_type="application/json"
            )

    app = web.Application()
    app.router.add_post("/v1/messages", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


async def test_an_overloaded_529_is_retried_and_then_an_error(server: ReferenceServer) -> None:
    request = chat("hi", sampling=Sampling(max_tokens=2))
    runner, url = await overloaded_then(server, failures=1)
    try:
        async with Model(
            dialect=DIALECT, base_url=url, model_id=server.model_name, limits=Limits(retries=2)
        ) as model:
            call = await model.call(request)
    finally:
        await runner.cleanup()
    assert call.ok and call.attempts == 2
    runner, url = await overloaded_then(server, failures=3)
    try:
        async with Model(
            dialect=DIALECT, base_url=url, model_id=server.model_name, limits=Limits(retries=1)
        ) as model:
            failed = await model.call(request)
    finally:
        await runner.cleanup()
    assert isinstance(failed.error, TransportError) and failed.error.status == 529
    assert "Overloaded" in str(failed.error) and failed.attempts == 2
