"""Live: openai_responses' claims against the real vLLM 0.32.0 serving Gemma 3 270M."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pydantic
import pytest
from openai.types.responses import Response as SdkResponse
from openai.types.responses import ResponseStreamEvent

from sieval.audit.probe import run_probe
from sieval.dialects.openai_responses import DIALECT as D
from sieval.dialects.table import lift, lower
from sieval.ir.request import ChatInput, Message, Request, Sampling, Scheduling, Scoring, TextPart

pytestmark = pytest.mark.live

MODEL = "gemma-3-270m"


async def test_every_probe_case_holds_on_vllm(vllm_url: str) -> None:
    facts, results = await run_probe("openai_responses", vllm_url, MODEL)
    assert facts["version"] == {"version": "0.32.0"}
    failed = [(r.case, r.outcome, r.detail) for r in results if not r.passed]
    assert failed == []
    assert {r.reported_model for r in results if r.outcome == "ok"} == {MODEL}


def _request(stream: bool) -> Request:
    return Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text="Hi!"),)),)),
        sampling=Sampling(temperature=0.0, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        scheduling=Scheduling(stream=stream),
    )


def _events(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for block in text.split("\n\n")
        for line in block.split("\n")
        if line.startswith("data: ")
    ]


async def test_live_replies_parse_with_the_sdk_and_lift_alike(vllm_url: str) -> None:
    lifted = []
    async with aiohttp.ClientSession() as client:
        for stream in (False, True):
            low = lower(D, _request(stream), MODEL)
            async with client.post(vllm_url + low.path, json=low.body) as reply:
                status, text = reply.status, await reply.text()
            assert status == 200, text
            if stream:
                adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)
                events = _events(text)
                assert [adapter.validate_python(e).type for e in events][-1] == "response.completed"
            else:
                SdkResponse.model_validate_json(text)
            lifted.append(lift(D, low, status, {}, text.encode()))
    plain, folded = lifted
    assert plain.choices[0].text == folded.choices[0].text
    a, b = plain.choices[0].tokens, folded.choices[0].tokens
    assert [t.text for t in a] == [t.text for t in b] and all(len(t.top) == 2 for t in a)
    assert "".join(t.text for t in a) == plain.choices[0].text
