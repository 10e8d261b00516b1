"""A reply nested deeper than the JSON decoder follows (100,000 levels) is a reply not believed,
never a crash: every place a reply's JSON is decoded turns msgspec's ``RecursionError`` into the
taxonomy (a ``ContractViolation`` for a 2xx reply, the status's own error otherwise), and the
retry hooks that peek into a stream simply find no error in it."""

from __future__ import annotations

import pytest

from dialects import golden
from sieval.dialects.channels import tool_arguments
from sieval.dialects.envelopes import server_message
from sieval.dialects.registry import get_dialect
from sieval.dialects.reply_checks import Checker
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation, ServerRejected, SievalError, TransportError

DEPTH = 100_000
DEEP = b"[" * DEPTH + b"]" * DEPTH
CASES = golden._cases()
PLAIN = {
    "openai_completions": "gen_top5",
    "vllm_native": "prompt_logprobs_top3_ids",
    "openai_chat": "plain",
    "openai_responses": "plain",
    "anthropic_messages": "plain",
    "google_genai": "plain",
    "sglang_native": "seed_11",
}
STREAM = {
    "openai_completions": "stream",
    "openai_chat": "stream",
    "openai_responses": "stream_plain",
    "anthropic_messages": "stream",
    "google_genai": "stream",
    "sglang_native": "stream",
}


def _lowered(dialect: str, name: str):  # type: ignore[no-untyped-def]
    cases, models = CASES[dialect]
    return lower(get_dialect(dialect), cases[name], models.get(name, golden.MODEL))


def _bodies() -> list[tuple[bytes, str]]:
    """Deep bodies, and what the refusal says: a shape error where the decoder meets an array
    where it wants an object, else (a key it skips, or one it keeps as any JSON) the depth."""
    return [
        (DEEP, "expected shape"),
        (b'{"unknown": ' + DEEP + b"}", "nested deeper"),
        (b'{"error": ' + DEEP + b"}", "nested deeper|expected shape"),
    ]


@pytest.mark.parametrize("dialect", sorted(PLAIN))
def test_a_deep_reply_is_a_contract_violation(dialect: str) -> None:
    lowered = _lowered(dialect, PLAIN[dialect])
    for body, said in _bodies():
        with pytest.raises(ContractViolation, match=said):
            lift(get_dialect(dialect), lowered, 200, {}, body)


@pytest.mark.parametrize("dialect", sorted(STREAM))
def test_a_deep_stream_event_is_a_contract_violation(dialect: str) -> None:
    lowered = _lowered(dialect, STREAM[dialect])
    assert lowered.stream
    d = get_dialect(dialect)
    for data, _ in _bodies():
        body = b"event: message_start\ndata: " + data + b"\n\n" + b"data: [DONE]\n\n"
        with pytest.raises(ContractViolation):
            lift(d, lowered, 200, {}, body)
        plain = b"data: " + data + b"\n\n" + b"data: [DONE]\n\n"
        with pytest.raises(ContractViolation):
            lift(d, lowered, 200, {}, plain)
        # the transport's retry hook peeks at a 2xx stream for an error event
        assert d.retry.in_band is None or d.retry.in_band(plain) in (None, 500)


@pytest.mark.parametrize("dialect", sorted(PLAIN))
@pytest.mark.parametrize("status", [400, 500])
def test_a_deep_error_body_is_the_status_error(dialect: str, status: int) -> None:
    lowered = _lowered(dialect, PLAIN[dialect])
    with pytest.raises(SievalError) as info:
        lift(get_dialect(dialect), lowered, status, {}, b'{"error": ' + DEEP + b"}")
    assert isinstance(info.value, ServerRejected if status == 400 else TransportError)
    assert server_message(DEEP).startswith("[[[")


def test_deep_tool_arguments_are_refused() -> None:
    with pytest.raises(ContractViolation, match="nested deeper"):
        tool_arguments(Checker("w"), "calls[0].arguments", "f", DEEP.decode())


def test_a_deep_structured_output_is_refused() -> None:
    with pytest.raises(ContractViolation, match="nested deeper"):
        Checker("w").json_value("choices[0].text", DEEP.decode(), cut=False)
