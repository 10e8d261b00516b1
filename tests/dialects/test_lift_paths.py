"""Each channel primitive checks a channel whole, then walks it position by position only when
that finds a doubt: the two paths must agree on every reply, believed or refused (same Response,
same error).

The walk is the reference (it names the first bad position); ``checks.walked()`` turns every
whole-channel path off at once (no module is patched), and these tests lift every recorded reply
of every dialect, and fuzzed mutations of the ones with logprobs, both ways.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import load_fixture, reply_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from mutation import json_values, paths, set_at

from dialects import golden, recorded_cases
from dialects import test_google_genai as google_cases
from dialects import test_openai_chat as chat_cases
from dialects import test_openai_responses as responses_cases
from dialects import test_sglang_native as sglang_cases
from dialects import test_vllm_native as vllm_cases
from sieval.dialects import channels
from sieval.dialects.registry import get_dialect
from sieval.dialects.reply_checks import walked
from sieval.dialects.table import lift, lower
from sieval.errors import SievalError
from sieval.ir.request import Request

MODEL = "gemma-3-270m"


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


def _lowers(dialect: str, name: str, request: Request) -> bool:
    model = golden._cases()[dialect][1].get(name, MODEL)
    return not isinstance(outcome(lambda: lower(get_dialect(dialect), request, model)), tuple)


RECORDED: list[tuple[str, str, str, Request]] = [
    (dialect, golden.VERSIONS[dialect], name, request)
    for dialect, (cases, _) in golden._cases().items()
    for name, request in cases.items()
    if (golden.FIXTURES / dialect / golden.VERSIONS[dialect] / f"{name}.json").exists()
    and _lowers(dialect, name, request)  # a request refused before I/O has no reply to read
]


@pytest.mark.parametrize(
    ("dialect", "version", "name", "request_"), RECORDED, ids=lambda v: str(v)[:40]
)
def test_the_paths_agree_on_recorded_replies(
    dialect: str, version: str, name: str, request_: Request
) -> None:
    d = get_dialect(dialect)
    fixture = load_fixture(dialect, name, version)
    model = golden._cases()[dialect][1].get(name, MODEL)
    lowered = lower(d, request_, model)
    whole, walked_ = both(lambda: lift(d, lowered, fixture["status"], {}, reply_bytes(fixture)))
    assert whole == walked_


def test_a_long_echo_takes_the_whole_channel_path_and_agrees() -> None:
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
    reply["usage"].update(
        prompt_tokens=len(tokens) - 1, completion_tokens=1, total_tokens=len(tokens)
    )
    d = get_dialect("openai_completions")
    lowered = lower(d, Request.completion(prompt, **_scoring()), MODEL)
    # the usual reply passes the whole check, so the walk is never taken
    whole = channels.located_whole(tokens, lp["text_offset"], choice["text"], 0)
    assert whole is not None and whole[1:] == [o - 5 for o in lp["text_offset"][1:]]
    body = json.dumps(reply).encode()
    response, walked_ = both(lambda: lift(d, lowered, 200, {}, body))
    assert response == walked_
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
