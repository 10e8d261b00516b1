"""Each injected fault produces what it says, seen with a raw aiohttp client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from sieval.reference import ReferenceServer
from sieval.reference.faults import parse_fault

SCORE: dict[str, Any] = {
    "prompt": "The sun is a star.",
    "echo": True,
    "logprobs": 2,
    "max_tokens": 1,
    "temperature": 0,
    "prompt_logprobs": 2,
}


async def _raw(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    fault: str | None,
    key: str | None = None,
    body: dict[str, Any] | None = None,
) -> tuple[int, dict[str, str], str]:
    headers = {}
    if fault is not None:
        headers["x-sieval-fault"] = fault
    if key is not None:
        headers["x-sieval-fault-key"] = key
    async with client.post(
        server.url + "/v1/completions", json=body or SCORE, headers=headers
    ) as r:
        return r.status, dict(r.headers), await r.text()


async def test_429_times_then_success(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    seen = [
        await _raw(client, server, "429; times=2; retry-after=3", key="k-429") for _ in range(3)
    ]
    assert [s for s, _, _ in seen] == [429, 429, 200]
    assert seen[0][1]["Retry-After"] == "3"
    assert json.loads(seen[0][2])["error"]["code"] == 429
    # another key has its own counter
    status, _, _ = await _raw(client, server, "429; times=2; retry-after=3", key="k-other")
    assert status == 429


@pytest.mark.parametrize("code", [500, 503])
async def test_5xx(client: aiohttp.ClientSession, server: ReferenceServer, code: int) -> None:
    status, headers, text = await _raw(client, server, f"{code}; retry-after=2")
    assert status == code
    assert json.loads(text)["error"]["code"] == code
    assert headers["Retry-After"] == "2"


async def test_reset_mid_body(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    with pytest.raises(aiohttp.ClientError):
        await _raw(client, server, "reset")


async def test_delay_past_client_timeout(server: ReferenceServer) -> None:
    timeout = aiohttp.ClientTimeout(total=0.2)
    async with aiohttp.ClientSession(timeout=timeout) as c:
        with pytest.raises(asyncio.TimeoutError):
            await _raw(c, server, "delay; seconds=1")
    async with aiohttp.ClientSession() as c:
        status, _, _ = await _raw(c, server, "delay; seconds=0.01")
        assert status == 200


async def test_truncated_json(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    status, headers, text = await _raw(client, server, "truncate")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


@pytest.mark.parametrize(("spec", "code"), [("html", 502), ("html; status=200", 200)])
async def test_html_page(
    client: aiohttp.ClientSession, server: ReferenceServer, spec: str, code: int
) -> None:
    status, headers, text = await _raw(client, server, spec)
    assert status == code
    assert headers["Content-Type"].startswith("text/html")
    assert text.lstrip().startswith("<html>")


async def test_short_prompt_logprobs(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    _, _, good = await _raw(client, server, None)
    _, _, bad = await _raw(client, server, "short-prompt-logprobs")
    g, b = json.loads(good)["choices"][0], json.loads(bad)["choices"][0]
    assert len(b["prompt_logprobs"]) == len(g["prompt_logprobs"]) - 1
    for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
        assert len(b["logprobs"][key]) == len(g["logprobs"][key]) - 1


async def test_topk_wrong_length(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    _, _, good = await _raw(client, server, None)
    _, _, bad = await _raw(client, server, "topk-short")
    g, b = json.loads(good)["choices"][0], json.loads(bad)["choices"][0]
    for gd, bd in zip(
        g["logprobs"]["top_logprobs"][1:], b["logprobs"]["top_logprobs"][1:], strict=True
    ):
        assert len(bd) == len(gd) - 1
    for gd, bd in zip(g["prompt_logprobs"][1:], b["prompt_logprobs"][1:], strict=True):
        assert len(bd) == len(gd) - 1


async def test_nan_logprobs(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    _, _, text = await _raw(client, server, "nan")
    assert "NaN" in text
    body = json.loads(text)  # Python's json reads the bare token
    lp = body["choices"][0]["logprobs"]
    assert lp["token_logprobs"][0] is None
    assert all(x != x for x in lp["token_logprobs"][1:])
    assert all(
        v["logprob"] != v["logprob"]
        for d in body["choices"][0]["prompt_logprobs"][1:]
        for v in d.values()
    )


async def test_usage_disagrees(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    _, _, text = await _raw(client, server, "usage-off")
    body = json.loads(text)
    tokens = body["choices"][0]["logprobs"]["tokens"]
    assert body["usage"]["prompt_tokens"] == len(tokens) - 1 + 1  # one more than the echo


async def test_bad_fault_header(client: aiohttp.ClientSession, server: ReferenceServer) -> None:
    status, _, text = await _raw(client, server, "explode")
    assert status == 400 and "unknown fault mode" in text


def test_parse_fault_grammar() -> None:
    f = parse_fault(" 429 ; times=2; Retry-After=5 ")
    assert f.mode == "429" and f.options == {"times": "2", "retry-after": "5"}
    assert f.number("seconds", 7.0) == 7.0
    for bad in ("", "429; times", "429; times=x", "nope"):
        with pytest.raises(ValueError):
            parse_fault(bad)


async def test_server_level_fault() -> None:
    async with ReferenceServer(faults="503; times=1") as srv, aiohttp.ClientSession() as c:
        first, _, _ = await _raw(c, srv, None)
        second, _, _ = await _raw(c, srv, None)
        assert (first, second) == (503, 200)
        # the header wins over the server setting
        third, _, _ = await _raw(c, srv, "500")
        assert third == 500
