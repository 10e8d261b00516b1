"""The reference server's ``/v1/responses`` against the replies recorded from vLLM 0.32.0.

Every recorded request is sent to the reference server: same status, and the same keys at every
object level (values differ: the reference model is not Gemma). Every reply and every streamed
event the reference sends parses with the openai SDK's types, and the wire facts the dialect
relies on (two BOS tokens, sampled-first top-k cut at k, the stop token only in non-stream
logprobs, the echoed budget, nothing stored) hold on it too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pydantic
import pytest
from openai.types.responses import Response as SdkResponse
from openai.types.responses import ResponseStreamEvent

from sieval.dialects.openai_responses import DIALECT as D
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation
from sieval.ir.request import ChatInput, Message, Request, Sampling, Scheduling, Scoring, TextPart
from sieval.reference import ReferenceServer
from sieval.reference.tokenizer import BOS_ID

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "openai_responses" / "0.32.0"
EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)
SAME_ROOM = {"clamped_max_output_tokens": "hello " * 1008}
"""Prompts re-sized for the reference tokenizer: 4090 tokens, as the recorded one on Gemma."""


def shape(value: Any) -> Any:
    """A comparable description of a JSON value's structure (lists by their element shapes)."""
    if isinstance(value, dict):  # an item's type is kept: lists compare items of one type
        return {k: v if k == "type" else shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return ["list", *sorted({json.dumps(shape(v), sort_keys=True) for v in value})]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else "string"


def diff(expected: Any, got: Any, path: str = "$") -> list[str]:
    """Structural differences; null matches anything, an empty list matches any list."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out = []
        if set(expected) != set(got):
            out.append(f"{path}: keys {sorted(set(expected) ^ set(got))} differ")
        for key in set(expected) & set(got):
            out += diff(expected[key], got[key], f"{path}.{key}")
        return out
    if isinstance(expected, list) and isinstance(got, list):
        mine = {json.loads(x).get("type") if isinstance(json.loads(x), dict) else None: x
                for x in expected[1:]}  # fmt: skip
        theirs = {json.loads(x).get("type") if isinstance(json.loads(x), dict) else None: x
                  for x in got[1:]}  # fmt: skip
        out = []
        for kind in set(mine) & set(theirs):  # elements of the same type compare key by key
            out += diff(json.loads(mine[kind]), json.loads(theirs[kind]), f"{path}[{kind}]")
        return out
    if expected != got and "null" not in (expected, got):
        return [f"{path}: expected {expected}, got {got}"]
    return []


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.split("\n\n"):
        lines = block.strip().split("\n")
        if len(lines) == 2 and lines[0].startswith("event: ") and lines[1].startswith("data: "):
            out.append((lines[0][len("event: ") :], json.loads(lines[1][len("data: ") :])))
    return out


def fixtures() -> list[Path]:
    """The recorded exchanges of the Responses routes (not the /tokenize one kept beside them)."""
    paths = sorted(FOLDER.glob("*.json"))
    return [p for p in paths if json.loads(p.read_text())["route"].startswith("/v1/responses")]


async def send(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    method: str,
    route: str,
    body: dict[str, Any] | None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    async with client.request(method, server.url + route, json=body, headers=headers) as r:
        return r.status, await r.text()


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: p.stem)
async def test_the_reference_answers_each_recorded_request_in_vllms_shape(
    client: aiohttp.ClientSession, server: ReferenceServer, path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    body = dict(fixture["request"]) if fixture["request"] is not None else None
    if body is not None and body["model"] == fixture["server"]["model"]:
        body["model"] = server.model_name  # an unknown model stays unknown
    if path.stem in SAME_ROOM:
        body["input"] = [{**body["input"][0], "content": [
            {"type": "input_text", "text": SAME_ROOM[path.stem]}
        ]}]  # fmt: skip
    status, text = await send(client, server, fixture["method"], fixture["route"], body)
    assert status == fixture["status"], text
    if "reply_sse" in fixture:
        want, got = sse(fixture["reply_sse"]), sse(text)
        assert [n for n, _ in got] == [d["type"] for _, d in got]
        assert got[-1][0] == want[-1][0] == "response.completed"
        assert {n for n, _ in got} == {n for n, _ in want}
        first = {n: d for n, d in reversed(want)}
        problems = [p for n, d in got for p in diff(shape(first[n]), shape(d), f"${n}")]
        assert [d["sequence_number"] for _, d in got] == list(range(len(got)))
        for _, data in got:
            EVENTS.validate_python(data)
    else:
        reply = json.loads(text)
        problems = diff(shape(fixture["reply"]), shape(reply))
        if status == 200:
            SdkResponse.model_validate(reply)
    assert not problems, problems


def test_diff_sees_a_missing_key_and_a_changed_type() -> None:
    a = shape({"x": 1, "output": [{"type": "message", "id": "m", "content": []}]})
    b = shape({"x": "s", "output": [{"type": "message", "content": []}]})
    assert sorted(diff(a, b)) == [
        "$.output[message]: keys ['id'] differ",
        "$.x: expected number, got string",
    ]
    assert diff(shape({"v": None}), shape({"v": 1})) == []


def chat(text: str, **groups: Any) -> Request:
    return Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),)), **groups
    )


async def test_the_prompt_starts_with_two_bos(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {
        "model": server.model_name,
        "input": "Tell me a story.",
        "max_output_tokens": 2,
        "temperature": 0.0,
        "enable_response_messages": True,
    }
    status, text = await send(client, server, "POST", "/v1/responses", body)
    reply = json.loads(text)
    tokens = reply["input_messages"][0]["tokens"]
    assert status == 200 and tokens[:2] == [BOS_ID, BOS_ID] and tokens[2] != BOS_ID
    assert reply["usage"]["input_tokens"] == len(tokens)


async def test_top_logprobs_list_the_sampled_token_first_and_cut_at_k(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {
        "model": server.model_name,
        "input": "Once upon a time",
        "max_output_tokens": 12,
        "temperature": 1.0,
        "seed": 3,
        "include": ["message.output_text.logprobs"],
        "top_logprobs": 2,
    }
    _, text = await send(client, server, "POST", "/v1/responses", body)
    positions = json.loads(text)["output"][0]["content"][0]["logprobs"]
    assert all(p["top_logprobs"][0]["token"] == p["token"] for p in positions)
    assert all(len(p["top_logprobs"]) == 2 for p in positions)
    unsorted = [
        p for p in positions if p["top_logprobs"][0]["logprob"] < p["top_logprobs"][1]["logprob"]
    ]
    assert unsorted, "at temperature 1 some sampled token is not the best"


async def test_the_stop_token_is_listed_only_without_streaming(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {
        "model": server.model_name,
        "input": "Return JSON",
        "max_output_tokens": 40,
        "temperature": 0.0,
        "include": ["message.output_text.logprobs"],
        "top_logprobs": 1,
        "text": {"format": {"type": "json_object"}},
    }
    _, text = await send(client, server, "POST", "/v1/responses", body)
    listed = [p["token"] for p in json.loads(text)["output"][0]["content"][0]["logprobs"]]
    _, streamed = await send(client, server, "POST", "/v1/responses", {**body, "stream": True})
    final = sse(streamed)[-1][1]["response"]["output"][0]["content"][0]["logprobs"]
    assert listed[-1] == "<eos>" and [p["token"] for p in final] == listed[:-1]


async def test_the_dialect_reads_stream_and_non_stream_alike(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    request = chat(
        "Name a color.",
        sampling=Sampling(temperature=0.0, max_tokens=8),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
    )
    streamed = Request(
        input=request.input,
        sampling=request.sampling,
        scoring=request.scoring,
        scheduling=Scheduling(stream=True),
    )
    responses = []
    for r in (request, streamed):
        low = lower(D, r, server.model_name)
        status, text = await send(client, server, "POST", low.path, low.body)
        responses.append(lift(D, low, status, {}, text.encode()))
    plain, folded = responses
    assert plain.choices == folded.choices and plain.usage == folded.usage
    assert all(len(t.top) == 3 for t in plain.choices[0].tokens)


async def test_a_shortened_budget_is_echoed(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {"model": server.model_name, "input": "hello " * 1000, "max_output_tokens": 4000}
    _, text = await send(client, server, "POST", "/v1/responses", body)
    reply = json.loads(text)
    assert reply["max_output_tokens"] == 4096 - reply["usage"]["input_tokens"]


async def test_nothing_is_stored(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    status, text = await send(client, server, "GET", "/v1/responses/resp_abc", None)
    assert status == 404 and json.loads(text)["error"]["type"] == "invalid_request_error"


async def test_bearer_auth_guards_the_route(client: aiohttp.ClientSession) -> None:
    body = {"model": "m", "input": "hi", "max_output_tokens": 1}
    async with ReferenceServer(port=0, model_name="m", api_key="sk-test") as server:
        status, text = await send(client, server, "POST", "/v1/responses", body)
        assert (status, json.loads(text)) == (401, {"error": "Unauthorized"})
        auth = {"Authorization": "Bearer sk-test"}
        status, _ = await send(client, server, "POST", "/v1/responses", body, auth)
        assert status == 200


@pytest.mark.parametrize(
    ("mode", "needle"),
    [("topk-short", "were asked"), ("nan", "non-finite"), ("short-prompt-logprobs", "spell")],
)
async def test_body_faults_are_refused_by_the_dialect(
    client: aiohttp.ClientSession, server: ReferenceServer, mode: str, needle: str
) -> None:
    low = lower(
        D,
        chat(
            "Name a color.",
            sampling=Sampling(temperature=0.0, max_tokens=6),
            scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        ),
        server.model_name,
    )
    headers = {"x-sieval-fault": mode}
    status, text = await send(client, server, "POST", low.path, low.body, headers)
    with pytest.raises(ContractViolation, match=needle):
        lift(D, low, status, {}, text.encode())
