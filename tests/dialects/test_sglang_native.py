"""sglang_native lowered and lifted against replies recorded from the real SGLang 0.5.23.

Every body the dialect lowers here must equal the recorded request and pass SGLang's own request
contract (``sglang/api/v1/api_types.py``, ``GenerateRequest.from_json_value``); every recorded reply
must decode with ``GenerateResponse.from_json_value``. The contract file is taken from the
``sglang==0.5.23`` wheel (``pip download --no-deps``), cached under ``~/.cache/sieval/``; when it
cannot be had the tests FAIL, they are never skipped.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import FIXTURES, load_fixture, reply_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from mutation import json_values, paths, set_at

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.dialects.vocabulary import Lowered
from sieval.errors import ContractViolation, Refused, ServerRejected, SievalError
from sieval.ir.request import (
    ChatInput,
    CompletionInput,
    Message,
    Reasoning,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
    Tools,
)
from sieval.ir.response import Response

D = get_dialect("sglang_native")
VERSION = "0.5.23"
MODEL = "gemma-3-270m"
QA = "Question: What is the capital of France?\nAnswer: Paris"
FRANCE = "The capital of France is"
STORY = "Once upon a time"
MMLU = (
    "The following is a multiple choice question.\n\n"
    "What is 2 + 2?\nA. 3\nB. 4\nC. 5\nD. 22\nAnswer:"
)
LETTERS = (562, 603, 565, 622)  # " A", " B", " C", " D" (fixture tokenize_letters)
IN_FRANCE = {
    "type": "object",
    "properties": {"in_france": {"type": "boolean"}},
    "required": ["in_france"],
    "additionalProperties": False,
}
# The recorder states every result-changing sampling field; as IR leaves and options:
EXPLICIT = {"top_p": 1.0, "top_k": -1, "frequency_penalty": 0.0, "presence_penalty": 0.0}
NEUTRAL = {"min_p": 0.0, "repetition_penalty": 1.0}


def sp(max_tokens: int, temperature: float, **extra: Any) -> Sampling:
    return Sampling(max_tokens=max_tokens, temperature=temperature, **{**EXPLICIT, **extra})


def completion(
    text: str, sampling: Sampling, options: dict | None = None, **groups: Any
) -> Request:
    return Request.completion(text, sampling=sampling, options=options or NEUTRAL, **groups)


def _ids(name: str) -> tuple[int, ...]:
    return tuple(load_fixture("sglang_native", name, VERSION)["request"]["input_ids"])


SCORE3 = Scoring(input_logprobs=True, input_top_k=3)
SAMPLED = Scoring(sampled_logprobs=True)
STREAM = Scheduling(stream=True)

CASES: dict[str, Request] = {
    "score_top3": completion(QA, sp(1, 0.0), scoring=SCORE3),
    "score_input_ids": Request(
        input=CompletionInput(token_ids=_ids("score_input_ids")),
        sampling=sp(1, 0.0),
        scoring=SCORE3,
        options=NEUTRAL,
    ),
    "score_max_new_tokens_0": completion(
        QA, sp(0, 0.0), scoring=Scoring(input_logprobs=True, input_top_k=2)
    ),
    "score_byte_pieces": completion(
        "\ua66e\U00013000 x", sp(1, 0.0), scoring=Scoring(input_logprobs=True, input_top_k=2)
    ),
    "gen_top2": completion(
        FRANCE, sp(6, 0.0), scoring=Scoring(sampled_logprobs=True, sampled_top_k=2)
    ),
    "gen_stop": completion("1, 2, 3, 4,", sp(12, 0.0, stop=(" 7", "\n"))),
    "gen_stop_logprobs": completion("1, 2, 3, 4,", sp(12, 0.0, stop=(" 7", "\n")), scoring=SAMPLED),
    "n2_temp1": completion(STORY, sp(4, 1.0, n=2)),
    "stream": completion(FRANCE, sp(4, 0.0), scheduling=STREAM),
    "stream_logprobs": completion(
        FRANCE,
        sp(3, 0.0),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        scheduling=STREAM,
    ),
    "stream_n2_logprobs": completion(
        STORY,
        sp(3, 1.0, n=2),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        scheduling=STREAM,
    ),
    "json_schema": completion(
        "A JSON object saying whether Paris is in France:",
        sp(16, 0.0),
        structured_output=StructuredOutput(format="json_schema", schema=IN_FRANCE),
    ),
    "json_object": completion(
        "A JSON object:", sp(16, 0.0), structured_output=StructuredOutput(format="json_object")
    ),
    "regex": completion(
        "Is Paris in France? Yes or no:", sp(4, 0.0), options={**NEUTRAL, "regex": " (yes|no)"}
    ),
    "seed_11": completion(STORY, sp(6, 1.0), options={**NEUTRAL, "sampling_seed": 11}),
    "candidates_letters": completion(
        MMLU,
        sp(1, 0.0),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=5, candidate_token_ids=LETTERS),
    ),
    "options_stop_token": completion(
        FRANCE,
        sp(6, 0.0),
        options={
            "min_p": 0.05,
            "repetition_penalty": 1.2,
            "min_new_tokens": 2,
            "stop_token_ids": [529],
        },
        scoring=SAMPLED,
    ),
    "error_context_overflow": completion("hello " * 2100, sp(1, 0.0)),
    "error_input_over_max_req_input_len": Request(
        input=CompletionInput(token_ids=_ids("error_input_over_max_req_input_len")),
        sampling=sp(1, 0.0),
        options=NEUTRAL,
    ),
    "error_input_plus_new_over_context": Request(
        input=CompletionInput(token_ids=_ids("error_input_plus_new_over_context")),
        sampling=sp(20, 0.0),
        options=NEUTRAL,
    ),
    "length_capped_near_context": Request(
        input=CompletionInput(token_ids=_ids("length_capped_near_context")),
        sampling=sp(8, 0.0),
        options=NEUTRAL,
    ),
    "error_regex_and_json_schema": completion(
        FRANCE,
        sp(2, 0.0),
        options={**NEUTRAL, "regex": " (yes|no)"},
        structured_output=StructuredOutput(format="json_object"),
    ),
}


# -- SGLang's own contract as the oracle --------------------------------------------------------


def _cache() -> Path:
    return Path(os.environ.get("SIEVAL_CACHE", Path.home() / ".cache" / "sieval"))


def load_api_types() -> ModuleType:
    """``sglang/api/v1/api_types.py`` of the 0.5.23 wheel, loaded alone (it needs only msgspec)."""
    folder = _cache() / "sglang-wheel"
    path = folder / f"api_types-{VERSION}.py"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        wheels = sorted(folder.glob(f"sglang-{VERSION}-*.whl"))
        if not wheels:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"sglang=={VERSION}"]
            cmd += ["--python-version", "3.11", "--only-binary=:all:", "-d", str(folder)]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            wheels = sorted(folder.glob(f"sglang-{VERSION}-*.whl"))
            if not wheels:
                pytest.fail(
                    f"SGLang's request contract is needed as a test oracle and could not be "
                    f"fetched ({' '.join(cmd)}: {done.stderr.strip()[-300:]}); put "
                    f"sglang/api/v1/api_types.py of sglang=={VERSION} at {path}"
                )
        with zipfile.ZipFile(wheels[0]) as whl:
            path.write_bytes(whl.read("sglang/api/v1/api_types.py"))
    spec = importlib.util.spec_from_file_location("sglang_api_v1_types", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # msgspec resolves the Structs' annotations by module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def api_types() -> ModuleType:
    return load_api_types()


def generate_replies(fixture: dict[str, Any]) -> list[Any]:
    """The JSON objects a /generate exchange sent: one, a list's items, or each SSE chunk."""
    if "reply_sse" in fixture:
        chunks = [c.removeprefix("data: ") for c in fixture["reply_sse"].split("\n\n") if c]
        return [json.loads(c) for c in chunks if c != "[DONE]"]
    reply = fixture["reply"]
    return reply if isinstance(reply, list) else [reply]


def _generate_fixtures() -> list[str]:
    folder = FIXTURES / "sglang_native" / VERSION
    names = []
    for path in sorted(folder.glob("*.json")):
        if json.loads(path.read_text())["route"] == "/generate":
            names.append(path.stem)
    return names


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_lowered_body_is_the_recorded_one_and_passes_sglangs_contract(
    name: str, api_types: ModuleType
) -> None:
    fixture = load_fixture("sglang_native", name, VERSION)
    body = lower(D, CASES[name], MODEL).body
    assert body == fixture["request"], "lowering drifted from the recorded body"
    api_types.GenerateRequest.from_json_value(body)  # raises JsonContractError with SGLang's 400


@pytest.mark.parametrize("name", _generate_fixtures())
def test_every_recorded_reply_decodes_with_sglangs_contract(
    name: str, api_types: ModuleType
) -> None:
    fixture = load_fixture("sglang_native", name, VERSION)
    if fixture["status"] != 200:
        assert set(fixture["reply"]) == {"error"}
        return
    for reply in generate_replies(fixture):
        if "error" in reply:
            api_types.GenerateStreamError.from_json_value(reply)
        else:
            decoded = api_types.GenerateResponse.from_json_value(reply)
            assert decoded.meta_info is not None


def test_the_contract_refuses_what_the_dialect_never_sends(api_types: ModuleType) -> None:
    bad = load_fixture("sglang_native", "error_unknown_sampling_key", VERSION)
    with pytest.raises(api_types.JsonContractError) as info:
        api_types.GenerateRequest.from_json_value(bad["request"])
    assert bad["reply"] == {"error": str(info.value)}  # the server's 400 is the contract's text
    with pytest.raises(api_types.JsonContractError):  # an object where SGLang wants a string
        api_types.GenerateRequest.from_json_value(
            {"text": "x", "sampling_params": {"json_schema": IN_FRANCE}}
        )


# -- lifting recorded replies -------------------------------------------------------------------


def run(name: str, request: Request | None = None, reply: Any = None) -> Response:
    fixture = load_fixture("sglang_native", name, VERSION)
    lowered = lower(D, request or CASES[name], MODEL)
    body = json.dumps(reply).encode() if reply is not None else reply_bytes(fixture)
    return lift(D, lowered, fixture["status"], {}, body)


def test_input_scoring_covers_the_prompt_from_the_bos() -> None:
    r = run("score_top3")
    toks = r.input_tokens
    assert len(toks) == r.usage.input_tokens == 14  # prompt_tokens counts the BOS
    bos = toks[0]
    assert (bos.text, bos.token_id, bos.logprob, bos.offset) == ("<bos>", 2, None, 0)
    assert toks[1].text == "Question" and toks[1].logprob == -9.53321361541748
    ends = [t.offset for t in toks[2:]] + [len(QA)]
    assert "".join(QA[t.offset : end] for t, end in zip(toks[1:], ends, strict=True)) == QA
    for t, end in zip(toks[1:], ends, strict=True):
        assert QA[t.offset : end] == t.text
    question, colon = toks[1], toks[2]
    assert question.scored_rank == -1
    assert [(e.token, e.token_id) for e in question.top] == [
        ("<h1>", 184),
        ("<strong>", 198),
        ("<start_of_image>", 255999),
    ]
    assert colon.scored_rank == 0 and colon.top[0].logprob == colon.logprob
    assert toks[10].scored_rank == 1 and toks[10].text == "\n"  # "\n\n" was likelier
    assert r.choices[0].text == "\n" and r.choices[0].finish_reason == "length"
    assert r.usage.cached_tokens == 0 and r.usage.output_tokens == 1


def test_token_id_input_scores_like_the_text_and_has_no_offsets() -> None:
    by_ids = run("score_input_ids").input_tokens
    by_text = run("score_top3").input_tokens
    assert [(t.token_id, t.logprob, t.text) for t in by_ids] == [
        (t.token_id, t.logprob, t.text) for t in by_text
    ]
    assert all(t.offset is msgspec_unset() for t in by_ids)


def msgspec_unset() -> Any:
    from msgspec import UNSET

    return UNSET


def test_byte_pieces_cover_the_characters_they_spell_together() -> None:
    toks = run("score_byte_pieces").input_tokens
    text = "\ua66e\U00013000 x"
    assert [t.text for t in toks] == ["<bos>", *["\ufffd"] * 7, " x"]  # 3 + 4 UTF-8 bytes
    assert [t.offset for t in toks] == [0] * 8 + [2]
    assert text[toks[-1].offset :] == " x"


def test_prefill_only_scoring_has_no_sampled_token_and_ignores_the_extra_top_row() -> None:
    r = run("score_max_new_tokens_0")
    assert len(r.input_tokens) == 14 and r.choices[0].text == ""
    assert r.choices[0].finish_reason == "length" and r.usage.output_tokens == 0
    asked = msgspec_replace(
        CASES["score_max_new_tokens_0"],
        scoring=Scoring(input_logprobs=True, input_top_k=2, sampled_logprobs=True, sampled_top_k=2),
    )
    fixture = load_fixture("sglang_native", "score_max_new_tokens_0", VERSION)
    assert len(fixture["reply"]["meta_info"]["output_top_logprobs"]) == 1  # the quirk
    lowered = lower(D, asked, MODEL)
    got = lift(D, lowered, 200, {}, reply_bytes(fixture))
    assert got.choices[0].tokens == ()


def msgspec_replace(request: Request, **changes: Any) -> Request:
    import msgspec

    return msgspec.structs.replace(request, **changes)


def test_sampled_tokens_with_ids_offsets_and_exact_top_2() -> None:
    r = run("gen_top2")
    c = r.choices[0]
    assert c.text == " the capital of the country of"
    assert [t.text for t in c.tokens] == [" the", " capital", " of", " the", " country", " of"]
    assert [t.token_id for t in c.tokens] == list(c.token_ids) == [506, 5279, 529, 506, 2891, 529]
    assert [t.offset for t in c.tokens] == [0, 4, 12, 15, 19, 27]
    assert c.tokens[0].logprob == -1.6502114534378052
    assert [(e.token, e.logprob) for e in c.tokens[0].top] == [
        (" the", -1.6502114534378052),
        (" a", -2.185281753540039),
    ]
    assert all(t.scored_rank == 0 and len(t.top) == 2 for t in c.tokens)  # greedy
    assert r.warnings == ()


def test_a_matched_stop_string_is_trimmed_but_its_tokens_stay() -> None:
    r = run("gen_stop_logprobs")
    c = r.choices[0]
    assert (c.text, c.finish_reason, c.stop_reason) == (" 5, 6,", "stop", " 7")
    assert [t.text for t in c.tokens] == [" ", "5", ",", " ", "6", ",", " ", "7"]
    assert [t.offset for t in c.tokens] == [0, 1, 2, 3, 4, 5, 6, 6]  # " ", "7" sit at the end
    plain = run("gen_stop").choices[0]
    assert (plain.text, plain.stop_reason, len(plain.token_ids)) == (" 5, 6,", " 7", 8)


def test_options_go_to_sampling_params_and_a_stop_token_id_is_the_stop_reason() -> None:
    ledger = {d.leaf: d.detail for d in lower(D, CASES["options_stop_token"], MODEL).ledger}
    assert ledger["options.min_new_tokens"] == "sampling_params.min_new_tokens"
    assert ledger["options.stop_token_ids"] == "sampling_params.stop_token_ids"
    c = run("options_stop_token").choices[0]
    assert (c.text, c.stop_reason) == (" the capital", 529)
    assert [t.offset for t in c.tokens] == [0, 4, 12]  # " of" is the trimmed stop token


def test_n2_is_a_list_in_sample_order() -> None:
    r = run("n2_temp1")
    assert [c.text for c in r.choices] == [", when life was", " there lived an unethical"]
    assert [c.index for c in r.choices] == [0, 1]
    assert r.usage.input_tokens == 5 and r.usage.output_tokens == 8
    assert r.usage.cached_tokens == 4  # the first sample's: the shared prompt counted once


def test_a_cumulative_stream_keeps_the_last_state() -> None:
    fixture = load_fixture("sglang_native", "stream", VERSION)
    last = generate_replies(fixture)[-1]
    r = run("stream")
    assert r.choices[0].text == last["text"] and r.choices[0].token_ids == tuple(last["output_ids"])
    assert r.usage.output_tokens == len(last["output_ids"]) == 4
    streamed = run("stream_logprobs").choices[0].tokens
    plain = run("gen_top2").choices[0].tokens
    assert [(t.text, t.token_id) for t in streamed] == [(t.text, t.token_id) for t in plain[:3]]


def test_a_stream_of_two_samples_is_folded_by_index() -> None:
    r = run("stream_n2_logprobs")
    fixture = load_fixture("sglang_native", "stream_n2_logprobs", VERSION)
    finals = {e["index"]: e for e in generate_replies(fixture) if e["meta_info"]["finish_reason"]}
    assert [c.text for c in r.choices] == [finals[0]["text"], finals[1]["text"]]
    for c in r.choices:
        assert "".join(t.text for t in c.tokens) == c.text and len(c.tokens) == 3
        assert all(len(t.top) == 2 for t in c.tokens)
    assert r.choices[1].tokens[1].scored_rank == -1  # " a" sampled outside the top-2


def test_candidate_ids_are_returned_in_the_order_asked() -> None:
    r = run("candidates_letters")
    token = r.choices[0].tokens[0]
    assert token.text == " " and token.token_id == 236743  # the greedy token is not a letter
    assert [(e.token, e.token_id) for e in token.candidates] == [
        (" A", 562),
        (" B", 603),
        (" C", 565),
        (" D", 622),
    ]
    assert [e.logprob for e in token.candidates] == [
        -2.773597240447998,
        -2.1980948448181152,
        -2.5976595878601074,
        -1.7466959953308105,
    ]
    in_top = {e.token_id: e.logprob for e in token.top}
    assert in_top[622] == token.candidates[3].logprob and in_top[603] == token.candidates[1].logprob


def test_structured_output_is_parsed() -> None:
    assert run("json_schema").choices[0].structured_output.value == {"in_france": True}
    r = run("json_object")
    assert r.choices[0].structured_output.value == {"name": "test", "value": "test"}
    assert r.choices[0].stop_reason == 1  # ended by the EOS id
    assert lower(D, CASES["json_object"], MODEL).body["sampling_params"]["json_schema"] == (
        '{"type": "object"}'
    )


def test_structured_output_cut_at_max_tokens_is_a_contract_violation() -> None:
    reply = copy.deepcopy(load_fixture("sglang_native", "json_schema", VERSION)["reply"])
    reply["text"] = '{"in_fr'
    reply["meta_info"]["finish_reason"] = {"type": "length", "length": 16}
    with pytest.raises(ContractViolation, match="cut at max_tokens"):
        run("json_schema", reply=reply)


def test_regex_is_an_option() -> None:
    r = run("regex")
    assert r.choices[0].text == " yes"
    ledger = {d.leaf: d.detail for d in lower(D, CASES["regex"], MODEL).ledger}
    assert ledger["options.regex"] == "sampling_params.regex"


def test_seed_is_refused_and_the_engine_option_is_sent_as_asked() -> None:
    texts = [
        load_fixture("sglang_native", n, VERSION)["reply"]["text"]
        for n in ("seed_11", "seed_11_again")
    ]
    assert texts[0] != texts[1]  # the measured reason: the same seed gave different texts
    with pytest.raises(Refused, match="enable-deterministic-inference") as info:
        lower(D, completion(STORY, sp(6, 1.0, seed=11)), MODEL)
    assert info.value.path == "sampling.seed"
    assert run("seed_11").choices[0].text == texts[0]


def test_top_k_zero_and_minus_one_mean_all_tokens() -> None:
    for k in (0, -1):
        body = lower(D, Request.completion("x", sampling=Sampling(top_k=k)), MODEL).body
        assert body["sampling_params"] == {"top_k": -1}
    body = lower(D, Request.completion("x", sampling=Sampling(top_k=5)), MODEL).body
    assert body["sampling_params"] == {"top_k": 5}


def test_the_scheduler_cutting_max_new_tokens_is_a_warning() -> None:
    r = run("length_capped_near_context")
    assert r.usage.output_tokens == 6
    assert len(r.warnings) == 1 and "after 6 of max_tokens=8" in r.warnings[0]


def test_temperature_scaled_logprobs_are_a_warning() -> None:
    r = run("stream_n2_logprobs", request=CASES["stream_n2_logprobs"])
    assert r.warnings == ()  # T=1 is the raw distribution
    request = msgspec_replace(CASES["gen_top2"], sampling=sp(6, 0.5))
    fixture = load_fixture("sglang_native", "gen_top2", VERSION)
    got = lift(D, lower(D, request, MODEL), 200, {}, reply_bytes(fixture))
    assert any("scaled by temperature 0.5" in w for w in got.warnings)


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "needle", "kind"),
    [
        ("error_top_k_0", "top_k must be -1 \\(disable\\) or at least 1", None),
        ("error_unknown_sampling_key", "unknown field `max_tokens`", None),
        ("error_context_overflow", "longer than the model's context length", "context_overflow"),
        ("error_input_over_max_req_input_len", "maximum allowed length", "context_overflow"),
        ("error_input_plus_new_over_context", "maximum context length", "context_overflow"),
        ("error_logprob_start_len_past_prompt", "logprob_start_len=100", None),
        ("error_regex_and_json_schema", "Only one of json_schema, regex", None),
    ],
)
def test_sglangs_error_shapes_carry_its_words(name: str, needle: str, kind: str | None) -> None:
    fixture = load_fixture("sglang_native", name, VERSION)
    lowered = lower(D, CASES.get(name, CASES["score_top3"]), MODEL)
    with pytest.raises(ServerRejected, match=needle) as info:
        lift(D, lowered, fixture["status"], {}, reply_bytes(fixture))
    assert info.value.status == 400 and info.value.path == kind


def _streamed(name: str) -> Lowered:
    return lower(D, msgspec_replace(CASES[name], scheduling=STREAM), MODEL)


def test_an_in_band_stream_error_is_an_error() -> None:
    fixture = load_fixture("sglang_native", "stream_error_top_k_0", VERSION)
    assert fixture["status"] == 200
    with pytest.raises(ServerRejected, match="top_k must be -1") as info:
        lift(D, _streamed("gen_top2"), 200, {}, reply_bytes(fixture))
    assert info.value.status == 400


def test_a_streamed_abort_is_an_error_not_an_answer() -> None:
    fixture = load_fixture("sglang_native", "stream_abort_logprob_start_len_past_prompt", VERSION)
    assert generate_replies(fixture)[0]["text"]  # it looks like an answer
    with pytest.raises(ServerRejected, match="logprob_start_len=100.*abort") as info:
        lift(D, _streamed("score_top3"), 200, {}, reply_bytes(fixture))
    assert info.value.status == 400


def test_an_abort_in_a_plain_reply_is_an_error() -> None:
    reply = copy.deepcopy(load_fixture("sglang_native", "gen_top2", VERSION)["reply"])
    reply["meta_info"]["finish_reason"] = {
        "type": "abort",
        "message": "preempted",
        "status_code": 503,
    }
    with pytest.raises(SievalError, match="preempted") as info:
        run("gen_top2", reply=reply)
    assert not isinstance(info.value, ServerRejected)  # a 5xx abort is the server failing


def test_a_stream_without_done_is_truncated() -> None:
    sse = load_fixture("sglang_native", "stream", VERSION)["reply_sse"]
    with pytest.raises(ContractViolation, match="without 'data: \\[DONE\\]'"):
        lift(D, lower(D, CASES["stream"], MODEL), 200, {}, sse.replace("data: [DONE]", "").encode())


def test_a_stream_that_ends_before_its_finish_is_refused() -> None:
    sse = load_fixture("sglang_native", "stream", VERSION)["reply_sse"]
    events = sse.split("\n\n")
    cut = "\n\n".join([events[0], "data: [DONE]", ""])
    with pytest.raises(ContractViolation, match="never finished"):
        lift(D, lower(D, CASES["stream"], MODEL), 200, {}, cut.encode())


def test_an_incremental_stream_is_refused_not_folded() -> None:
    chunks = generate_replies(load_fixture("sglang_native", "stream", VERSION))
    assert len(chunks) >= 2
    second = copy.deepcopy(chunks[-1])
    second["output_ids"] = second["output_ids"][len(chunks[0]["output_ids"]) :]
    sse = f"data: {json.dumps(chunks[0])}\n\ndata: {json.dumps(second)}\n\ndata: [DONE]\n\n"
    with pytest.raises(ContractViolation, match="not cumulative"):
        lift(D, lower(D, CASES["stream"], MODEL), 200, {}, sse.encode())


# -- contract checks, by mutation ---------------------------------------------------------------


def _mutated(name: str, change) -> Any:
    reply = copy.deepcopy(load_fixture("sglang_native", name, VERSION)["reply"])
    change(reply, reply["meta_info"] if isinstance(reply, dict) else None)
    return reply


INPUT_MUTATIONS = [
    (lambda r, m: m["input_token_logprobs"].pop(), "counted differently"),
    (lambda r, m: m.update(prompt_tokens=15), "counted differently"),
    (lambda r, m: m.pop("input_token_logprobs"), "input_token_logprobs is missing"),
    (lambda r, m: m["input_token_logprobs"][4].__setitem__(0, None), "null at positions \\[4\\]"),
    (lambda r, m: m["input_token_logprobs"][0].__setitem__(0, -1.0), "unscored first position"),
    (lambda r, m: m["input_token_logprobs"][3].__setitem__(2, " Who"), "do not rebuild the prompt"),
    (lambda r, m: m["input_token_logprobs"][3].__setitem__(2, None), "no token text"),
    (lambda r, m: m["input_top_logprobs"][5].pop(), "lists 2 alternatives for top-k=3"),
    (lambda r, m: m["input_top_logprobs"][5].reverse(), "not sorted"),
    (
        lambda r, m: m["input_top_logprobs"][5].__setitem__(1, m["input_top_logprobs"][5][0]),
        "twice",
    ),
    (lambda r, m: m["input_top_logprobs"][2][0].__setitem__(0, -0.6), "contradict"),
    (lambda r, m: m["input_top_logprobs"].pop(), "14 rows|13 rows"),
    (lambda r, m: m.pop("input_top_logprobs"), "input_top_logprobs is missing"),
    (lambda r, m: m["input_top_logprobs"].__setitem__(0, [[-1.0, 5, "x"]]), "unscored position"),
    (lambda r, m: m["finish_reason"].update(type="abort", status_code=400), "abort"),
    (lambda r, m: m.update(finish_reason=None), "never finished"),
]


@pytest.mark.parametrize(("change", "needle"), INPUT_MUTATIONS)
def test_short_or_inconsistent_input_scores_are_refused(change, needle: str) -> None:
    with pytest.raises(SievalError, match=needle):
        run("score_top3", reply=_mutated("score_top3", change))


def test_token_id_input_must_be_scored_as_sent() -> None:
    reply = _mutated("score_input_ids", lambda r, m: m["input_token_logprobs"][3].__setitem__(1, 7))
    with pytest.raises(ContractViolation, match="other token ids than the input_ids sent"):
        run("score_input_ids", reply=reply)


SAMPLED_MUTATIONS = [
    (lambda r, m: r["output_ids"].pop(), "counted differently"),
    (lambda r, m: m.update(completion_tokens=5), "counted differently"),
    (lambda r, m: m.update(output_token_logprobs_length=7), "counted differently"),
    (lambda r, m: r["output_ids"].__setitem__(2, 9), "other token ids than output_ids"),
    (lambda r, m: m.pop("output_token_logprobs"), "output_token_logprobs is missing"),
    (lambda r, m: m["output_token_logprobs"][1].__setitem__(0, None), "null logprob"),
    (lambda r, m: m["output_top_logprobs"][3].pop(), "lists 1 alternatives for top-k=2"),
    (lambda r, m: m["output_top_logprobs"].pop(), "5 rows for 6 positions"),
    (lambda r, m: m.pop("output_top_logprobs"), "output_top_logprobs is missing"),
    (lambda r, m: r.update(text=" the capitol of the country of"), "do not spell the choice"),
    (
        lambda r, m: r.update(text=" the capital of the country of France"),
        "do not spell the choice",
    ),
    (lambda r, m: m["output_top_logprobs"][0][0].__setitem__(0, float("nan")), "non-finite"),
]


@pytest.mark.parametrize(("change", "needle"), SAMPLED_MUTATIONS)
def test_short_or_inconsistent_sampled_tokens_are_refused(change, needle: str) -> None:
    with pytest.raises(ContractViolation, match=needle):
        run("gen_top2", reply=_mutated("gen_top2", change))


CANDIDATE_MUTATIONS = [
    (lambda r, m: m["output_token_ids_logprobs"][0].reverse(), "not the candidates asked for"),
    (lambda r, m: m["output_token_ids_logprobs"][0].pop(), "not the candidates asked for"),
    (lambda r, m: m.pop("output_token_ids_logprobs"), "output_token_ids_logprobs is missing"),
    (lambda r, m: m["output_token_ids_logprobs"].append(None), "2 rows for 1 sampled tokens"),
    (lambda r, m: m["output_token_ids_logprobs"][0][1].__setitem__(0, None), "null logprob"),
]


@pytest.mark.parametrize(("change", "needle"), CANDIDATE_MUTATIONS)
def test_candidates_must_be_the_ids_asked_in_their_order(change, needle: str) -> None:
    with pytest.raises(ContractViolation, match=needle):
        run("candidates_letters", reply=_mutated("candidates_letters", change))


def test_a_candidate_that_is_the_sampled_token_must_agree_with_it() -> None:
    def same_id(r: Any, m: Any) -> None:
        r["output_ids"] = [622]
        m["output_token_logprobs"] = [[-1.0, 622, " D"]]
        m["output_top_logprobs"][0][0] = [-1.0, 622, " D"]
        m["output_top_logprobs"][0][1] = [-1.1, 236743, " "]
        r["text"] = " D"

    with pytest.raises(ContractViolation, match="sampled token 622 .* contradict"):
        run("candidates_letters", reply=_mutated("candidates_letters", same_id))


def test_reply_shape_must_match_n() -> None:
    single = load_fixture("sglang_native", "gen_top2", VERSION)["reply"]
    with pytest.raises(ContractViolation, match="is a list but a single request"):
        run("gen_top2", reply=[single])
    pair = load_fixture("sglang_native", "n2_temp1", VERSION)["reply"]
    with pytest.raises(ContractViolation, match="one object but n=2"):
        run("n2_temp1", reply=pair[0])
    with pytest.raises(ContractViolation, match="expected exactly 0..1"):
        run("n2_temp1", reply=pair[:1])
    odd = copy.deepcopy(pair)
    odd[1]["meta_info"]["prompt_tokens"] = 6
    with pytest.raises(ContractViolation, match="different prompt sizes"):
        run("n2_temp1", reply=odd)


def test_absent_usage_counts_stay_unset() -> None:
    from msgspec import UNSET

    reply = _mutated("gen_top2", lambda r, m: m.pop("cached_tokens"))
    usage = run("gen_top2", reply=reply).usage
    assert usage.cached_tokens is UNSET and usage.output_tokens == 6 and usage.input_tokens == 6


# -- decisions before I/O -----------------------------------------------------------------------

CHAT = ChatInput(messages=(Message(role="user", content=(TextPart(text="hi"),)),))
REFUSED = [
    (Request(input=CHAT), "input.chat.messages"),
    (Request(input=CompletionInput(text="x", suffix="y")), "input.completion.suffix"),
    (Request.completion("x", sampling=Sampling(seed=3)), "sampling.seed"),
    (Request.completion("x", sampling=Sampling(top_k=-2)), "sampling.top_k"),
    (
        Request.completion("x", sampling=Sampling(stop=tuple("abcdefghijklmnopqrstuvwxyz0123456"))),
        "sampling.stop",
    ),
    (Request.completion("x", options={"max_tokens": 5}), "options.max_tokens"),
    (Request.completion("x", options={"temperature": 0.5}), "options.temperature"),
    (Request.completion("x", options={"max_new_tokens": 5}), "options.max_new_tokens"),
    (Request.completion("x", options={"json_schema": "{}"}), "options.json_schema"),
    (Request.completion("x", options={"no_stop_trim": True}), "options.no_stop_trim"),
    (Request.completion("x", options={"min_p": "low"}), "options.min_p"),
    (Request.completion("x", options={"stop_token_ids": [1, "2"]}), "options.stop_token_ids"),
    (Request.completion("x", reasoning=Reasoning(effort="low")), "reasoning.effort"),
    (
        Request.completion(
            "x",
            sampling=Sampling(max_tokens=1),
            scoring=Scoring(sampled_logprobs=True, candidate_token_ids=(5, -1)),
        ),
        "scoring.candidate_token_ids",
    ),
    (
        Request.completion(
            "x",
            scoring=Scoring(
                input_logprobs=True, input_top_k=2, sampled_logprobs=True, sampled_top_k=5
            ),
        ),
        "scoring.sampled_top_k",
    ),
    (
        Request.completion(
            "x",
            structured_output=StructuredOutput(
                format="json_schema", schema=IN_FRANCE, strict=False
            ),
        ),
        "structured_output.strict",
    ),
]


@pytest.mark.parametrize(("request_", "leaf"), REFUSED, ids=[leaf for _, leaf in REFUSED])
def test_refused_before_io(request_: Request, leaf: str) -> None:
    with pytest.raises(Refused) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf


def test_tools_are_refused() -> None:
    from sieval.ir.request import FunctionTool

    req = Request.completion("x", tools=Tools(functions=(FunctionTool(name="f", parameters={}),)))
    with pytest.raises(Refused, match="no tools"):
        lower(D, req, MODEL)


def test_noops_and_shared_top_k() -> None:
    req = Request.completion(
        "x",
        scoring=Scoring(
            input_logprobs=True,
            input_top_k=4,
            sampled_logprobs=True,
            sampled_top_k=4,
            token_ids=True,
        ),
        structured_output=StructuredOutput(
            format="json_schema", schema=IN_FRANCE, strict=True, name="verdict"
        ),
    )
    lowered = lower(D, req, MODEL)
    outcomes = {d.leaf: d.outcome for d in lowered.ledger}
    assert outcomes["scoring.token_ids"] == "noop"
    assert outcomes["structured_output.strict"] == "noop"
    assert outcomes["structured_output.name"] == "noop"
    assert lowered.body["top_logprobs_num"] == 4 and lowered.body["logprob_start_len"] == 0
    assert lowered.body["return_text_in_logprobs"] is True
    assert json.loads(lowered.body["sampling_params"]["json_schema"]) == IN_FRANCE


def test_endpoint_facts() -> None:
    e = D.endpoint
    assert (e.path, e.model_field, e.models, e.health, e.version, e.tokenize) == (
        "/generate",
        None,
        "/v1/models",
        "/health",
        None,
        "/tokenize",
    )
    assert D.auth.headers("k") == {"Authorization": "Bearer k"}
    assert "model" not in lower(D, Request.completion("x"), MODEL).body


# -- fuzz: a malformed reply raises a SievalError or lifts --------------------------------------

FUZZED = ("score_top3", "candidates_letters", "n2_temp1")
LOWERED = {name: lower(D, CASES[name], MODEL) for name in FUZZED}
REPLIES = {name: load_fixture("sglang_native", name, VERSION)["reply"] for name in FUZZED}
PATHS = [(name, p) for name in FUZZED for p in paths(REPLIES[name])[1:]]
SSE = load_fixture("sglang_native", "stream_n2_logprobs", VERSION)["reply_sse"]
SSE_LOWERED = lower(D, CASES["stream_n2_logprobs"], MODEL)


def _lift_or_sieval_error(lowered: Lowered, body: bytes) -> None:
    try:
        response = lift(D, lowered, 200, {}, body)
    except SievalError:
        return
    assert len(response.choices) == lowered.request.sampling.n
    if lowered.request.scoring.input_logprobs:
        assert len(response.input_tokens) == response.usage.input_tokens


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(PATHS), json_values)
def test_mutated_reply(where: tuple[str, tuple], value: Any) -> None:
    name, path = where
    reply = copy.deepcopy(REPLIES[name])
    set_at(reply, path, value)
    _lift_or_sieval_error(LOWERED[name], json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(body: bytes) -> None:
    _lift_or_sieval_error(LOWERED["score_top3"], body)
    _lift_or_sieval_error(SSE_LOWERED, body)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(SSE)), st.text(max_size=8))
def test_cut_or_spliced_stream(cut: int, junk: str) -> None:
    _lift_or_sieval_error(SSE_LOWERED, (SSE[:cut] + junk + SSE[cut:]).encode())
