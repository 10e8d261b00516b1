"""Every fault mode on every wire, streamed or not: the client records the call correctly
(failed with the right error class, or retried and succeeded), through the real transport."""

from __future__ import annotations

import itertools

import pytest

from sieval.dialects.registry import registry
from sieval.ir.request import (
    ChatInput,
    CompletionInput,
    Message,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    TextPart,
)
from sieval.model import Call, Model
from sieval.reference import ReferenceServer
from sieval.reference.faults import MODES
from sieval.transport import Limits, Timeouts

DIALECTS = sorted(registry())
COMPLETION = ("openai_completions", "vllm_native", "sglang_native")
NO_LOGPROBS = ("anthropic_messages",)  # a wire without a logprobs channel
TEXT = "The sun is a star."

# the fault header of each mode; transient ones fire once (a retry then succeeds)
FAULTS = {
    "429": "429; times=1; retry-after=0",
    "500": "500; times=1",
    "503": "503; times=1",
    "reset": "reset; times=1",
    "html": "html; times=1",
    "delay": "delay; seconds=0.05",
    "truncate": "truncate",
    "stream-error": "stream-error",
    "short-prompt-logprobs": "short-prompt-logprobs",
    "topk-short": "topk-short",
    "nan": "nan",
    "usage-off": "usage-off",
    "usage-negative": "usage-negative",
    "no-bos": "no-bos",
    "batch-variant": "batch-variant",
    "cache-variant": "cache-variant",
    "nondeterministic": "nondeterministic",
    "fingerprint-changing": "fingerprint-changing",
    "sampling-default": "sampling-default",
    "tool-calls-as-text": "tool-calls-as-text",
    "tool-call-dropped": "tool-call-dropped",
    "tool-calls-empty": "tool-calls-empty",
    "judge-unparseable": "judge-unparseable",
}
NUMERIC = ("batch-variant", "cache-variant", "nondeterministic", "fingerprint-changing")
"""The serving checks' faults: they change numbers, never a reply's shape (every reply passes)."""
ANSWER_FAULTS = ("tool-calls-as-text", "tool-call-dropped", "tool-calls-empty", "judge-unparseable")
"""Faults of the tool parser and the judge: a request with no tools and no verdict is untouched
(``test_tool_calls.py`` and ``test_judge.py`` show them firing)."""
OK = "ok"
RETRIED = "retried"

# usage-off is caught only where the reply has a second count to hold usage against
_USAGE_CHECKED = {
    ("openai_completions", False),
    ("vllm_native", False),
    ("vllm_native", True),  # vllm_native never streams: the same POST either way
    ("sglang_native", False),
    ("openai_chat", False),
    ("openai_chat", True),
    ("google_genai", False),
    ("google_genai", True),
}


def expected(dialect: str, stream: bool, mode: str) -> str:
    """``ok``, ``retried`` (ok on the second attempt) or the error class the call must end in."""
    if mode in ("429", "500", "503", "reset", "html"):
        return RETRIED
    if mode in ("delay", "no-bos", "sampling-default", *NUMERIC, *ANSWER_FAULTS):
        return OK
    if mode == "truncate":
        return "ContractViolation"
    if mode == "stream-error":
        return "TransportError"  # in band on a stream; a 500 on every attempt otherwise
    if mode == "usage-off":
        return "ContractViolation" if (dialect, stream) in _USAGE_CHECKED else OK
    if mode == "usage-negative":  # usage is a contract on every wire, streamed or not
        return "ContractViolation"
    return OK if dialect in NO_LOGPROBS else "ContractViolation"


def request(dialect: str, stream: bool) -> Request:
    scoring = (
        Scoring() if dialect in NO_LOGPROBS else Scoring(sampled_logprobs=True, sampled_top_k=2)
    )
    if dialect in COMPLETION:
        prompt = CompletionInput(text=TEXT)
        if not stream or dialect == "vllm_native":  # streamed choices carry no prompt scoring
            scoring = Scoring(
                sampled_logprobs=True, sampled_top_k=2, input_logprobs=True, input_top_k=2
            )
        input_: CompletionInput | ChatInput = prompt
    else:
        input_ = ChatInput(messages=(Message(role="user", content=(TextPart(text=TEXT),)),))
    return Request(
        input=input_,
        sampling=Sampling(max_tokens=4, temperature=0.0),
        scoring=scoring,
        scheduling=Scheduling(stream=stream),
    )


async def call(
    server: ReferenceServer, dialect: str, stream: bool, fault: str | None, key: str
) -> Call:
    headers = {} if fault is None else {"x-sieval-fault": fault, "x-sieval-fault-key": key}
    async with Model(
        dialect=dialect,
        base_url=server.url,
        model_id=server.model_name,
        headers=headers,
        limits=Limits(retries=2, backoff_base_s=0.001, backoff_max_s=0.002),
        timeouts=Timeouts(total=10, read=10, connect=2),
    ) as model:
        return await model.call(request(dialect, stream))


def test_the_table_covers_every_mode_and_dialect() -> None:
    assert set(FAULTS) == MODES
    assert {*COMPLETION, "openai_chat", "openai_responses", *NO_LOGPROBS, "google_genai"} == set(
        DIALECTS
    )


@pytest.mark.parametrize(
    ("mode", "dialect", "stream"),
    list(itertools.product(sorted(FAULTS), DIALECTS, [False, True])),
)
async def test_every_fault_on_every_wire(
    server: ReferenceServer, mode: str, dialect: str, stream: bool
) -> None:
    key = f"{mode}-{dialect}-{stream}"
    got = await call(server, dialect, stream, FAULTS[mode], key)
    want = expected(dialect, stream, mode)
    outcome = "ok" if got.ok else f"{type(got.error).__name__}: {got.error}"
    if want in (OK, RETRIED):
        assert got.ok, outcome
        assert got.attempts == (2 if want == RETRIED else 1), outcome
    else:
        assert not got.ok and type(got.error).__name__ == want, outcome
    if mode == "usage-negative":  # refused for its count, not for anything else
        assert "is -100000, not a token count" in outcome, outcome
    if mode in ("nondeterministic", "fingerprint-changing"):  # no error, but other numbers
        clean = await call(server, dialect, stream, None, key)
        assert got.response is not None and clean.response is not None
        if dialect not in NO_LOGPROBS:
            assert _numbers(got.response) != _numbers(clean.response)
    if mode == "no-bos":  # no error to see, but the fault did happen: one prompt token fewer
        clean = await call(server, dialect, stream, None, key)
        assert got.response is not None and clean.response is not None
        assert got.response.usage.input_tokens == clean.response.usage.input_tokens - 1


def _numbers(response: object) -> list[float]:
    """Every log-probability of a response's first choice (and of its prompt)."""
    from sieval.ir.response import Response

    assert isinstance(response, Response)
    tokens = list(response.input_tokens or ()) + list(response.choices[0].tokens or ())
    return [t.logprob for t in tokens if isinstance(t.logprob, float)]
