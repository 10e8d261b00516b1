"""Request invariants: each error names the leaf."""

from __future__ import annotations

import pytest

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lower
from sieval.errors import Refused
from sieval.ir.request import (
    ChatInput,
    CompletionInput,
    ImagePart,
    Message,
    Reasoning,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
)
from sieval.ir.validate import validate

BAD = [
    (Request(input=CompletionInput()), "input.completion.text"),
    (Request(input=CompletionInput(text="a", token_ids=(1,))), "input.completion.text"),
    (Request(input=CompletionInput(token_ids=())), "input.completion.token_ids"),
    (Request(input=ChatInput(messages=())), "input.chat.messages"),
    (
        Request(input=ChatInput(messages=(Message(role="user", content=(ImagePart(),)),))),
        "input.chat.messages.content.image",
    ),
    (Request.completion("x", sampling=Sampling(n=0)), "sampling.n"),
    (Request.completion("x", sampling=Sampling(temperature=-1.0)), "sampling.temperature"),
    (Request.completion("x", sampling=Sampling(temperature=float("nan"))), "sampling.temperature"),
    (Request.completion("x", sampling=Sampling(top_p=0.0)), "sampling.top_p"),
    (Request.completion("x", sampling=Sampling(max_tokens=-1)), "sampling.max_tokens"),
    (Request.completion("x", sampling=Sampling(stop=("",))), "sampling.stop"),
    (Request.completion("x", sampling=Sampling(n=2, temperature=0.0)), "sampling.n"),
    (Request.completion("x", scoring=Scoring(input_top_k=-1)), "scoring.input_top_k"),
    (Request.completion("x", scoring=Scoring(sampled_top_k=-2)), "scoring.sampled_top_k"),
    (Request.completion("x", scoring=Scoring(input_top_k=5)), "scoring.input_top_k"),
    (Request.completion("x", scoring=Scoring(sampled_top_k=5)), "scoring.sampled_top_k"),
    (
        Request.completion("x", structured_output=StructuredOutput(format="json_schema")),
        "structured_output.schema",
    ),
    (
        Request.completion("x", structured_output=StructuredOutput(schema={"type": "object"})),
        "structured_output.schema",
    ),
    (
        Request.completion("x", reasoning=Reasoning(effort="low", budget_tokens=100)),
        "reasoning.budget_tokens",
    ),
    (Request.completion("x", reasoning=Reasoning(budget_tokens=0)), "reasoning.budget_tokens"),
    (Request.completion("x", scheduling=Scheduling(timeout_s=0.0)), "scheduling.timeout_s"),
]


@pytest.mark.parametrize(("request_", "leaf"), BAD, ids=[leaf for _, leaf in BAD])
def test_invalid_request_names_its_leaf(request_: Request, leaf: str) -> None:
    with pytest.raises(Refused) as info:
        validate(request_)
    assert info.value.path == leaf
    assert leaf in str(info.value)


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (
            Request.completion("x", sampling=Sampling(n=2, temperature=0.7, top_p=1.0)),
            {"n": 2, "top_p": 1.0},
        ),
        (
            Request.completion(
                "x",
                sampling=Sampling(max_tokens=0, temperature=0.0),
                scoring=Scoring(input_logprobs=True),
            ),
            {"max_tokens": 0, "echo": True},
        ),
        (Request.completion("x", scoring=Scoring(input_logprobs=True)), {"logprobs": 0}),
        (Request(input=CompletionInput(token_ids=(2, 5))), {"prompt": [2, 5]}),
    ],
    ids=["n2-top_p-1", "max_tokens-0", "top_k-0", "token-ids"],
)
def test_boundary_values_are_legal_and_reach_the_wire(request_: Request, expected: dict) -> None:
    """The edges of each rule pass validation (an over-strict check would refuse them)."""
    body = lower(get_dialect("openai_completions"), request_, "m").body
    assert {key: body[key] for key in expected} == expected
