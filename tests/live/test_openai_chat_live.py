"""Live: openai_chat's claims against the real vLLM 0.32.0, and the openai SDK on the same wire."""

from __future__ import annotations

import pytest

from sieval.audit.cases.openai_chat import CASES
from sieval.audit.probe import run_probe
from sieval.dialects.openai_chat import DIALECT
from sieval.ir.request import ChatInput, Message, Request, Sampling, Scoring, TextPart
from sieval.model import Model

pytestmark = pytest.mark.live

MODEL = "gemma-3-270m"


async def test_every_probe_case_holds_on_vllm(vllm_url: str) -> None:
    facts, results = await run_probe("openai_chat", vllm_url, MODEL)
    assert facts["version"] == {"version": "0.32.0"}
    assert [r.case for r in results] == [c.name for c in CASES]
    failed = [(r.case, r.outcome, r.detail) for r in results if not r.passed]
    assert failed == []
    assert {r.reported_model for r in results if r.outcome == "ok"} == {MODEL}


async def test_the_sdk_sends_the_dialects_body_and_reads_the_same_reply(vllm_url: str) -> None:
    openai = pytest.importorskip("openai")
    request = Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text="Hi there"),)),)),
        sampling=Sampling(temperature=0.0, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    )
    async with Model(dialect=DIALECT, base_url=vllm_url, model_id=MODEL) as model:
        call = await model.call(request)
    ours = call.result().choices[0]
    assert call.body is not None
    client = openai.AsyncOpenAI(base_url=vllm_url + "/v1", api_key="unused", max_retries=0)
    try:
        sdk = await client.chat.completions.create(**call.body)
    finally:
        await client.close()
    theirs = sdk.choices[0]
    assert theirs.message.content == ours.text
    assert theirs.logprobs is not None and theirs.logprobs.content is not None
    assert [e.token for e in theirs.logprobs.content] == [t.text for t in ours.tokens or ()]
    assert all(len(e.top_logprobs) == 3 for e in theirs.logprobs.content)  # k + 1 on the wire
