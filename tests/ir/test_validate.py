"""Request invariants: each error names the leaf."""

from __future__ import annotations

import pytest

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lower
from sieval.errors import Refused
from sieval.ir.ranges import out_of_range
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
    # out of the ranges of ranges.py: once a traceback in the JSON encoder or an endless request
    (Request.completion("x", sampling=Sampling(n=129, temperature=1.0)), "sampling.n"),
    (Request.completion("x", sampling=Sampling(top_p=float("nan"))), "sampling.top_p"),
    (Request.completion("x", sampling=Sampling(top_k=-2)), "sampling.top_k"),
    (Request.completion("x", sampling=Sampling(top_k=2**31)), "sampling.top_k"),
    (Request.completion("x", sampling=Sampling(max_tokens=2**40)), "sampling.max_tokens"),
    (Request.completion("x", sampling=Sampling(seed=2**64)), "sampling.seed"),
    (
        Request.completion("x", sampling=Sampling(frequency_penalty=float("nan"))),
        "sampling.frequency_penalty",
    ),
    (Request.completion("x", sampling=Sampling(presence_penalty=2.5)), "sampling.presence_penalty"),
    (
        Request.completion(
            "x", scoring=Scoring(sampled_logprobs=True, candidate_token_ids=(1, -1))
        ),
        "scoring.candidate_token_ids",
    ),
    (
        Request.completion("x", scheduling=Scheduling(timeout_s=float("inf"))),
        "scheduling.timeout_s",
    ),
]


@pytest.mark.parametrize(("request_", "leaf"), BAD, ids=[leaf for _, leaf in BAD])
def test_invalid_request_names_its_leaf(request_: Request, leaf: str) -> None:
    with pytest.raises(Refused) as info:
        validate(request_)
    assert info.value.path == leaf
    assert leaf in str(info.value)


@pytest.mark.parametrize(
    ("leaf", "value", "said"),
    [
        ("sampling.n", 129, "must be an integer in [1, 128]"),
        ("sampling.top_p", 0.0, "must be a finite number in (0, 1]"),
        ("sampling.temperature", float("nan"), "must be a finite number >= 0"),
        (
            "scoring.candidate_token_ids",
            (1, -1),
            "must be an integer in [0, 2147483647] (each of them)",
        ),
    ],
)
def test_a_value_out_of_range_says_the_range(leaf: str, value: object, said: str) -> None:
    assert out_of_range(leaf, value) == said


@pytest.mark.parametrize(
    ("leaf", "value"),
    [
        ("sampling.n", 128),
        ("sampling.top_p", 1.0),
        ("sampling.top_k", -1),
        ("sampling.seed", -(2**63)),
        ("sampling.presence_penalty", -2.0),
        ("sampling.temperature", 0),
    ],
)
def test_the_edges_of_a_range_are_in_it(leaf: str, value: object) -> None:
    assert out_of_range(leaf, value) is None


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
