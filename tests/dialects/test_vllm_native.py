"""vllm_native lowered and lifted against replies recorded from the real vLLM 0.32.0."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import load_fixture, reply_bytes

from sieval.audit import corpus
from sieval.audit.corpus import GREEDY_1, QA
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation, Refused, ServerRejected
from sieval.ir.request import (
    CompletionInput,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
)
from sieval.ir.response import Response

D = get_dialect("vllm_native")
OC = get_dialect("openai_completions")
MODEL = "gemma-3-270m"
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}

CASES: dict[str, Request] = {
    "json_schema": Request.completion(
        "A person as JSON:",
        sampling=Sampling(temperature=0.0, max_tokens=40),
        structured_output=StructuredOutput(
            format="json_schema", schema=corpus.PERSON
        ),  # the schema the fixture recorded,
    ),
    "prompt_logprobs_top3_ids": Request.completion(
        QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=3)
    ),
    "prompt_logprobs_cjk": Request.completion(
        "中国的首都是北京。", sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=1)
    ),
    "n2_token_ids": Request.completion(
        "Once upon a time",
        sampling=Sampling(n=2, temperature=1.0, seed=7, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2, token_ids=True),
    ),
    "json_schema_cut": Request.completion(
        "A person as JSON:",
        sampling=Sampling(temperature=0.0, max_tokens=3),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON),
    ),
    "min_p_repetition_penalty": Request.completion(
        "Once upon a time",
        sampling=Sampling(temperature=1.0, seed=3, max_tokens=8),
        options={"min_p": 0.1, "repetition_penalty": 1.3},
    ),
    "error_prompt_logprobs_101": Request.completion(
        QA, sampling=Sampling(max_tokens=1), scoring=Scoring(input_logprobs=True, input_top_k=101)
    ),
}


def run(name: str) -> Response:
    fixture = load_fixture("vllm_native", name)
    lowered = lower(D, CASES[name], MODEL)
    assert lowered.body == fixture["request"], "lowering drifted from the recorded body"
    return lift(D, lowered, fixture["status"], {}, reply_bytes(fixture))


def test_prompt_logprobs_is_complete_and_keyed_by_id() -> None:
    r = run("prompt_logprobs_top3_ids")
    toks = r.input_tokens
    assert len(toks) == r.usage.input_tokens == 14
    assert toks[0].text == "" and toks[0].token_id == 2 and toks[0].logprob is None  # BOS
    question = toks[1]
    assert question.token_id == 14977 and question.scored_rank == -1
    assert [(e.token, e.token_id) for e in question.top] == [
        ("<h1>", 184),
        ("<strong>", 198),
        ("<start_of_image>", 255999),
    ]
    assert toks[2].scored_rank == 0 and toks[2].top[0].token_id == toks[2].token_id
    ends = [t.offset for t in toks[1:]] + [len(QA)]
    for t, end in zip(toks[1:], ends[1:], strict=True):
        assert QA[t.offset : end] == t.text


def test_prompt_scores_equal_the_echo_scores_of_the_same_server() -> None:
    native = run("prompt_logprobs_top3_ids").input_tokens
    echo_fixture = load_fixture("openai_completions", "echo_top3")
    echo_req = Request.completion(
        QA, sampling=GREEDY_1, scoring=Scoring(input_logprobs=True, input_top_k=3)
    )
    echo = lift(OC, lower(OC, echo_req, MODEL), 200, {}, reply_bytes(echo_fixture)).input_tokens
    assert [(t.text, t.logprob, t.offset) for t in native[1:]] == [
        (t.text, t.logprob, t.offset) for t in echo[1:]
    ]
    for a, b in zip(native[1:], echo[1:], strict=True):
        assert [(e.token, e.logprob) for e in a.top] == [(e.token, e.logprob) for e in b.top]


def test_cjk_first_token_text_is_recovered() -> None:
    toks = run("prompt_logprobs_cjk").input_tokens
    assert [t.text for t in toks] == ["", "中国的", "首", "都是", "北京", "。"]
    assert [t.offset for t in toks] == [0, 0, 3, 4, 6, 8]


def test_first_token_without_bos_is_the_prompt_prefix() -> None:
    fixture = load_fixture("vllm_native", "prompt_logprobs_cjk")
    reply = copy.deepcopy(fixture["reply"])
    choice = reply["choices"][0]
    # as a server without BOS would answer: the first position is 中国的 itself
    choice["prompt_token_ids"] = choice["prompt_token_ids"][1:]
    choice["prompt_logprobs"] = [None, *choice["prompt_logprobs"][2:]]
    reply["usage"]["prompt_tokens"] -= 1
    reply["usage"]["total_tokens"] -= 1
    lowered = lower(D, CASES["prompt_logprobs_cjk"], MODEL)
    toks = lift(D, lowered, 200, {}, json.dumps(reply).encode()).input_tokens
    assert toks[0].text == "中国的" and toks[0].token_id == 110323 and toks[0].offset == 0
    assert toks[1].text == "首" and toks[1].offset == 3


def test_n2_has_per_choice_token_ids() -> None:
    r = run("n2_token_ids")
    for choice in r.choices:
        assert len(choice.token_ids) == len(choice.tokens) == 6
        assert [t.token_id for t in choice.tokens] == list(choice.token_ids)
    assert r.choices[0].token_ids != r.choices[1].token_ids


def test_options_are_forwarded_as_top_level_fields() -> None:
    r = run("min_p_repetition_penalty")
    ledger = {d.leaf: d.detail for d in lower(D, CASES["min_p_repetition_penalty"], MODEL).ledger}
    assert ledger["options.min_p"] == "min_p" and ledger["options.repetition_penalty"] == (
        "repetition_penalty"
    )
    assert r.choices[0].text


def test_structured_output_from_vllm_is_parsed() -> None:
    r = run("json_schema")
    assert r.choices[0].structured_output.value == {"name": "Bob", "adult": True}
    assert r.choices[0].finish_reason == "stop"


def test_structured_output_cut_at_max_tokens_is_a_contract_violation() -> None:
    with pytest.raises(ContractViolation, match="not valid JSON \\(cut at max_tokens\\)"):
        run("json_schema_cut")


def test_structured_output_that_parses_is_lifted() -> None:
    fixture = load_fixture("vllm_native", "json_schema_cut")
    reply = copy.deepcopy(fixture["reply"])
    reply["choices"][0]["text"] = '{"name":"Ann","age":7}'
    reply["choices"][0]["finish_reason"] = "stop"
    lowered = lower(D, CASES["json_schema_cut"], MODEL)
    r = lift(D, lowered, 200, {}, json.dumps(reply).encode())
    assert r.choices[0].structured_output.value == {"name": "Ann", "age": 7}
    assert lowered.body["structured_outputs"] == {"json": PERSON}


def test_json_object_format() -> None:
    req = Request.completion(
        "x", sampling=GREEDY_1, structured_output=StructuredOutput(format="json_object")
    )
    lowered = lower(D, req, MODEL)
    assert lowered.body["structured_outputs"] == {"json_object": True}


def test_top_k_over_the_servers_cap_carries_vllms_message() -> None:
    with pytest.raises(ServerRejected, match="greater than max allowed: 100") as info:
        run("error_prompt_logprobs_101")
    assert info.value.path == "top_k_cap"


def test_stream_is_a_noop_and_the_body_never_streams() -> None:
    req = Request.completion(
        QA,
        sampling=GREEDY_1,
        scoring=Scoring(input_logprobs=True),
        scheduling=Scheduling(stream=True),
    )
    lowered = lower(D, req, MODEL)
    assert "stream" not in lowered.body and lowered.stream is False  # one plain POST, read as JSON
    assert {d.leaf: d.outcome for d in lowered.ledger}["scheduling.stream"] == "noop"
    assert load_fixture("vllm_native", "error_prompt_logprobs_stream")["status"] == 400


REFUSED = [
    (Request.completion("x", sampling=Sampling(max_tokens=0)), "sampling.max_tokens"),
    (Request(input=CompletionInput(text="x", suffix="y")), "input.completion.suffix"),
    (Request.completion("x", options={"guided_json": {}}), "options.guided_json"),
    (Request.completion("x", options={"temperature": 0.5}), "options.temperature"),
    (
        Request.completion(
            "x",
            structured_output=StructuredOutput(format="json_schema", schema=PERSON, strict=False),
        ),
        "structured_output.strict",
    ),
]


@pytest.mark.parametrize(("request_", "leaf"), REFUSED, ids=[leaf for _, leaf in REFUSED])
def test_refused_before_io(request_: Request, leaf: str) -> None:
    with pytest.raises(Refused) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf


def test_strict_true_and_name_are_noops() -> None:
    req = Request.completion(
        "x",
        structured_output=StructuredOutput(
            format="json_schema", schema=PERSON, strict=True, name="person"
        ),
    )
    outcomes = {d.leaf: d.outcome for d in lower(D, req, MODEL).ledger}
    assert outcomes["structured_output.strict"] == "noop"
    assert outcomes["structured_output.name"] == "noop"


def _mutate(change) -> bytes:
    reply = copy.deepcopy(load_fixture("vllm_native", "prompt_logprobs_top3_ids")["reply"])
    change(reply["choices"][0], reply)
    return json.dumps(reply).encode()


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda c, r: c["prompt_logprobs"].pop(), "counted differently"),
        (lambda c, r: c["prompt_token_ids"].pop(), "counted differently"),
        (
            lambda c, r: r["usage"].update(prompt_tokens=13, total_tokens=14),
            "counted differently",
        ),
        (lambda c, r: c.update(prompt_logprobs=None), "no prompt_logprobs"),
        (lambda c, r: c["prompt_logprobs"][3].popitem(), "ranks"),
        (lambda c, r: c["prompt_logprobs"][2].popitem(), "entries for top-k=3"),
        (lambda c, r: c["prompt_logprobs"].__setitem__(4, None), "null at position 0 only"),
        (lambda c, r: c["prompt_token_ids"].__setitem__(5, 1), "scored id 1 absent"),
        (
            lambda c, r: c["prompt_logprobs"][2]["236787"].update(decoded_token="?"),
            "do not end the prompt",
        ),
        (lambda c, r: c["prompt_logprobs"][2]["236743"].update(rank=5), "ranks"),
    ],
)
def test_short_or_inconsistent_prompt_scores_are_refused(change, needle: str) -> None:
    lowered = lower(D, CASES["prompt_logprobs_top3_ids"], MODEL)
    with pytest.raises(ContractViolation, match=needle):
        lift(D, lowered, 200, {}, _mutate(change))


def test_missing_token_ids_is_a_contract_violation() -> None:
    reply = copy.deepcopy(load_fixture("vllm_native", "n2_token_ids")["reply"])
    reply["choices"][1]["token_ids"] = None
    with pytest.raises(ContractViolation, match="token_ids is missing"):
        lift(D, lower(D, CASES["n2_token_ids"], MODEL), 200, {}, json.dumps(reply).encode())


def test_clamped_max_tokens_is_reported_as_a_warning() -> None:
    reply = copy.deepcopy(load_fixture("vllm_native", "min_p_repetition_penalty")["reply"])
    request = Request.completion(
        "Once upon a time",
        sampling=Sampling(temperature=1.0, seed=3, max_tokens=5000),
        options={"min_p": 0.1, "repetition_penalty": 1.3},
    )
    r = lift(D, lower(D, request, MODEL), 200, {}, json.dumps(reply).encode())
    assert len(r.warnings) == 1 and "shortened max_tokens" in r.warnings[0]
    assert "after 8 of max_tokens=5000" in r.warnings[0]
