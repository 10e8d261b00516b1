"""Fuzz every lift: a malformed reply raises a sieval error or lifts; it never crashes otherwise."""

from __future__ import annotations

import copy
import json
from typing import Any

from conftest import load_fixture
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET
from mutation import json_values, paths, set_at

from dialects import test_usage_contract as usage_cases
from sieval.dialects.registry import get_dialect
from sieval.dialects.reply_checks import MAX_TOKEN_COUNT
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation, SievalError
from sieval.ir.request import Request, Sampling, Scheduling, Scoring

D = get_dialect("openai_completions")
QA = "Question: What is the capital of France?\nAnswer: Paris"
ECHO = lower(
    D,
    Request.completion(
        QA,
        sampling=Sampling(temperature=0.0, max_tokens=1),
        scoring=Scoring(input_logprobs=True, input_top_k=3),
    ),
    "gemma-3-270m",
)
STREAM = lower(
    D,
    Request.completion(
        "The capital of France is",
        sampling=Sampling(temperature=0.0, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=1),
        scheduling=Scheduling(stream=True),
    ),
    "gemma-3-270m",
)
REPLY = load_fixture("openai_completions", "echo_top3")["reply"]
SSE = load_fixture("openai_completions", "stream")["reply_sse"]

PATHS = paths(REPLY)[1:]


def _lift_or_sieval_error(lowered, body: bytes) -> None:
    try:
        response = lift(D, lowered, 200, {}, body)
    except SievalError:
        return
    assert len(response.choices) == 1


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATHS), json_values)
def test_mutated_reply(path: tuple, value: Any) -> None:
    reply = copy.deepcopy(REPLY)
    set_at(reply, path, value)
    _lift_or_sieval_error(ECHO, json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(body: bytes) -> None:
    _lift_or_sieval_error(ECHO, body)
    _lift_or_sieval_error(STREAM, body)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(SSE)), st.text(max_size=8))
def test_cut_or_spliced_stream(cut: int, junk: str) -> None:
    _lift_or_sieval_error(STREAM, (SSE[:cut] + junk + SSE[cut:]).encode())


NATIVE = get_dialect("vllm_native")
NATIVE_LOWERED = lower(
    NATIVE,
    Request.completion(
        QA,
        sampling=Sampling(temperature=0.0, max_tokens=1),
        scoring=Scoring(input_logprobs=True, input_top_k=3, token_ids=True),
    ),
    "gemma-3-270m",
)
NATIVE_REPLY = load_fixture("vllm_native", "prompt_logprobs_top3_ids")["reply"]
NATIVE_PATHS = paths(NATIVE_REPLY)[1:]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NATIVE_PATHS), json_values)
def test_mutated_vllm_native_reply(path: tuple, value: Any) -> None:
    reply = copy.deepcopy(NATIVE_REPLY)
    set_at(reply, path, value)
    try:
        response = lift(NATIVE, NATIVE_LOWERED, 200, {}, json.dumps(reply).encode())
    except SievalError:
        return
    assert len(response.input_tokens) == response.usage.input_tokens


# -- usage, on every wire -------------------------------------------------------------------------

_counts = st.integers(-(2**40), 2**40) | st.integers(-3, 40) | st.booleans() | st.floats()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(usage_cases.DIALECTS), st.data())
def test_fuzzed_usage_is_refused_or_holds_together(dialect: str, data: st.DataObject) -> None:
    """Any counts in any usage field: the reply is refused as a ContractViolation, or the usage
    believed holds together (counts in range, parts within their wholes, the total checked)."""
    names = [n for n in usage_cases.NAMES[dialect] if n is not None]
    chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    values = [data.draw(_counts) for _ in chosen]

    def change(usage: dict[str, Any]) -> None:
        for name, value in zip(chosen, values, strict=True):
            usage_cases._put(usage, name, value)

    try:
        usage = usage_cases._lift(dialect, change).usage
    except ContractViolation:
        return
    counts = [usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens]
    reported = [v for v in counts if v is not UNSET]
    assert all(type(v) is int and 0 <= v <= MAX_TOKEN_COUNT for v in reported)
    if usage.cached_tokens is not UNSET and usage.input_tokens is not UNSET:
        assert usage.cached_tokens <= usage.input_tokens
    if usage.reasoning_tokens is not UNSET and usage.output_tokens is not UNSET:
        assert usage.reasoning_tokens <= usage.output_tokens
    if usage.reported_total_tokens is not UNSET:
        assert dialect == "google_genai" or usage.total_tokens is UNSET
        assert usage.reported_total_tokens >= 0
