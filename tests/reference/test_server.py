"""Side routes and lifecycle helpers."""

from __future__ import annotations

import contextlib
import json
import urllib.request

import aiohttp

from sieval.reference import ReferenceServer, start_in_thread
from sieval.reference.lm import ReferenceModel
from sieval.reference.server import serve_forever


async def test_models(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    async with client.get(server.url + "/v1/models") as r:
        body = await r.json()
    assert body["object"] == "list"
    card = body["data"][0]
    assert set(card) == {
        "id",
        "object",
        "created",
        "owned_by",
        "root",
        "parent",
        "max_model_len",
        "permission",
    }
    assert card["id"] == "sieval-reference" and card["max_model_len"] == 4096
    assert card["owned_by"] == "vllm" and card["parent"] is None


async def test_version_health(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    async with client.get(server.url + "/version") as r:
        body = await r.json()
    assert body == {"version": "sieval-reference (vllm 0.32.0 wire)"}
    async with client.get(server.url + "/health") as r:
        assert r.status == 200 and await r.read() == b""


async def test_tokenize(
    client: aiohttp.ClientSession, server: ReferenceServer, model: ReferenceModel
) -> None:
    async with client.post(server.url + "/tokenize", json={"prompt": "The sun"}) as r:
        body = await r.json()
    assert body == {
        "count": len(model.tokenize("The sun")),
        "max_model_len": 4096,
        "tokens": model.tokenize("The sun"),
        "token_strs": None,
    }
    async with client.post(
        server.url + "/tokenize",
        json={"prompt": "The", "add_special_tokens": False, "return_token_strs": True},
    ) as r:
        assert (await r.json())["token_strs"] == ["The"]
    async with client.post(server.url + "/tokenize", json={"prompt": 3}) as r:
        assert r.status == 400


def test_start_in_thread() -> None:
    handle = start_in_thread(port=0)
    try:
        with urllib.request.urlopen(handle.url + "/version") as r:
            assert json.loads(r.read())["version"] == "sieval-reference (vllm 0.32.0 wire)"
    finally:
        handle.stop()


async def test_serve_forever_cancels() -> None:
    import asyncio

    task = asyncio.create_task(serve_forever("127.0.0.1", 0))
    await asyncio.sleep(0.05)
    assert not task.done(), "serve_forever must keep serving until cancelled"
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.done()
