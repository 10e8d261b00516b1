"""The reference server's tool replies against the ones recorded from vLLM 0.32.0 (hermes parser).

For every recorded exchange that offers tools, the same request is sent to the reference server:
it makes as many calls as vLLM did (none when Gemma answered in text), and when it calls, the
finish reason (``finish_reason``, ``status``, ``stop_reason``) is the recorded one, the calls have
the recorded keys, and every id has the recorded id's form (its hex runs of the same length, its
prefix the same). Exchanges whose
outcome depends on Gemma's own words (a call cut by ``max_tokens``) are left to the per-wire
shape tests, which compare their keys only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from sieval.reference import ReferenceServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WIRES = ("openai_chat", "openai_responses", "anthropic_messages")
GEMMA_DEPENDENT = {"tool_required_cut", "doc_forced_call_without_strict", "tool_array_arguments"}
"""Gemma's call was cut or not an object: the reference's completes, so the finish differs."""


def _recorded() -> list[tuple[str, Path]]:
    out = []
    for wire in WIRES:
        for path in sorted((FIXTURES / wire / "0.32.0").glob("*.json")):
            fixture = json.loads(path.read_text(encoding="utf-8"))
            body = json.dumps(fixture.get("request") or {})
            if (
                fixture.get("status") == 200
                and path.stem not in GEMMA_DEPENDENT
                and ('"tools"' in body)
            ):
                out.append((wire, path))
    return out


def _events(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if data and data[0] != "[DONE]":
            out.append(json.loads(data[0]))
    return out


def _summary(wire: str, fixture: dict[str, Any], text: str) -> tuple[Any, list[dict[str, Any]]]:
    """The reply's finish and its calls (each as the wire writes it), stream or not."""
    if "reply_sse" in fixture:
        events = _events(text)
        if wire == "openai_chat":
            choices = [c for e in events for c in e["choices"]]
            finish = [c["finish_reason"] for c in choices if c["finish_reason"]]
            headers = [t for c in choices for t in c["delta"].get("tool_calls") or []]
            return finish[-1], [t for t in headers if "id" in t]
        if wire == "openai_responses":
            done = events[-1]["response"]
            return done["status"], [i for i in done["output"] if i["type"] == "function_call"]
        starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
        stop = [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"]
        return stop[-1], [b for b in starts if b["type"] == "tool_use"]
    reply = json.loads(text)
    if wire == "openai_chat":
        choice = reply["choices"][0]
        return choice["finish_reason"], choice["message"].get("tool_calls") or []
    if wire == "openai_responses":
        return reply["status"], [i for i in reply["output"] if i["type"] == "function_call"]
    return reply["stop_reason"], [b for b in reply["content"] if b["type"] == "tool_use"]


def id_form(value: str) -> str:
    """An id's form: each run of 8+ hex digits replaced by its length (``fc_<hex16>``)."""
    return re.sub(r"[0-9a-f]{8,}", lambda m: f"<hex{len(m.group(0))}>", value)


def test_id_form_keeps_prefixes_and_lengths() -> None:
    assert id_form("chatcmpl-tool-8958585a3aaf153a") == "chatcmpl-tool-<hex16>"
    assert id_form("fc_b764c02d85d05fad") != id_form("fc_b764c02d85d05fad00")


def test_the_recorded_tool_exchanges_are_there() -> None:
    names = {(w, p.stem) for w, p in _recorded()}
    assert {("openai_chat", "tool_required"), ("anthropic_messages", "tool_any")} <= names
    assert ("openai_responses", "stream_tool_required") in names


@pytest.mark.parametrize(("wire", "path"), _recorded(), ids=lambda v: getattr(v, "stem", v))
async def test_the_reference_finishes_and_names_calls_as_vllm(
    client: aiohttp.ClientSession, server: ReferenceServer, wire: str, path: Path
) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    body = {**fixture["request"], "model": server.model_name}
    async with client.post(server.url + fixture["route"], json=body) as reply:
        status, text = reply.status, await reply.text()
    assert status == 200, text
    recorded = fixture.get("reply_sse") or json.dumps(fixture["reply"])
    want_finish, want_calls = _summary(wire, fixture, recorded)
    got_finish, got_calls = _summary(wire, fixture, text)
    assert len(got_calls) == len(want_calls)
    if want_calls:  # a text answer's finish (stop or length) is the model's own
        assert got_finish == want_finish
    for want, got in zip(want_calls, got_calls, strict=True):
        assert set(got) == set(want)
        for key in ("id", "call_id"):
            if key in want:
                assert id_form(got[key]) == id_form(want[key]), (key, got[key], want[key])
