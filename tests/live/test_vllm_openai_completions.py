"""Live: openai_completions against the real vLLM 0.32.0 serving Gemma 3 270M."""

from __future__ import annotations

import pytest

from sieval.ir.request import Request, Sampling, Scheduling, Scoring
from sieval.model import Model

pytestmark = pytest.mark.live

PROMPTS = [
    "Question: Which gas do plants absorb?\nAnswer: carbon dioxide",
    "中国的首都是北京。",
    "  leading spaces,\ttabs and\nnew lines  ",
]


def model(url: str) -> Model:
    return Model(dialect="openai_completions", base_url=url, model_id="gemma-3-270m")


@pytest.mark.parametrize("prompt", PROMPTS)
async def test_echo_scoring_returns_every_prompt_position(vllm_url: str, prompt: str) -> None:
    async with model(vllm_url) as m:
        r = await m.run(
            Request.completion(
                prompt,
                sampling=Sampling(temperature=0.0, max_tokens=1),
                scoring=Scoring(input_logprobs=True, input_top_k=2),
            )
        )
    tokens = r.input_tokens
    assert len(tokens) == r.usage.input_tokens
    assert tokens[0].logprob is None
    assert all(t.logprob is not None and t.logprob <= 0 for t in tokens[1:])
    ends = [t.offset for t in tokens[1:]] + [len(prompt)]
    assert "".join(prompt[t.offset : end] for t, end in zip(tokens, ends, strict=True)) == prompt
    for t, end in zip(tokens[1:], ends[1:], strict=True):
        assert prompt[t.offset : end] == t.text
    assert r.model == "gemma-3-270m"


async def test_stream_and_non_stream_agree(vllm_url: str) -> None:
    base = Request.completion(
        "The capital of France is",
        sampling=Sampling(temperature=0.0, max_tokens=5),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    )
    streamed = Request.completion(
        "The capital of France is",
        sampling=base.sampling,
        scoring=base.scoring,
        scheduling=Scheduling(stream=True),
    )
    async with model(vllm_url) as m:
        a, b = await m.run(base), await m.run(streamed)
    assert a.choices[0].text == b.choices[0].text
    assert [t.text for t in a.choices[0].tokens] == [t.text for t in b.choices[0].tokens]
