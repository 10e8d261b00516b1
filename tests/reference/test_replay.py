"""Replay mode serves recorded replies keyed by route + canonical body."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from sieval.reference import ReferenceServer
from sieval.reference.replay import ReplayBook, canonical

RECORD = {
    "route": "/v1/completions",
    "request": {"model": "m", "prompt": "hi", "max_tokens": 1},
    "status": 200,
    "reply": {"id": "cmpl-recorded", "choices": [{"text": "!"}]},
}
SSE = {
    "route": "/v1/completions",
    "request": {"model": "m", "prompt": "hi", "stream": True},
    "status": 200,
    "reply_sse": 'data: {"id": "x"}\n\ndata: [DONE]\n\n',
}


async def test_replay_from_list() -> None:
    async with ReferenceServer(replay=[RECORD]) as srv, aiohttp.ClientSession() as c:
        # key order does not matter: the body is canonicalised
        body = {"max_tokens": 1, "prompt": "hi", "model": "m"}
        async with c.post(srv.url + "/v1/completions", json=body) as r:
            assert r.status == 200
            assert await r.json() == RECORD["reply"]
        async with c.post(srv.url + "/v1/completions", json={"prompt": "other"}) as r:
            assert r.status == 404
            assert "no recorded reply" in (await r.json())["error"]["message"]


async def test_replay_from_folder(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(RECORD))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.json").write_text(json.dumps(SSE))
    book = ReplayBook(tmp_path)
    assert len(book) == 2
    async with (
        ReferenceServer(replay=tmp_path) as srv,
        aiohttp.ClientSession() as c,
        c.post(srv.url + "/v1/completions", json=SSE["request"]) as r,
    ):
        assert r.headers["Content-Type"].startswith("text/event-stream")
        assert await r.text() == SSE["reply_sse"]


def test_replay_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        ReplayBook(tmp_path / "nope")


def test_canonical_is_order_free() -> None:
    assert canonical({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == canonical(
        {"a": [1, {"c": 3, "d": 2}], "b": 1}
    )
