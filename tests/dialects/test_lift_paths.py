"""Each lift checks a channel whole, then walks it position by position only when that fails:
the two paths must agree on every reply, believed or refused (same Response, same error).

The walk is the reference (it is the check as first written, and names the first bad position);
these tests disable each whole-channel check and lift again, on every recorded reply of the
dialect and on fuzzed mutations of the ones with logprobs.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from conftest import load_fixture, reply_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from mutation import json_values, paths, set_at

from dialects import recorded_cases
from dialects import test_google_genai as google_cases
from dialects import test_openai_chat as chat_cases
from dialects import test_openai_responses as responses_cases
from dialects import test_sglang_native as sglang_cases
from dialects import test_vllm_native as vllm_cases
from sieval.dialects import checks
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.dialects.wire import google as google_wire
from sieval.dialects.wire import openai_chat as chat_wire
from sieval.dialects.wire import openai_completions as completions_wire
from sieval.dialects.wire import openai_responses as responses_wire
from sieval.dialects.wire import sglang as sglang_wire
from sieval.dialects.wire import vllm as vllm_wire
from sieval.errors import SievalError
from sieval.ir.request import Request

MODEL = "gemma-3-270m"


@contextmanager
def walked() -> Iterator[None]:
    """Every whole-channel check off: each lift takes its position-by-position path."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(completions_wire, "_offsets", completions_wire._offsets_one_by_one)
        m.setattr(vllm_wire, "_scored_alone", lambda rows, ids: None)
        m.setattr(sglang_wire, "spelled", lambda texts, target: None)
        m.setattr(sglang_wire, "_tops_whole", lambda rows, triples, k: None)
        m.setattr(chat_wire, "_top_k", chat_wire._top_k_one_by_one)
        m.setattr(responses_wire, "_part_tokens", responses_wire._part_tokens_one_by_one)
        m.setattr(google_wire, "_top_k", google_wire._top_k_one_by_one)
        # ``Checker.logprobs`` without its whole-list sum and max: each value looked at
        m.setattr(checks, "sound", lambda values: False)
        yield


def outcome(run: Callable[[], Any]) -> Any:
    """The Response, or the error's type and message."""
    try:
        return run()
    except SievalError as exc:
        return (type(exc).__name__, str(exc))


def both(run: Callable[[], Any]) -> tuple[Any, Any]:
    whole = outcome(run)
    with walked():
        return whole, outcome(run)


# -- every recorded reply -----------------------------------------------------------------------

RECORDED: list[tuple[str, str, str, Request]] = [
    *(("openai_completions", "0.32.0", n, r) for n, r in recorded_cases.CASES.items()),
    *(("vllm_native", "0.32.0", n, r) for n, r in vllm_cases.CASES.items()),
    *(("openai_chat", "0.32.0", n, r) for n, r in chat_cases.CASES.items()),
    *(("openai_responses", "0.32.0", n, r) for n, r in responses_cases.CASES.items()),
    *(("sglang_native", "0.5.23", n, r) for n, r in sglang_cases.CASES.items()),
]


@pytest.mark.parametrize(
    ("dialect", "version", "name", "request_"), RECORDED, ids=lambda v: str(v)[:40]
)
def test_the_paths_agree_on_recorded_replies(
    dialect: str, version: str, name: str, request_: Request
) -> None:
    d = get_dialect(dialect)
    fixture = load_fixture(dialect, name, version)
    lowered = outcome(lambda: lower(d, request_, MODEL))
    if isinstance(lowered, tuple):
        pytest.skip(f"refused before any request: {lowered[1][:60]}")
    whole, walked_ = both(lambda: lift(d, lowered, fixture["status"], {}, reply_bytes(fixture)))
    assert whole == walked_


def test_a_long_echo_takes_the_whole_channel_path_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """500 positions, as a PPL prompt: the usual reply is never walked, and both read it alike."""
    fixture = load_fixture("openai_completions", "echo_score")
    reply = copy.deepcopy(fixture["reply"])
    choice, lp = reply["choices"][0], reply["choices"][0]["logprobs"]
    pieces = list(zip(lp["tokens"][1:-1], lp["token_logprobs"][1:-1], strict=True)) * 40
    prompt = "".join(t for t, _ in pieces)
    tokens = ["<bos>", *(t for t, _ in pieces), "\n"]
    lp["tokens"] = tokens
    lp["token_logprobs"] = [None, *(v for _, v in pieces), -0.5]
    lp["top_logprobs"] = [None, *({t: v} for t, v in pieces), {"\n": -0.5}]
    lp["text_offset"] = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    choice["text"] = prompt + "\n"
    reply["usage"].update(prompt_tokens=len(tokens) - 1, completion_tokens=1)
    d = get_dialect("openai_completions")
    lowered = lower(d, Request.completion(prompt, **_scoring()), MODEL)
    calls: list[int] = []
    monkeypatch.setattr(
        completions_wire,
        "_offsets_one_by_one",
        lambda *a: calls.append(1) or [],
    )
    response = lift(d, lowered, 200, {}, json.dumps(reply).encode())
    assert calls == []
    assert len(response.input_tokens) == len(tokens) - 1
    ends = [t.offset for t in response.input_tokens[2:]] + [len(prompt)]
    assert [prompt[t.offset : e] for t, e in zip(response.input_tokens[1:], ends, strict=True)] == [
        t for t, _ in pieces
    ]


def _scoring() -> dict[str, Any]:
    from sieval.ir.request import Sampling, Scoring

    return {
        "sampling": Sampling(temperature=0.0, max_tokens=1),
        "scoring": Scoring(input_logprobs=True),
    }


# -- fuzzed replies: a malformed one is refused (or believed) alike on both paths ----------------

FUZZED = [
    ("openai_completions", "0.32.0", "echo_top3", recorded_cases.CASES["echo_top3"]),
    ("openai_completions", "0.32.0", "gen_top5", recorded_cases.CASES["gen_top5"]),
    (
        "vllm_native",
        "0.32.0",
        "prompt_logprobs_top3_ids",
        vllm_cases.CASES["prompt_logprobs_top3_ids"],
    ),
    ("vllm_native", "0.32.0", "prompt_logprobs_cjk", vllm_cases.CASES["prompt_logprobs_cjk"]),
    ("openai_chat", "0.32.0", "logprobs_greedy", chat_cases.CASES["logprobs_greedy"]),
    ("openai_responses", "0.32.0", "logprobs_top3", responses_cases.CASES["logprobs_top3"]),
    ("sglang_native", "0.5.23", "score_top3", sglang_cases.CASES["score_top3"]),
    ("sglang_native", "0.5.23", "gen_top2", sglang_cases.CASES["gen_top2"]),
    ("sglang_native", "0.5.23", "score_byte_pieces", sglang_cases.CASES["score_byte_pieces"]),
    ("sglang_native", "0.5.23", "gen_stop_logprobs", sglang_cases.CASES["gen_stop_logprobs"]),
]


@pytest.mark.parametrize(
    ("dialect", "version", "name", "request_"), FUZZED, ids=lambda v: str(v)[:30]
)
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_paths_agree_on_mutated_replies(
    dialect: str,
    version: str,
    name: str,
    request_: Request,
    data: st.DataObject,
) -> None:
    reply = copy.deepcopy(load_fixture(dialect, name, version)["reply"])
    path = data.draw(st.sampled_from(paths(reply)[1:]))
    set_at(reply, path, data.draw(json_values))
    d = get_dialect(dialect)
    lowered = lower(d, request_, MODEL)
    body = json.dumps(reply).encode()
    whole, walked_ = both(lambda: lift(d, lowered, 200, {}, body))
    assert whole == walked_


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_paths_agree_on_mutated_google_replies(data: st.DataObject) -> None:
    """google_genai's logprobs (the reference server's Google route: LiteLLM drops them)."""
    reply = copy.deepcopy(google_cases.LOGPROBS_REPLY)
    path = data.draw(st.sampled_from(paths(reply)[1:]))
    set_at(reply, path, data.draw(json_values))
    body = json.dumps(reply).encode()
    low = google_cases.LOGPROBS
    whole, walked_ = both(lambda: lift(google_cases.D, low, 200, {}, body))
    assert whole == walked_
