"""Error statuses and messages as vLLM 0.32.0 sends them."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from sieval.reference import ReferenceServer

from .conftest import post

ENVELOPE = {"message", "type", "param", "code"}

CASES: list[tuple[dict[str, Any], int, str, str | None]] = [
    (
        {"prompt": "a", "logprobs": 101},
        400,
        "Requested sample logprobs of 101, which is greater than max allowed: 100",
        "logprobs",
    ),
    (
        {"prompt": "a", "prompt_logprobs": 101},
        400,
        "Requested prompt logprobs of 101, which is greater than max allowed: 100",
        "prompt_logprobs",
    ),
    ({"prompt": "a", "max_tokens": 0}, 400, "max_tokens must be at least 1, got 0.", "max_tokens"),
    (
        {"prompt": "a", "max_tokens": 5000},
        400,
        "max_tokens=5000 cannot be greater than max_model_len=4096. Please request fewer output "
        "tokens.",
        "max_tokens",
    ),
    (
        {"prompt": "a", "n": 2, "temperature": 0},
        400,
        "n must be 1 when using greedy sampling, got 2.",
        None,
    ),
    (
        {"prompt": "a", "suffix": "b"},
        400,
        "suffix is only supported for models with FIM completion rendering",
        "suffix",
    ),
    ({"prompt": "a", "model": "gpt-x"}, 404, "The model `gpt-x` does not exist.", "model"),
    (
        {"prompt": [300] * 5000},
        400,
        "This model's maximum context length is 4096 tokens. However, your prompt contains 5000 "
        "input tokens, which exceeds this limit even without any output tokens. Please reduce the "
        "length of the input prompt.",
        "input_tokens",
    ),
    (
        {"prompt": "a", "prompt_logprobs": 1, "stream": True},
        400,
        "`prompt_logprobs` are not available when `stream=True`.",
        "prompt_logprobs",
    ),
    (
        {"prompt": "a", "stop": ["a", "b", "c", "d", "e"]},
        400,
        "List should have at most 4 items",
        "body.stop.list[str]",
    ),
    (
        {"prompt": "a", "stream_options": {"include_usage": True}},
        400,
        "Stream options can only be defined when `stream=True`.",
        "stream_options",
    ),
    ({"prompt": ""}, 400, "Either prompt or prompt_embeds must be provided", "prompt"),
    (
        {"prompt": "a", "logprobs": -2},
        400,
        "`logprobs` must be a positive value or -1.",
        "logprobs",
    ),
    (
        {"prompt": "a", "prompt_logprobs": -3},
        400,
        "`prompt_logprobs` must be a positive value or -1.",
        "prompt_logprobs",
    ),
    ({"prompt": "a", "logprobs": "3"}, 400, "`logprobs` must be an integer.", "logprobs"),
    ({"prompt": "a", "temperature": "hot"}, 400, "temperature must be a number", "temperature"),
    (
        {"prompt": "a", "temperature": 2.5},
        400,
        "temperature must be in [0, 2], got 2.5.",
        "temperature",
    ),
    ({"prompt": "a", "temperature": -1}, 400, "temperature must be non-negative", "temperature"),
    ({"prompt": "a", "top_p": 0}, 400, "top_p must be in (0, 1], got 0.0.", "top_p"),
    ({"prompt": "a", "top_k": -2}, 400, "top_k must be 0 (disable), or at least 1", None),
    ({"prompt": "a", "min_p": 2}, 400, "min_p must be in [0, 1]", None),
    ({"prompt": "a", "presence_penalty": 3}, 400, "presence_penalty must be in [-2, 2]", None),
    ({"prompt": "a", "frequency_penalty": -3}, 400, "frequency_penalty must be in [-2, 2]", None),
    (
        {"prompt": "a", "repetition_penalty": 0},
        400,
        "repetition_penalty must be greater than zero",
        None,
    ),
    ({"prompt": "a", "n": 0}, 400, "n must be at least 1", None),
    ({"prompt": "a", "stop": [""]}, 400, "stop cannot contain an empty string.", None),
    ({"prompt": "a", "stop": [1]}, 400, "stop must be a string or a list of strings", "stop"),
    (
        {"prompt": "a", "stop_token_ids": ["x"]},
        400,
        "stop_token_ids must contain only integers",
        None,
    ),
    ({"prompt": "a", "seed": 2**70}, 400, "seed must be an int64", "seed"),
    ({"prompt": 5}, 400, "prompt must be a string or a list", "prompt"),
    ({"prompt": ["a", 3]}, 400, "prompt items must be strings or token lists", "prompt"),
    ({"prompt": [99999]}, 400, "out of vocabulary", "prompt"),
    (
        {"prompt": "a", "structured_outputs": {"json": {}, "regex": "a"}},
        400,
        "You can only use one kind of constraints",
        "structured_outputs",
    ),
    (
        {"prompt": "a", "structured_outputs": {"regex": "a+"}},
        400,
        "only the json",
        "structured_outputs",
    ),
    (
        {"prompt": "a", "structured_outputs": {"json": "{not json"}},
        400,
        "Invalid JSON schema",
        "structured_outputs",
    ),
    (
        {"prompt": "a", "structured_outputs": {"json": "[1]"}},
        400,
        "must be an object",
        "structured_outputs",
    ),
    (
        {"prompt": "a", "response_format": {"type": "json_schema"}},
        400,
        "the 'json_schema' field must be provided",
        "response_format",
    ),
]


@pytest.mark.parametrize(("body", "status", "message", "param"), CASES)
async def test_error_replies(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    body: dict[str, Any],
    status: int,
    message: str,
    param: str | None,
) -> None:
    got_status, reply = await post(client, server, body)
    assert got_status == status
    assert set(reply) == {"error"} and set(reply["error"]) == ENVELOPE
    assert message in reply["error"]["message"]
    assert reply["error"]["code"] == status
    assert reply["error"]["param"] == param
    if status == 404:
        assert reply["error"]["type"] == "NotFoundError"


async def test_validation_error_suffix(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    _, reply = await post(client, server, {"prompt": "a", "logprobs": 101})
    assert reply["error"]["message"].endswith("(parameter=logprobs, value=101)")
    assert reply["error"]["type"] == "BadRequestError"


async def test_unknown_fields_ignored(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    status, _ = await post(
        client,
        server,
        {"prompt": "a", "max_tokens": 1, "best_of": 3, "guided_json": {}, "user": "u"},
    )
    assert status == 200


async def test_bad_json_body(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    for data in (b"{not json", b"[1, 2]"):
        async with client.post(server.url + "/v1/completions", data=data) as r:
            assert r.status == 400
            assert set((await r.json())["error"]) == ENVELOPE


async def test_api_key() -> None:
    async with ReferenceServer(api_key="sekrit") as srv, aiohttp.ClientSession() as c:
        async with c.post(
            srv.url + "/v1/completions",
            json={"prompt": "a", "max_tokens": 1},
            headers={"Authorization": "Bearer wrong"},
        ) as r:
            assert r.status == 401
            assert await r.json() == {"error": "Unauthorized"}
        async with c.get(srv.url + "/v1/models") as r:
            assert r.status == 401
        async with c.post(
            srv.url + "/v1/completions",
            json={"prompt": "a", "max_tokens": 1},
            headers={"Authorization": "Bearer sekrit"},
        ) as r:
            assert r.status == 200
        async with c.get(srv.url + "/health") as r:
            assert r.status == 200
