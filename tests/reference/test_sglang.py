"""The reference server's SGLang ``/generate`` against the real SGLang 0.5.23's recorded replies.

Every recorded ``/generate`` exchange (``tests/fixtures/sglang_native/0.5.23/``) is replayed on a
reference server with the real server's context length (2048): same status, and the reply's
structure compared key by key (as ``test_fixture_structure.py`` does for vLLM); values may differ
(another model). Token ids outside the reference vocabulary are mapped onto one inside it. Every
200 reply must also decode with SGLang's own contract (``GenerateResponse``), and the
``sglang_native`` dialect must lift what the reference sends, or refuse a faulty reply.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import msgspec
import pytest
from dialects.test_sglang_native import CASES, generate_replies, load_api_types

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation, ServerRejected
from sieval.ir.request import CompletionInput, Request
from sieval.reference import ReferenceServer

from .test_fixture_structure import diff, shape

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "sglang_native" / "0.5.23"
D = get_dialect("sglang_native")
NOT_EMULATED = {
    "batch_text": "a batch (a list of texts) is not a sieval request",
    "regex": "the reference model has no regex-constrained decoding",
}
FINISH_KEYS = {
    "stop": {"type", "matched"},
    "length": {"type", "length"},
    "abort": {"type", "message", "status_code", "err_type"},
}
IN_VOCAB = 300  # stands for any real Gemma id the reference vocabulary (1062 ids) lacks


@pytest.fixture(scope="module")
def api_types() -> ModuleType:
    return load_api_types()


@pytest.fixture(scope="module")
async def sglang_server() -> AsyncIterator[ReferenceServer]:
    async with ReferenceServer(port=0, max_model_len=2048) as srv:  # SGLang's --context-length
        yield srv


def _generate_fixtures() -> list[Path]:
    paths = sorted(FOLDER.glob("*.json"))
    return [p for p in paths if json.loads(p.read_text())["route"] == "/generate"]


def _in_vocab(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if isinstance(out.get("input_ids"), list):
        out["input_ids"] = [i if i < 1062 else IN_VOCAB for i in out["input_ids"]]
    return out


async def _post(
    client: aiohttp.ClientSession,
    url: str,
    body: Any,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    async with client.post(url + "/generate", json=body, headers=headers) as r:
        return r.status, await r.text()


def _events(text: str) -> list[Any]:
    return generate_replies({"reply_sse": text})


def _finish_as_value(replies: list[Any]) -> list[Any]:
    """finish_reason's keys follow its type (a value: another model stops elsewhere); each is
    checked against its type's keys, then compared as {"type"}."""
    out = []
    for reply in replies:
        meta = reply.get("meta_info") if isinstance(reply, dict) else None
        finish = meta.get("finish_reason") if isinstance(meta, dict) else None
        if isinstance(finish, dict):
            assert set(finish) == FINISH_KEYS[finish["type"]], finish
            reply = {**reply, "meta_info": {**meta, "finish_reason": {"type": finish["type"]}}}
        out.append(reply)
    return out


def _shape(value: Any) -> Any:
    if isinstance(value, list):
        return shape(_finish_as_value(value))
    return shape(_finish_as_value([value])[0])


@pytest.mark.parametrize("path", _generate_fixtures(), ids=lambda p: p.stem)
async def test_generate_matches_the_recorded_structure(
    client: aiohttp.ClientSession,
    sglang_server: ReferenceServer,
    api_types: ModuleType,
    path: Path,
) -> None:
    if path.stem in NOT_EMULATED:
        status, text = await _post(
            client, sglang_server.url, json.loads(path.read_text())["request"]
        )
        assert status == 400 and "not implemented" in text, NOT_EMULATED[path.stem]
        return
    fixture = json.loads(path.read_text())
    status, text = await _post(client, sglang_server.url, _in_vocab(fixture["request"]))
    assert status == fixture["status"], text
    if "reply_sse" in fixture:
        want, got = _events(fixture["reply_sse"]), _events(text)
        assert want and got and text.rstrip().endswith("data: [DONE]")
        problems = diff(_shape(want[0]), _shape(got[0]), "$first")
        problems += diff(_shape(want[-1]), _shape(got[-1]), "$last")
        replies = got
    else:
        reply = json.loads(text)
        problems = diff(_shape(fixture["reply"]), _shape(reply))
        replies = (reply if isinstance(reply, list) else [reply]) if status == 200 else []
    assert not problems, f"{path.name}: " + "; ".join(problems)
    for reply in replies:
        if "error" in reply:
            api_types.GenerateStreamError.from_json_value(reply)
        else:
            api_types.GenerateResponse.from_json_value(reply)


def _for_reference(request: Request) -> Request:
    """The case with ids the reference vocabulary has, and room for its longer JSON."""
    inp = request.input
    if isinstance(inp, CompletionInput) and isinstance(inp.token_ids, tuple):
        ids = tuple(i if i < 1062 else IN_VOCAB for i in inp.token_ids)
        request = msgspec.structs.replace(request, input=CompletionInput(token_ids=ids))
    if request.structured_output.format != "text":
        more = msgspec.structs.replace(request.sampling, max_tokens=400)
        request = msgspec.structs.replace(request, sampling=more)
    return request


LIFTED = sorted(n for n in CASES if not n.startswith("error_") and n not in NOT_EMULATED)


@pytest.mark.parametrize("name", LIFTED)
async def test_the_dialect_lifts_what_the_reference_sends(
    client: aiohttp.ClientSession, sglang_server: ReferenceServer, name: str
) -> None:
    request = _for_reference(CASES[name])
    lowered = lower(D, request, sglang_server.model_name)
    status, text = await _post(client, sglang_server.url, lowered.body)
    assert status == 200, text
    response = lift(D, lowered, status, {}, text.encode())
    assert len(response.choices) == request.sampling.n
    if request.scoring.input_logprobs:
        assert len(response.input_tokens) == response.usage.input_tokens
    if request.scoring.sampled_logprobs:
        assert all(len(c.tokens) == len(c.token_ids) for c in response.choices)


async def test_stream_errors_come_in_band(
    client: aiohttp.ClientSession, sglang_server: ReferenceServer
) -> None:
    bad_top_k = {"text": "x", "sampling_params": {"top_k": 0}, "stream": True}
    status, text = await _post(client, sglang_server.url, bad_top_k)
    assert status == 200
    error = _events(text)[0]["error"]
    assert error["code"] == 400 and error["retryable"] is False
    assert error["message"] == "top_k must be -1 (disable) or at least 1, got 0."
    past = {"text": "hi", "return_logprob": True, "logprob_start_len": 100, "stream": True}
    status, text = await _post(client, sglang_server.url, past)
    (chunk,) = _events(text)
    assert status == 200 and chunk["output_ids"]  # an abort that looks like an answer
    assert chunk["meta_info"]["finish_reason"]["type"] == "abort"
    lowered = lower(D, CASES["stream"], sglang_server.model_name)
    with pytest.raises(ServerRejected, match="logprob_start_len=100"):
        lift(D, lowered, 200, {}, text.encode())


async def test_bearer_auth_guards_generate_but_not_health() -> None:
    async with ReferenceServer(port=0, api_key="k-123") as srv, aiohttp.ClientSession() as c:
        body = {"text": "hi", "sampling_params": {"max_new_tokens": 1}}
        assert await _post(c, srv.url, body) == (401, '{"error":"Unauthorized"}')
        wrong = {"Authorization": "Bearer nope"}
        assert (await _post(c, srv.url, body, wrong))[0] == 401
        for scheme in ("Bearer", "bearer"):
            assert (await _post(c, srv.url, body, {"Authorization": f"{scheme} k-123"}))[0] == 200
        for route in ("/ready", "/health"):
            async with c.get(srv.url + route) as r:
                assert r.status == 200
        async with c.get(srv.url + "/model_info") as r:
            assert r.status == 401


async def test_side_routes_say_what_the_server_is(
    client: aiohttp.ClientSession, sglang_server: ReferenceServer
) -> None:
    recorded = json.loads((FOLDER / "server_info.json").read_text())["reply"]
    async with client.get(sglang_server.url + "/server_info") as r:
        info = await r.json()
    assert info["version"] == "sieval-reference (sglang 0.5.23 wire)"
    assert set(info) <= set(recorded)  # only keys the real server has
    assert info["max_req_input_len"] == recorded["max_req_input_len"] == 2042
    async with client.get(sglang_server.url + "/model_info") as r:
        model = await r.json()
    assert model["served_model_name"] == sglang_server.model_name
    assert set(model) <= set(json.loads((FOLDER / "model_info.json").read_text())["reply"])


async def test_malformed_bodies_get_sglangs_error_shapes(
    client: aiohttp.ClientSession, sglang_server: ReferenceServer
) -> None:
    async with client.post(sglang_server.url + "/generate", data=b"{nope") as r:
        flat = await r.json()
    assert r.status == 400 and flat["object"] == "error" and flat["code"] == 400
    status, text = await _post(
        client, sglang_server.url, {"text": "x", "sampling_params": {"json_schema": {}}}
    )
    assert (status, json.loads(text)) == (400, {"error": "invalid type: map, expected a string"})


@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        ("nan", "non-finite"),
        ("topk-short", "alternatives for top-k=3"),
        ("short-prompt-logprobs", "counted differently"),
        ("usage-off", "counted differently"),
    ],
)
async def test_faulty_replies_are_refused(
    client: aiohttp.ClientSession, sglang_server: ReferenceServer, fault: str, needle: str
) -> None:
    lowered = lower(D, CASES["score_top3"], sglang_server.model_name)
    status, text = await _post(client, sglang_server.url, lowered.body, {"x-sieval-fault": fault})
    with pytest.raises(ContractViolation, match=needle):
        lift(D, lowered, status, {}, text.encode())
