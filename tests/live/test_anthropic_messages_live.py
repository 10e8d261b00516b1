"""Live: anthropic_messages against the real vLLM 0.32.0 serving Gemma 3 270M on /v1/messages."""

from __future__ import annotations

import pytest

from sieval.audit.probe import cases_for, run_probe
from sieval.dialects.anthropic_messages import DIALECT
from sieval.ir.request import ChatInput, Message, Request, Sampling, Scheduling, TextPart
from sieval.model import Model

pytestmark = pytest.mark.live


async def test_every_probe_case_holds_on_vllm(vllm_url: str) -> None:
    facts, results = await run_probe("anthropic_messages", vllm_url, "gemma-3-270m")
    assert facts["version"] == {"version": "0.32.0"}
    assert [r.case for r in results] == [c.name for c in cases_for("anthropic_messages")]
    failed = [(r.case, r.outcome, r.detail) for r in results if not r.passed]
    assert failed == []
    assert {r.reported_model for r in results if r.outcome == "ok"} == {"gemma-3-270m"}


def chat(text: str, **groups: object) -> Request:
    return Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text=text),)),)),
        **groups,  # type: ignore[arg-type]
    )


async def test_a_keyless_vllm_takes_the_hosted_headers_and_streams_the_same_answer(
    vllm_url: str,
) -> None:
    sampling = Sampling(temperature=0.0, max_tokens=6)
    async with Model(
        dialect=DIALECT, base_url=vllm_url, model_id="gemma-3-270m", api_key="sk-not-checked"
    ) as model:
        assert model.headers["x-api-key"] == "sk-not-checked"
        plain = await model.call(chat("Name a colour.", sampling=sampling))
        streamed = await model.run(
            chat("Name a colour.", sampling=sampling, scheduling=Scheduling(stream=True))
        )
    assert plain.status == 200 and plain.body is not None
    assert plain.body["max_tokens"] == 6 and "x-api-key" not in str(plain.body)
    assert plain.result().choices == streamed.choices
    assert streamed.usage.output_tokens == 6 and streamed.choices[0].finish_reason == "max_tokens"
