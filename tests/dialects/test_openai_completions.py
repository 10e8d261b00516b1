"""openai_completions lowered and lifted against replies recorded from the real vLLM 0.32.0."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import load_fixture, reply_bytes

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation, Refused, ServerRejected, TransportError
from sieval.ir.request import (
    ChatInput,
    CompletionInput,
    Message,
    Request,
    Sampling,
    Scoring,
    StructuredOutput,
    TextPart,
)
from sieval.ir.response import Response

from .recorded_cases import CASES, QA

D = get_dialect("openai_completions")
MODEL = "gemma-3-270m"


def run(name: str, request: Request | None = None) -> Response:
    fixture = load_fixture("openai_completions", name)
    request = request or CASES[name]
    lowered = lower(D, request, MODEL)
    assert lowered.body == fixture["request"], "lowering drifted from the recorded body"
    return lift(D, lowered, fixture["status"], {}, reply_bytes(fixture))


def test_echo_scoring_splits_at_prompt_tokens_with_offsets_on_the_prompt() -> None:
    r = run("echo_top3")
    toks = r.input_tokens
    assert len(toks) == r.usage.input_tokens == 14
    assert toks[0].text == "<bos>" and toks[0].logprob is None and toks[0].offset == 0
    assert all(t.logprob is not None for t in toks[1:])
    ends = [t.offset for t in toks[1:]] + [len(QA)]
    for tok, end in zip(toks, ends, strict=True):
        if tok.text != "<bos>":
            assert QA[tok.offset : end] == tok.text
    assert "".join(QA[t.offset : e] for t, e in zip(toks, ends, strict=True)) == QA
    assert r.choices[0].text == "\n"  # the completion only, never the echoed prompt
    assert r.choices[0].tokens is None or r.choices[0].tokens.__class__.__name__ == "UnsetType"


def test_echo_top_k_is_exactly_k_with_the_scored_rank() -> None:
    toks = run("echo_top3").input_tokens
    question, colon = toks[1], toks[2]
    assert len(question.top) == 3 and question.scored_rank == -1  # k+1 entries on the wire
    assert [e.token for e in question.top] == ["<h1>", "<strong>", "<start_of_image>"]
    assert len(colon.top) == 3 and colon.scored_rank == 0
    assert colon.top[0].logprob == colon.logprob
    for tok in toks[1:]:
        assert [e.logprob for e in tok.top] == sorted((e.logprob for e in tok.top), reverse=True)


def test_echo_without_top_k_has_no_alternatives() -> None:
    toks = run("echo_score").input_tokens
    assert len(toks) == 14 and all(t.top.__class__.__name__ == "UnsetType" for t in toks)
    assert toks[-1].text == " Paris" and toks[-1].logprob == pytest.approx(-0.79136824)


def test_echo_with_max_tokens_0_scores_the_prompt_only() -> None:
    r = run("echo_max_tokens_0")
    assert len(r.input_tokens) == 14
    assert r.choices[0].text == ""
    assert r.usage.output_tokens == 1  # vLLM's hidden token, counted but not echoed


def test_cjk_offsets_slice_the_prompt() -> None:
    prompt = "中国的首都是北京。"
    toks = run("echo_cjk").input_tokens
    assert [t.text for t in toks] == ["<bos>", "中国的", "首", "都是", "北京", "。"]
    assert [t.offset for t in toks] == [0, 0, 3, 4, 6, 8]
    assert prompt[toks[1].offset : toks[2].offset] == "中国的"


def test_sampled_top_k_and_offsets_in_the_completion() -> None:
    r = run("gen_top5")
    choice = r.choices[0]
    assert choice.text == " the capital of the country of France."
    assert "".join(t.text for t in choice.tokens) == choice.text
    for tok in choice.tokens:
        assert choice.text[tok.offset :].startswith(tok.text)
        assert len(tok.top) == 5
    assert r.input_tokens.__class__.__name__ == "UnsetType"


def test_stop_string_is_kept_as_stop_reason() -> None:
    choice = run("gen_stop").choices[0]
    assert choice.text == " 5, 6, 7,"
    assert choice.finish_reason == "stop" and choice.stop_reason == " 8"


def test_n2_keeps_channels_per_choice() -> None:
    r = run("n2_temp1")
    assert [c.index for c in r.choices] == [0, 1]
    assert r.choices[0].text != r.choices[1].text
    for choice in r.choices:
        assert "".join(t.text for t in choice.tokens) == choice.text
        assert all(len(t.top) == 2 for t in choice.tokens)
    assert r.usage.output_tokens == 12 == sum(len(c.tokens) for c in r.choices)


def test_stream_folds_into_the_same_response_as_non_stream() -> None:
    r = run("stream")
    choice = r.choices[0]
    assert "".join(t.text for t in choice.tokens) == choice.text
    assert len(choice.tokens) == r.usage.output_tokens == 6
    assert choice.finish_reason == "length"


def test_stream_echo_scores_like_non_stream_echo() -> None:
    streamed = run("stream_echo").input_tokens
    plain = run("echo_top3").input_tokens
    assert [(t.text, t.logprob, t.offset) for t in streamed] == [
        (t.text, t.logprob, t.offset) for t in plain
    ]


@pytest.mark.parametrize(
    ("name", "status", "kind", "needle"),
    [
        ("error_logprobs_101", 400, "top_k_cap", "greater than max allowed: 100"),
        ("error_suffix", 400, None, "FIM completion rendering"),
        ("error_context_overflow", 400, "context_overflow", "maximum context length is 4096"),
    ],
)
def test_server_errors_carry_vllms_message(name: str, status: int, kind: str | None, needle: str):
    with pytest.raises(ServerRejected) as info:
        run(name)
    assert info.value.status == status
    assert needle in info.value.server_message and needle in str(info.value)
    assert info.value.path == kind


def test_unknown_model_is_rejected_with_the_servers_words() -> None:
    fixture = load_fixture("openai_completions", "error_unknown_model")
    lowered = lower(D, Request.completion(QA, sampling=Sampling(max_tokens=1)), "no-such-model")
    assert lowered.body == fixture["request"]
    with pytest.raises(ServerRejected, match="does not exist"):
        lift(D, lowered, 404, {}, reply_bytes(fixture))


def test_a_5xx_reaching_lift_is_a_transport_error() -> None:
    lowered = lower(D, CASES["echo_score"], MODEL)
    with pytest.raises(TransportError, match="HTTP 503"):
        lift(D, lowered, 503, {}, b"<html>busy</html>")


# -- refused before I/O -------------------------------------------------------------------------

REFUSALS = [
    (Request.completion("x", scoring=Scoring(token_ids=True)), "scoring.token_ids"),
    (Request.completion("x", options={"min_p": 0.1}), "options.min_p"),
    (Request.completion("x", sampling=Sampling(top_k=5)), "sampling.top_k"),
    (Request.completion("x", sampling=Sampling(stop=("a", "b", "c", "d", "e"))), "sampling.stop"),
    (Request.completion("x", sampling=Sampling(max_tokens=0)), "sampling.max_tokens"),
    (
        Request.completion("x", structured_output=StructuredOutput(format="json_object")),
        "structured_output.format",
    ),
    (
        Request(input=ChatInput(messages=(Message(role="user", content=(TextPart(text="a"),)),))),
        "input.chat.messages",
    ),
    (
        Request.completion(
            "x",
            scoring=Scoring(
                input_logprobs=True, input_top_k=2, sampled_logprobs=True, sampled_top_k=5
            ),
        ),
        "scoring.sampled_logprobs",
    ),
    (
        Request(input=CompletionInput(text="x", suffix="y"), scoring=Scoring(input_logprobs=True)),
        "scoring.input_logprobs",
    ),
]


@pytest.mark.parametrize(("request_", "leaf"), REFUSALS, ids=[leaf for _, leaf in REFUSALS])
def test_what_the_wire_cannot_express_is_refused(request_: Request, leaf: str) -> None:
    with pytest.raises(Refused) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf
    assert info.value.dialect == "openai_completions"


def test_greedy_n2_is_refused_before_the_server_sees_it() -> None:
    assert load_fixture("openai_completions", "error_greedy_n2")["status"] == 400
    with pytest.raises(Refused, match="sampling.n"):
        lower(D, Request.completion(QA, sampling=Sampling(n=2, temperature=0.0)), MODEL)


# -- replies that must not be believed (mutations of real replies) ------------------------------


def mutated(name: str, change) -> tuple[Any, bytes]:
    fixture = load_fixture("openai_completions", name)
    reply = copy.deepcopy(fixture["reply"])
    change(reply)
    return lower(D, CASES[name], MODEL), json.dumps(reply).encode()


def _drop_position(reply: dict) -> None:
    lp = reply["choices"][0]["logprobs"]
    for key in ("tokens", "token_logprobs", "text_offset", "top_logprobs"):
        del lp[key][5]


def _usage_off(reply: dict) -> None:
    reply["usage"]["prompt_tokens"] += 1
    reply["usage"]["total_tokens"] += 1  # the usage still adds up: only the count is off


def _collapse(reply: dict) -> None:
    top = reply["choices"][0]["logprobs"]["top_logprobs"][2]  # ':' is rank 1 of 3 entries
    del top[next(k for k in top if k != ":")]


def _boundary_moved(reply: dict) -> None:
    reply["usage"]["prompt_tokens"] -= 1
    reply["usage"]["completion_tokens"] += 1


def _overwrite(reply: dict) -> None:
    reply["choices"][0]["logprobs"]["top_logprobs"][2][":"] = -5.0


def _first_scored(reply: dict) -> None:
    reply["choices"][0]["logprobs"]["token_logprobs"][0] = -1.0


def _null_inside(reply: dict) -> None:
    reply["choices"][0]["logprobs"]["token_logprobs"][4] = None


def _no_echo(reply: dict) -> None:
    reply["choices"][0]["text"] = reply["choices"][0]["text"][3:]


def _bad_offset(reply: dict) -> None:
    reply["choices"][0]["logprobs"]["text_offset"][4] += 2


def _no_usage(reply: dict) -> None:
    reply["usage"] = None


def _no_logprobs(reply: dict) -> None:
    reply["choices"][0]["logprobs"] = None


def _dup_index(reply: dict) -> None:
    reply["choices"].append(copy.deepcopy(reply["choices"][0]))


def _short_lists(reply: dict) -> None:
    reply["choices"][0]["logprobs"]["text_offset"].pop()


@pytest.mark.parametrize(
    ("name", "change", "needle"),
    [
        ("echo_top3", _drop_position, "usage says"),
        ("echo_top3", _boundary_moved, "prompt tokens cover"),
        ("echo_top3", _usage_off, "usage says"),
        ("echo_top3", _collapse, "collapsed"),
        ("echo_top3", _overwrite, "overwrote"),
        ("echo_top3", _first_scored, "must be the unscored first position"),
        ("echo_top3", _null_inside, "only the first may be unscored"),
        ("echo_top3", _no_echo, "does not echo the prompt"),
        ("echo_top3", _bad_offset, "does not locate token"),
        ("echo_top3", _no_usage, "needs usage.prompt_tokens"),
        ("echo_top3", _no_logprobs, "logprobs is missing although echo scoring asked"),
        ("echo_top3", _dup_index, "choice indices"),
        ("echo_top3", _short_lists, "has 15 tokens but"),
        ("gen_top5", _no_logprobs, "missing although logprobs were requested"),
        ("gen_top5", _short_lists, "has 8 tokens but"),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_inconsistent_replies_are_contract_violations(name: str, change, needle: str) -> None:
    lowered, body = mutated(name, change)
    with pytest.raises(ContractViolation, match=needle):
        lift(D, lowered, 200, {}, body)


def test_nan_logprob_is_a_contract_violation() -> None:
    fixture = load_fixture("openai_completions", "echo_top3")
    body = json.dumps(fixture["reply"]).replace("-0.543624222278595", "NaN", 1).encode()
    with pytest.raises(ContractViolation, match="non-finite"):
        lift(D, lower(D, CASES["echo_top3"], MODEL), 200, {}, body)


def test_truncated_json_is_a_contract_violation() -> None:
    body = reply_bytes(load_fixture("openai_completions", "echo_top3"))[:-40]
    with pytest.raises(ContractViolation, match="not valid JSON"):
        lift(D, lower(D, CASES["echo_top3"], MODEL), 200, {}, body)


def test_stream_without_done_is_truncated() -> None:
    text = load_fixture("openai_completions", "stream")["reply_sse"].replace("data: [DONE]", "")
    with pytest.raises(ContractViolation, match=r"\[DONE\]"):
        lift(D, lower(D, CASES["stream"], MODEL), 200, {}, text.encode())


def test_in_band_stream_error_is_not_an_answer() -> None:
    event = {"error": {"message": "engine died", "type": "InternalServerError", "code": 500}}
    body = f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n".encode()
    with pytest.raises(TransportError, match="engine died"):
        lift(D, lower(D, CASES["stream"], MODEL), 200, {}, body)


def test_missing_requested_channel_is_a_contract_violation() -> None:
    fixture = load_fixture("openai_completions", "gen_stop")  # recorded without logprobs
    request = Request.completion(
        "1, 2, 3, 4,",
        sampling=Sampling(temperature=0.0, max_tokens=30, stop=(" 8",)),
        scoring=Scoring(sampled_logprobs=True),
    )
    with pytest.raises(ContractViolation, match="logprobs"):
        lift(D, lower(D, request, MODEL), 200, {}, reply_bytes(fixture))


def test_special_tokens_the_text_leaves_out_cover_no_text() -> None:
    """A generated <eos> is in ``tokens`` but not in ``text``, like the echoed <bos>."""

    def eos(reply: dict) -> None:
        choice = reply["choices"][0]
        choice["text"] = choice["text"][:-1]
        choice["logprobs"]["tokens"][-1] = "<eos>"
        top = choice["logprobs"]["top_logprobs"][-1]
        top["<eos>"] = top.pop("\n")

    lowered, body = mutated("echo_top3", eos)
    r = lift(D, lowered, 200, {}, body)
    assert r.choices[0].text == ""
    assert r.input_tokens[-1].text == " Paris" and r.input_tokens[-1].offset == len(QA) - 6
