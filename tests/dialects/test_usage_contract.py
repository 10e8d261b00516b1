"""Usage is a contract on every wire: a recorded reply of each of the seven dialects, its usage
broken one way at a time, is refused as a ``ContractViolation`` naming the count as the wire
spells it (``channels.lift_usage`` / ``channels.checked_usage``: the shared channel code).

What each wire's usage must satisfy:

* every count it reports is a whole number from 0 to ``MAX_TOKEN_COUNT`` (all seven; a bool or a
  float is already refused by the reply's typed decoding);
* the cached tokens are at most the prompt's (OpenAI's ``prompt_tokens_details.cached_tokens``,
  Responses' ``input_tokens_details.cached_tokens``, Google's ``cachedContentTokenCount``,
  SGLang's ``cached_tokens``; Anthropic's cache reads are added into its input, so they fit);
* the reasoning tokens are at most the output's (OpenAI's and Responses'
  ``..._details.reasoning_tokens``, SGLang's ``reasoning_tokens``; Google's thoughts are added
  into its output);
* the total is exactly input + output (the OpenAI family's and Responses' ``total_tokens``), or
  at least prompt + candidates (Google's ``totalTokenCount``, which may count more); Anthropic and
  SGLang report no total.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import load_fixture

from dialects import golden
from sieval.dialects.registry import get_dialect
from sieval.dialects.reply_checks import MAX_TOKEN_COUNT
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation
from sieval.ir.response import Response

FIXTURE = {
    "openai_completions": "echo_top3",
    "vllm_native": "prompt_logprobs_top3_ids",
    "openai_chat": "plain",
    "openai_responses": "plain",
    "anthropic_messages": "plain",
    "google_genai": "plain",
    "sglang_native": "seed_11",
}
USAGE = {
    "openai_completions": "usage",
    "vllm_native": "usage",
    "openai_chat": "usage",
    "openai_responses": "usage",
    "anthropic_messages": "usage",
    "google_genai": "usageMetadata",
    "sglang_native": "meta_info",
}
"""Where each wire keeps its counts."""
NAMES = {
    # dialect: (input, output, total or None, cached or None, reasoning or None)
    "openai_completions": (
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details.cached_tokens",
        "completion_tokens_details.reasoning_tokens",
    ),
    "openai_chat": (
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details.cached_tokens",
        "completion_tokens_details.reasoning_tokens",
    ),
    "openai_responses": (
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "input_tokens_details.cached_tokens",
        "output_tokens_details.reasoning_tokens",
    ),
    "anthropic_messages": ("input_tokens", "output_tokens", None, None, None),
    "google_genai": (
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
        "cachedContentTokenCount",
        None,
    ),
    "sglang_native": (
        "prompt_tokens",
        "completion_tokens",
        None,
        "cached_tokens",
        "reasoning_tokens",
    ),
}
NAMES["vllm_native"] = NAMES["openai_completions"]
DIALECTS = sorted(FIXTURE)
CASES = golden._cases()  # the requests behind the fixtures, imported once (not inside a fuzz)


def _lift(dialect: str, change: Any) -> Response:
    cases, models = CASES[dialect]
    name = FIXTURE[dialect]
    reply = copy.deepcopy(load_fixture(dialect, name, golden.VERSIONS[dialect])["reply"])
    change(reply[USAGE[dialect]])
    d = get_dialect(dialect)
    lowered = lower(d, cases[name], models.get(name, golden.MODEL))
    return lift(d, lowered, 200, {}, json.dumps(reply).encode())


def _put(usage: dict[str, Any], path: str, value: int) -> None:
    """Set the count at ``path`` (a dotted path, its objects made when absent)."""
    node = usage
    *heads, last = path.split(".")
    for head in heads:
        if not isinstance(node.get(head), dict):
            node[head] = {}
        node = node[head]
    node[last] = value


def _moved(dialect: str, usage: dict[str, Any], which: int, value: int) -> None:
    """The count ``which`` (0 input, 1 output) set to ``value``, the total moved with it: only
    that count is wrong."""
    name, total = NAMES[dialect][which], NAMES[dialect][2]
    if total is not None:
        usage[total] += value - usage[name]
    usage[name] = value


def test_every_dialect_is_covered() -> None:
    assert set(DIALECTS) == set(golden.VERSIONS)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_recorded_usage_is_believed(dialect: str) -> None:
    usage = _lift(dialect, lambda u: None).usage
    assert isinstance(usage.input_tokens, int) and usage.input_tokens > 0


@pytest.mark.parametrize("bad", [-100_000, -1, MAX_TOKEN_COUNT + 1])
@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_count_out_of_range_is_refused(dialect: str, which: int, bad: int) -> None:
    with pytest.raises(ContractViolation, match="not a token count") as info:
        _lift(dialect, lambda u: _moved(dialect, u, which, bad))
    assert info.value.path is not None and info.value.path.endswith(NAMES[dialect][which])
    assert info.value.dialect == dialect and info.value.received == bad


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if NAMES[d][3] is not None])
def test_cached_tokens_beyond_the_prompt_are_refused(dialect: str) -> None:
    def change(usage: dict[str, Any]) -> None:
        _put(usage, NAMES[dialect][3], usage[NAMES[dialect][0]] + 1)

    with pytest.raises(ContractViolation, match="more than the .* it is part of") as info:
        _lift(dialect, change)
    assert info.value.path is not None and info.value.path.endswith(NAMES[dialect][3])


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if NAMES[d][4] is not None])
def test_reasoning_tokens_beyond_the_output_are_refused(dialect: str) -> None:
    def change(usage: dict[str, Any]) -> None:
        _put(usage, NAMES[dialect][4], usage[NAMES[dialect][1]] + 1)

    with pytest.raises(ContractViolation, match="more than the .* it is part of") as info:
        _lift(dialect, change)
    assert info.value.path is not None and info.value.path.endswith(NAMES[dialect][4])


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if NAMES[d][2] is not None])
def test_a_total_below_its_parts_is_refused(dialect: str) -> None:
    def change(usage: dict[str, Any]) -> None:
        usage[NAMES[dialect][2]] = usage[NAMES[dialect][0]]  # the output left out

    with pytest.raises(ContractViolation) as info:
        _lift(dialect, change)
    assert info.value.path is not None and info.value.path.endswith(NAMES[dialect][2])


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if NAMES[d][2] == "total_tokens"])
def test_an_exact_total_above_its_parts_is_refused(dialect: str) -> None:
    with pytest.raises(ContractViolation, match="add up to"):
        _lift(dialect, lambda u: u.update(total_tokens=u["total_tokens"] + 1))


def test_google_keeps_a_total_that_counts_more() -> None:
    usage = _lift("google_genai", lambda u: u.update(totalTokenCount=u["totalTokenCount"] + 5))
    assert usage.usage.reported_total_tokens == 29 + 5


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_bool_or_float_count_is_refused(dialect: str) -> None:
    for bad in (True, 3.0):
        with pytest.raises(ContractViolation, match="expected shape"):
            _lift(dialect, lambda u, bad=bad: u.update({NAMES[dialect][0]: bad}))
