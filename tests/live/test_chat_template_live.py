"""Live: ``--apply-chat-template`` against the real vLLM 0.32.0 serving Gemma 3 270M
(scripts/live-vllm.sh). A chat prompt sent on ``/v1/completions`` through the server's own
template (its ``/tokenize`` with messages) is the very prompt vLLM's chat route builds: the
token ids it reports for the same messages (``return_token_ids``), one BOS, and the same greedy
answer. Three short requests; docs/evidence/chat-template-live.md has a GSM8K run."""

from __future__ import annotations

import pytest

from sieval.ir.request import ChatInput, Message, Request, Sampling, TextPart
from sieval.model import Model

pytestmark = pytest.mark.live

MESSAGES = (("system", "Answer briefly."), ("user", "What is 2+3?"))


async def test_the_templated_prompt_is_the_chat_routes(vllm_url: str) -> None:
    chat = ChatInput(
        messages=tuple(Message(role=r, content=(TextPart(text=t),)) for r, t in MESSAGES)  # type: ignore[arg-type]
    )
    request = Request(input=chat, sampling=Sampling(temperature=0.0, max_tokens=6))
    async with (
        Model(
            dialect="openai_completions", base_url=vllm_url, model_id="gemma-3-270m",
            chat_template=True,
        ) as completions,
        Model(dialect="openai_chat", base_url=vllm_url, model_id="gemma-3-270m") as chatting,
    ):  # fmt: skip
        sent = await completions.call(request)
        answered = await chatting.call(request)
        status, reported = await chatting.fetch(
            "/v1/chat/completions",
            {
                "model": "gemma-3-270m",
                "messages": [{"role": r, "content": t} for r, t in MESSAGES],
                "max_tokens": 1,
                "temperature": 0.0,
                "return_token_ids": True,
            },
        )
    assert status == 200 and sent.body is not None
    ids = sent.body["prompt"]
    assert ids == reported["prompt_token_ids"]  # the chat route's own prompt, token for token
    assert ids[0] == 2 and ids.count(2) == 1  # Gemma's BOS, once: the template's
    assert sent.result().choices[0].text == answered.result().choices[0].text
    assert sent.result().usage == answered.result().usage
