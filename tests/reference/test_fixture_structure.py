"""The reference server's replies have the same structure as recorded vLLM 0.32.0 replies.

For every fixture ``tests/fixtures/{openai_completions,vllm_native}/0.32.0/*.json``
(``{"route", "request", "status", "reply" | "reply_sse"}``) the same body (``model`` replaced) is
sent to the reference server and the reply's *structure* is compared: same status, same key set
at every object level, lists by element shape, token maps (``top_logprobs`` entries,
``prompt_logprobs`` entries) as "string keys -> one value shape". Values may differ.

Until the lead records fixtures, ``test_hand_written_shapes`` checks the same comparison against
shapes written by hand from vLLM 0.32.0's ``completion/protocol.py``; a missing fixture folder
FAILS (it is never skipped silently).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from sieval.reference import ReferenceServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOLDERS = [FIXTURES / "openai_completions" / "0.32.0", FIXTURES / "vllm_native" / "0.32.0"]
TOKEN_MAPS = {"top_logprobs", "prompt_logprobs"}


def shape(value: Any, parent: str = "") -> Any:
    """A comparable description of a JSON value's structure."""
    if isinstance(value, dict):
        if parent in TOKEN_MAPS:
            inner = {json.dumps(shape(v), sort_keys=True) for v in value.values()}
            return {"<token map>": sorted(inner)}
        return {k: shape(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        kinds = {json.dumps(shape(v, parent), sort_keys=True) for v in value}
        return ["list", *sorted(kinds)]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string"


def diff(expected: Any, got: Any, path: str = "$") -> list[str]:
    """Human-readable structural differences (empty when the shapes agree)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out = []
        missing, extra = set(expected) - set(got), set(got) - set(expected)
        if missing:
            out.append(f"{path}: missing keys {sorted(missing)}")
        if extra:
            out.append(f"{path}: extra keys {sorted(extra)}")
        for k in set(expected) & set(got):
            out += diff(expected[k], got[k], f"{path}.{k}")
        return out
    if isinstance(expected, list) and isinstance(got, list):
        # compare element shapes pairwise on the union, ignoring list lengths
        exp_items = [json.loads(x) for x in expected[1:]]
        got_items = [json.loads(x) for x in got[1:]]
        if not exp_items or not got_items:
            return []
        return diff(exp_items[0], got_items[0], f"{path}[]")
    if expected != got and "null" not in (expected, got):
        return [f"{path}: expected {expected}, got {got}"]
    return []


def _sse_events(text: str) -> list[Any]:
    return [
        json.loads(line[6:])
        for line in text.split("\n\n")
        if line.startswith("data: ") and line[6:].strip() != "[DONE]"
    ]


def _fixture_files() -> list[Path]:
    return sorted(p for folder in FOLDERS if folder.is_dir() for p in folder.glob("*.json"))


def test_fixture_folders_exist() -> None:
    missing = [str(f) for f in FOLDERS if not f.is_dir()]
    assert not missing, (
        f"recorded vLLM 0.32.0 fixtures are missing: {missing}. Record them (JSON files "
        '{"route", "request", "status", "reply"|"reply_sse"}) so that '
        "test_fixture_matches_reference compares the reference server against real replies."
    )


async def _send(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    route: str,
    body: dict[str, Any] | None,
    method: str = "POST",
) -> tuple[int, str]:
    async with client.request(method, server.url + route, json=body) as r:
        return r.status, await r.text()


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
async def test_fixture_matches_reference(
    client: aiohttp.ClientSession, server: ReferenceServer, path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    body = dict(fixture["request"]) if fixture["request"] is not None else None
    if body is not None and "model" in body and fixture.get("status", 200) != 404:
        body["model"] = server.model_name
    method = fixture.get("method", "POST")
    status, text = await _send(client, server, fixture["route"], body, method)
    assert status == fixture["status"], text
    if "reply_sse" in fixture:
        want, got = _sse_events(fixture["reply_sse"]), _sse_events(text)
        assert want and got
        problems = diff(shape(want[0]), shape(got[0]), "$first")
        problems += diff(shape(want[-1]), shape(got[-1]), "$last")
        assert text.rstrip().endswith("data: [DONE]")
    else:
        problems = diff(shape(fixture["reply"]), shape(json.loads(text)))
    assert not problems, f"{path.name}: " + "; ".join(problems)


# -- shapes written by hand from vLLM 0.32.0's protocol (used until fixtures exist) ------------

_LOGPROBS = {
    "text_offset": [0],
    "token_logprobs": [None, -1.0],
    "tokens": ["a"],
    "top_logprobs": [None, {"a": -1.0}],
}
_PLP = [None, {"5": {"logprob": -1.0, "rank": 1, "decoded_token": "a"}}]
_USAGE = {
    "prompt_tokens": 1,
    "total_tokens": 2,
    "completion_tokens": 1,
    "prompt_tokens_details": None,
    "completion_tokens_details": None,
}


def _reply(choice: dict[str, Any]) -> dict[str, Any]:
    base = {
        "index": 0,
        "text": "",
        "logprobs": None,
        "finish_reason": "length",
        "stop_reason": None,
        "token_ids": None,
        "prompt_logprobs": None,
        "prompt_token_ids": None,
        "routed_experts": None,
    }
    return {
        "id": "cmpl-x",
        "object": "text_completion",
        "created": 0,
        "model": "m",
        "choices": [{**base, **choice}],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": _USAGE,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


HAND: list[tuple[dict[str, Any], int, dict[str, Any]]] = [
    ({"prompt": "The sun", "max_tokens": 2, "temperature": 0}, 200, _reply({})),
    (
        {"prompt": "The sun", "echo": True, "logprobs": 2, "max_tokens": 1, "temperature": 0},
        200,
        _reply({"logprobs": _LOGPROBS, "prompt_logprobs": _PLP}),
    ),
    (
        {"prompt": "The sun", "prompt_logprobs": 1, "return_token_ids": True, "max_tokens": 1},
        200,
        _reply({"prompt_logprobs": _PLP, "token_ids": [1], "prompt_token_ids": [2, 3]}),
    ),
    (
        {"prompt": "a", "logprobs": 1000},
        400,
        {"error": {"message": "m", "type": "BadRequestError", "param": "logprobs", "code": 400}},
    ),
    (
        {"prompt": "a", "model": "nope"},
        404,
        {"error": {"message": "m", "type": "NotFoundError", "param": "model", "code": 404}},
    ),
]


@pytest.mark.parametrize(("body", "status", "expected"), HAND)
async def test_hand_written_shapes(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    body: dict[str, Any],
    status: int,
    expected: dict[str, Any],
) -> None:
    got_status, text = await _send(client, server, "/v1/completions", body)
    assert got_status == status
    problems = diff(shape(expected), shape(json.loads(text)))
    assert not problems, problems


def test_diff_detects_key_changes() -> None:
    a = shape({"x": 1, "y": [{"k": 1}], "top_logprobs": [{"a": 1.0}]}, "")
    b = shape({"x": 1, "z": 2, "y": [{"j": 1}], "top_logprobs": [{"b": 2.0, "c": 1.0}]}, "")
    problems = diff(a, b)
    assert any("missing keys ['y']" in p or "missing keys" in p for p in problems)
    assert any("extra keys" in p for p in problems)
    assert diff(shape({"v": "s"}), shape({"v": 1})) == ["$.v: expected string, got number"]
    assert diff(shape({"v": None}), shape({"v": 1})) == []
