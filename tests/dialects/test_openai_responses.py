"""openai_responses lowered and lifted against replies recorded from the real vLLM 0.32.0.

Every recorded body the dialect can send is what it lowers its IR request to, and validates
against the openai SDK's request types; every recorded reply (and every streamed event) parses
with the SDK's response types; mutations of real replies prove each check; hypothesis fuzzes
``lift``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pydantic
import pytest
from conftest import FIXTURES, load_fixture, reply_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET
from mutation import json_values, paths, set_at
from openai.types.responses import Response as SdkResponse
from openai.types.responses import ResponseStreamEvent
from openai.types.responses import response_create_params as sdk

from sieval.audit.corpus import CAPITAL, PERSON, PNG_1X1, WEATHER_RESPONSES, chat, greedy, turn
from sieval.dialects.openai_responses import DIALECT as D
from sieval.dialects.table import capability_outcomes, lift, lower
from sieval.dialects.vocabulary import Lowered
from sieval.errors import ContractViolation, Refused, ServerRejected, SievalError, TransportError
from sieval.ir.request import (
    CompletionInput,
    ImagePart,
    Message,
    Reasoning,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from sieval.ir.response import Response, ToolCall

MODEL = "gemma-3-270m"
FOLDER = FIXTURES / "openai_responses" / "0.32.0"
WEATHER_Q = "What is the weather in Paris?"
STREAM = Scheduling(stream=True)
ASK = turn("user", CAPITAL)
COLOR = turn("user", "Name a color.")
FRAKTUR = turn("user", "𝔘𝔫𝔦 ꙮ 𐍈")
SCHEMA = StructuredOutput(format="json_schema", schema=PERSON, name="person", strict=True)
BOB = turn("user", "Return JSON with name Bob and adult true.")
REQUIRED = Tools(functions=(WEATHER_RESPONSES,), choice="required")
TOOL_TURNS = (
    turn("user", WEATHER_Q),
    Message(
        role="assistant",
        content=(ToolCallPart(call_id="call_1", name="get_weather", arguments={"city": "Paris"}),),
    ),
    Message(
        role="tool",
        content=(ToolResultPart(call_id="call_1", result={"temperature_c": 18, "sky": "clear"}),),
    ),
)

CASES: dict[str, Request] = {
    "plain": chat(ASK, sampling=greedy(12)),
    "system_item": chat(turn("system", "Answer in one word."), ASK, sampling=greedy(8)),
    "developer_item": chat(turn("developer", "Answer in one word."), ASK, sampling=greedy(8)),
    "multi_turn": chat(
        ASK, turn("assistant", "Paris."), turn("user", "And of Italy?"), sampling=greedy(8)
    ),
    "logprobs_top3": chat(
        COLOR,
        sampling=Sampling(temperature=1.0, max_tokens=6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
    ),
    "logprobs_cjk": chat(
        turn("user", "中国的首都是哪里？"),
        sampling=greedy(8),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    ),
    "logprobs_byte_fallback": chat(
        FRAKTUR, sampling=greedy(10), scoring=Scoring(sampled_logprobs=True, sampled_top_k=1)
    ),
    "stream_logprobs_byte_fallback": chat(
        FRAKTUR,
        sampling=greedy(10),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=1),
        scheduling=STREAM,
    ),
    "json_schema": chat(BOB, sampling=greedy(40), structured_output=SCHEMA),
    "json_schema_logprobs": chat(
        BOB,
        sampling=greedy(40),
        structured_output=SCHEMA,
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=1),
    ),
    "json_schema_cut": chat(BOB, sampling=greedy(3), structured_output=SCHEMA),
    "json_object": chat(
        turn("user", 'Give a JSON object with one key "color" whose value is "red".'),
        sampling=greedy(40),
        structured_output=StructuredOutput(format="json_object"),
    ),
    "max_output_tokens": chat(turn("user", "Tell me a story."), sampling=greedy(5)),
    "clamped_max_output_tokens": chat(turn("user", "hello " * 4080), sampling=greedy(50)),
    "tool_required": chat(turn("user", WEATHER_Q), sampling=greedy(60), tools=REQUIRED),
    "tool_followup": chat(
        *TOOL_TURNS, sampling=greedy(24), tools=Tools(functions=(WEATHER_RESPONSES,), choice="auto")
    ),
    "reasoning_effort": chat(
        turn("user", "What is 2+2?"),
        sampling=greedy(8),
        reasoning=Reasoning(effort="low", summary="auto"),
    ),
    "stream_plain": chat(ASK, sampling=greedy(8), scheduling=STREAM),
    "stream_logprobs": chat(
        COLOR,
        sampling=greedy(6),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        scheduling=STREAM,
    ),
    "stream_json_schema_logprobs": chat(
        BOB,
        sampling=greedy(40),
        structured_output=SCHEMA,
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=1),
        scheduling=STREAM,
    ),
    "stream_tool_required": chat(
        turn("user", WEATHER_Q), sampling=greedy(60), tools=REQUIRED, scheduling=STREAM
    ),
    "error_unknown_model": chat(ASK, sampling=Sampling(max_tokens=2)),
    "error_context_overflow": chat(turn("user", "hello " * 4200), sampling=greedy(4)),
    "error_max_output_tokens_5000": chat(ASK, sampling=Sampling(max_tokens=5000)),
    "error_image_text_only": chat(
        Message(
            role="user",
            content=(
                TextPart(text="What is this?"),
                ImagePart(data=PNG_1X1, media_type="image/png"),
            ),
        ),
        sampling=Sampling(max_tokens=2),
    ),
}
MODEL_OF = {"error_unknown_model": "no-such-model"}
NOT_SENT_BY_THE_DIALECT = {
    "error_top_logprobs_101",  # top-k 100 is refused before I/O (k <= 19)
    "instructions",
    "previous_response_id",
    "get_stored_response",
    "error_prompt_field",
}
"""Recorded to document vLLM, with fields the dialect never sends (as the doc_* cases)."""


def lowered(name: str) -> Lowered:
    return lower(D, CASES[name], MODEL_OF.get(name, MODEL))


def run(name: str) -> Response:
    fixture = load_fixture("openai_responses", name)
    return lift(D, lowered(name), fixture["status"], {}, reply_bytes(fixture))


def fixture_names() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.json"))


def sse_data(text_: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for block in text_.split("\n\n")
        for line in block.split("\n")
        if line.startswith("data: ")
    ]


# -- every recorded exchange --------------------------------------------------------------------


def test_every_fixture_is_a_lowered_case_or_documents_vllm() -> None:
    names = set(fixture_names())
    documented = {n for n in names if n.startswith("doc_")} | NOT_SENT_BY_THE_DIALECT
    assert names - documented == set(CASES)
    for name in names:
        assert load_fixture("openai_responses", name)["server"] == {
            "engine": "vllm",
            "version": "0.32.0",
            "model": "gemma-3-270m",
        }


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_dialect_lowers_to_exactly_the_recorded_body(name: str) -> None:
    fixture = load_fixture("openai_responses", name)
    low = lowered(name)
    assert low.body == fixture["request"]
    assert low.path == fixture["route"] == "/v1/responses"
    params = (
        sdk.ResponseCreateParamsStreaming if low.stream else sdk.ResponseCreateParamsNonStreaming
    )
    pydantic.TypeAdapter(params).validate_python(low.body)


@pytest.mark.parametrize("name", fixture_names())
def test_the_openai_sdk_parses_every_recorded_reply(name: str) -> None:
    fixture = load_fixture("openai_responses", name)
    if fixture["route"] == "/tokenize":
        assert fixture["reply"]["count"] == len(fixture["reply"]["tokens"])
    elif "reply_sse" in fixture:
        events = sse_data(fixture["reply_sse"])
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)
        assert [adapter.validate_python(e).type for e in events] == [e["type"] for e in events]
        assert events[-1]["type"] == "response.completed"
    elif fixture["status"] == 200:
        parsed = SdkResponse.model_validate(fixture["reply"])
        assert parsed.model == "gemma-3-270m" and parsed.status in ("completed", "incomplete")
    else:
        error = fixture["reply"]["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["code"] == fixture["status"]


# -- lifting what vLLM answered -----------------------------------------------------------------


def test_plain_reply_concatenates_output_text_and_keeps_the_incomplete_reason() -> None:
    r = run("plain")
    choice = r.choices[0]
    assert choice.text == "The capital of France is Paris.\nThe capital of France"
    assert choice.finish_reason == "max_output_tokens"  # status incomplete: the length finish
    assert (r.usage.input_tokens, r.usage.output_tokens) == (17, 12)
    assert (r.usage.cached_tokens, r.usage.reasoning_tokens) == (0, 0)
    assert r.usage.reported_total_tokens is UNSET and r.model == "gemma-3-270m"
    assert choice.tokens is UNSET and choice.tool_calls is UNSET and choice.reasoning is UNSET


def test_system_item_renders_like_instructions_and_developer_like_system() -> None:
    system, developer = run("system_item"), run("developer_item")
    instructions = load_fixture("openai_responses", "instructions")["reply"]
    assert system.usage.input_tokens == developer.usage.input_tokens == 23
    assert instructions["usage"]["input_tokens"] == 23
    said = instructions["output"][0]["content"][0]["text"]
    assert system.choices[0].text == developer.choices[0].text == said
    body = lowered("system_item").body
    assert "instructions" not in body and body["input"][0]["role"] == "system"


def test_assistant_history_is_an_output_message_item() -> None:
    low = lowered("multi_turn")
    item = low.body["input"][1]
    assert item == {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Paris.", "annotations": []}],
    }
    assert run("multi_turn").usage.input_tokens == 33


def test_store_is_sent_false_and_recorded_with_the_first_item() -> None:
    low = lowered("plain")
    assert low.body["store"] is False
    entry = next(d for d in low.ledger if d.leaf == "input.chat.messages[0]")
    assert (entry.outcome, entry.path) == ("consumed", "input[0]")


def test_sampled_top_k_asks_k_plus_1_and_keeps_the_exact_k_best() -> None:
    low = lowered("logprobs_top3")
    assert (low.body["include"], low.body["top_logprobs"]) == (
        ["message.output_text.logprobs"],
        4,
    )
    choice = run("logprobs_top3").choices[0]
    assert choice.text == "ורך\n<tex>$\\"
    first = choice.tokens[0]
    assert first.text == "ורך" and first.logprob == pytest.approx(-13.354, abs=1e-3)
    assert [e.token for e in first.top] == ["Name", "(", "1"]  # vLLM listed the sampled first
    assert first.scored_rank == -1
    for tok in choice.tokens:
        assert len(tok.top) == 3
        assert [e.logprob for e in tok.top] == sorted((e.logprob for e in tok.top), reverse=True)
        assert choice.text[tok.offset :].startswith(tok.text)


def test_vllm_cuts_its_list_at_top_logprobs_so_k_alone_loses_the_kth_best() -> None:
    """Same seed, same samples: asked for 3, vLLM lists the sampled token and only 2 of the best
    3; asked for 4 and sorted, the dialect's top-3 is exact."""

    def first(name: str) -> list[tuple[str, float]]:
        part = load_fixture("openai_responses", name)["reply"]["output"][0]["content"][0]
        return [(e["token"], e["logprob"]) for e in part["logprobs"][0]["top_logprobs"]]

    three, four = first("doc_top_logprobs_3_seed5"), first("doc_top_logprobs_4_seed5")
    assert three[0][0] == four[0][0] == "Any"  # the sampled token, listed first
    assert three[0][1] < three[1][1]  # ... although it is far from the best
    best3 = sorted(four[1:], key=lambda e: -e[1])[:3]
    assert [t for t, _ in best3] == ["Name", "(", "1"]
    assert "(" not in [t for t, _ in three]  # the third best is cut off at k
    fixture = load_fixture("openai_responses", "doc_top_logprobs_4_seed5")
    r = lift(D, lowered("logprobs_top3"), 200, {}, reply_bytes(fixture))
    assert [e.token for e in r.choices[0].tokens[0].top] == ["Name", "(", "1"]


def test_cjk_tokens_rebuild_the_answer_with_offsets() -> None:
    choice = run("logprobs_cjk").choices[0]
    assert [t.text for t in choice.tokens] == [
        "中国",
        "首",
        "的",
        "第一个",
        "是",
        "中国",
        "首",
        "的",
    ]
    assert [t.offset for t in choice.tokens] == [0, 2, 3, 4, 7, 8, 10, 11]
    assert choice.tokens[0].scored_rank == 0 and len(choice.tokens[0].top) == 2


def test_byte_fallback_pieces_cover_no_text_and_their_stream_is_refused() -> None:
    choice = run("logprobs_byte_fallback").choices[0]
    assert choice.text == "𝔘𝔫𝔦 "
    assert [t.text for t in choice.tokens] == ["", "", "", "𝔘", "", "", "", "𝔫", "𝔦", " "]
    assert [t.offset for t in choice.tokens] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 3]
    fixture = load_fixture("openai_responses", "stream_logprobs_byte_fallback")
    deltas = [
        e for e in sse_data(fixture["reply_sse"]) if e["type"] == "response.output_text.delta"
    ]
    assert [t["token"] for e in deltas for t in e["logprobs"]] == ["𝔘", "𝔫", "𝔦", " "]
    with pytest.raises(ContractViolation, match="logprobs for 4 positions but generated 10"):
        run("stream_logprobs_byte_fallback")


def test_structured_output_is_parsed_and_a_cut_one_refused() -> None:
    r = run("json_schema")
    assert r.choices[0].structured_output.value == {"name": "Bob", "adult": True}
    assert r.choices[0].finish_reason == "completed"
    fmt = lowered("json_schema").body["text"]["format"]
    assert fmt == {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}
    assert run("json_object").choices[0].structured_output.value == {
        "color": "red",
        "name": "red",
        "value": "red",
    }
    with pytest.raises(ContractViolation, match="cut at max_tokens"):
        run("json_schema_cut")


def test_a_json_schema_without_a_name_gets_the_one_the_wire_requires() -> None:
    request = chat(ASK, structured_output=StructuredOutput(format="json_schema", schema=PERSON))
    fmt = lower(D, request, MODEL).body["text"]["format"]
    assert fmt == {"type": "json_schema", "name": "output", "schema": PERSON}


def test_the_stop_token_vllm_lists_is_dropped_so_stream_and_non_stream_agree() -> None:
    wire = load_fixture("openai_responses", "json_schema_logprobs")["reply"]
    listed = [e["token"] for e in wire["output"][0]["content"][0]["logprobs"]]
    assert listed[-1] == "<eos>" and len(listed) == wire["usage"]["output_tokens"] == 18
    plain, streamed = run("json_schema_logprobs"), run("stream_json_schema_logprobs")
    assert [t.text for t in plain.choices[0].tokens] == listed[:-1]
    assert plain.choices == streamed.choices
    assert plain.usage == streamed.usage


def test_max_output_tokens_reached_is_the_length_finish() -> None:
    choice = run("max_output_tokens").choices[0]
    assert (choice.text, choice.finish_reason) == ("Tell me a story.", "max_output_tokens")


def test_a_shortened_max_output_tokens_is_a_warning() -> None:
    r = run("clamped_max_output_tokens")
    assert r.usage.input_tokens == 4090 and r.usage.output_tokens == 6
    assert len(r.warnings) == 1
    assert "from 50 to 6" in r.warnings[0] and "prompt 4090 tokens" in r.warnings[0]
    assert run("plain").warnings == ()


def test_a_required_tool_call_is_lifted_with_parsed_arguments() -> None:
    r = run("tool_required")
    choice = r.choices[0]
    assert choice.text == "" and choice.finish_reason == "completed"
    wire = load_fixture("openai_responses", "tool_required")["reply"]["output"][0]
    assert choice.tool_calls == (
        ToolCall(call_id=wire["call_id"], name="get_weather", arguments={"city": "Paris"}),
    )
    assert wire["arguments"] == '{"city": "Paris"}' and r.usage.output_tokens == 46
    tool = lowered("tool_required").body["tools"][0]
    assert tool["strict"] is True and "function" not in tool  # flat, strict


def test_the_tool_result_turn_is_two_input_items() -> None:
    body = lowered("tool_followup").body
    assert [i["type"] for i in body["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert body["input"][1]["arguments"] == '{"city":"Paris"}'
    assert json.loads(body["input"][2]["output"]) == {"temperature_c": 18, "sky": "clear"}
    r = run("tool_followup")
    assert r.usage.input_tokens == 39 and r.choices[0].tool_calls is UNSET


def test_reasoning_controls_are_sent_and_no_reasoning_item_is_best_effort() -> None:
    low = lowered("reasoning_effort")
    assert low.body["reasoning"] == {"effort": "low", "summary": "auto"}
    r = run("reasoning_effort")
    assert r.choices[0].reasoning is UNSET and r.usage.reasoning_tokens == 0


def test_stream_folds_into_the_same_text_finish_and_usage() -> None:
    fixture = load_fixture("openai_responses", "stream_plain")
    deltas = [
        e["delta"]
        for e in sse_data(fixture["reply_sse"])
        if e["type"] == "response.output_text.delta"
    ]
    r = run("stream_plain")
    assert r.choices[0].text == "".join(deltas) and len(deltas) == 8
    assert r.choices[0].finish_reason == "max_output_tokens"
    assert r.usage.output_tokens == 8 and lowered("stream_plain").body["stream"] is True


def test_stream_with_logprobs_keeps_exact_top_k() -> None:
    choice = run("stream_logprobs").choices[0]
    assert choice.text == "Name a color.\nThe"
    assert [t.text for t in choice.tokens] == ["Name", " a", " color", ".", "\n", "The"]
    assert all(len(t.top) == 2 and t.scored_rank == 0 for t in choice.tokens)


def test_streamed_tool_call_parses_to_the_same_arguments() -> None:
    streamed = run("stream_tool_required").choices[0].tool_calls
    assert [(c.name, c.arguments) for c in streamed] == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    ("name", "status", "kind", "needle"),
    [
        ("error_unknown_model", 404, "unknown_model", "does not exist"),
        ("error_context_overflow", 400, "context_overflow", "maximum context length is 4096"),
        ("error_max_output_tokens_5000", 400, "context_overflow", "max_model_len=4096"),
        ("error_image_text_only", 400, None, "not a multimodal model"),
    ],
)
def test_server_errors_carry_vllms_words(name: str, status: int, kind: str | None, needle: str):
    with pytest.raises(ServerRejected) as info:
        run(name)
    assert info.value.status == status and info.value.path == kind
    assert needle in info.value.server_message


def test_previous_response_id_is_a_404_because_vllm_stores_nothing() -> None:
    fixture = load_fixture("openai_responses", "previous_response_id")
    assert fixture["request"]["previous_response_id"] == "resp_b136a265990be60e"
    with pytest.raises(ServerRejected, match="not found") as info:
        lift(D, lowered("plain"), fixture["status"], {}, reply_bytes(fixture))
    assert info.value.status == 404
    stored = load_fixture("openai_responses", "get_stored_response")
    assert stored["status"] == 404 and "not found" in stored["reply"]["error"]["message"]


def test_a_stored_prompt_template_is_rejected_by_vllm() -> None:
    fixture = load_fixture("openai_responses", "error_prompt_field")
    with pytest.raises(ServerRejected, match="prompt template is not supported"):
        lift(D, lowered("plain"), 400, {}, reply_bytes(fixture))


# -- what vLLM does with the fields the dialect refuses (recorded, then refused) ----------------


def _doc_text(name: str) -> str:
    return str(load_fixture("openai_responses", name)["reply"]["output"][0]["content"][0]["text"])


def test_vllm_honours_seed_and_stop_here_but_the_dialect_refuses_them() -> None:
    assert _doc_text("doc_seed_11") == _doc_text("doc_seed_11_again") != _doc_text("doc_seed_12")
    stop = load_fixture("openai_responses", "doc_stop")["reply"]
    assert stop["status"] == "completed" and _doc_text("doc_stop") == "The capital of France is"
    assert "stop_reason" not in json.dumps(stop)  # nothing says a stop string ended it
    for sampling, leaf in [
        (Sampling(seed=11), "sampling.seed"),
        (Sampling(stop=(" Paris",)), "sampling.stop"),
    ]:
        with pytest.raises(Refused) as info:
            lower(D, chat(ASK, sampling=sampling), MODEL)
        assert info.value.path == leaf and "vllm_native" in str(info.value)


def test_vllm_ignores_n_and_echoes_penalties_here() -> None:
    n2 = load_fixture("openai_responses", "doc_n2")
    assert len(n2["reply"]["output"]) == 1  # n=2 silently ignored
    assert (
        load_fixture("openai_responses", "doc_presence_penalty")["reply"]["presence_penalty"] == 1.5
    )
    assert load_fixture("openai_responses", "doc_unknown_field")["status"] == 200


def test_vllm_tokenizes_the_responses_prompt_with_two_bos() -> None:
    reply = load_fixture("openai_responses", "doc_double_bos")["reply"]
    tokens = reply["input_messages"][0]["tokens"]
    assert tokens[:3] == [2, 2, 105] and reply["usage"]["input_tokens"] == len(tokens) == 15
    chat_route = load_fixture("openai_responses", "doc_tokenize_chat_route")["reply"]["tokens"]
    assert chat_route == tokens[1:]  # the chat route renders the same prompt with one BOS


def test_a_forced_call_without_strict_comes_back_as_text() -> None:
    fixture = load_fixture("openai_responses", "doc_forced_call_without_strict")
    assert "strict" not in fixture["request"]["tools"][0]
    reply = fixture["reply"]
    assert [item["type"] for item in reply["output"]] == ["message"]
    assert reply["output"][0]["content"][0]["text"].startswith("<tool_call>")
    assert reply["status"] == "incomplete"
    assert lowered("tool_required").body["tools"][0]["strict"] is True


# -- refused before I/O -------------------------------------------------------------------------

IMAGE_ASSISTANT = Message(role="assistant", content=(ImagePart(url="http://x/a.png"),))
REFUSALS = [
    (Request.completion("x"), "input.completion.text"),
    (Request(input=CompletionInput(token_ids=(1, 2))), "input.completion.token_ids"),
    (chat(ASK, sampling=Sampling(top_k=5)), "sampling.top_k"),
    (chat(ASK, sampling=Sampling(n=2, temperature=1.0)), "sampling.n"),
    (chat(ASK, sampling=Sampling(frequency_penalty=0.5)), "sampling.frequency_penalty"),
    (chat(ASK, sampling=Sampling(presence_penalty=0.5)), "sampling.presence_penalty"),
    (chat(ASK, sampling=Sampling(max_tokens=0)), "sampling.max_tokens"),
    (chat(ASK, scoring=Scoring(input_logprobs=True)), "scoring.input_logprobs"),
    (chat(ASK, scoring=Scoring(token_ids=True)), "scoring.token_ids"),
    (
        chat(ASK, scoring=Scoring(sampled_logprobs=True, candidate_token_ids=(5, 6))),
        "scoring.candidate_token_ids",
    ),
    (chat(ASK, reasoning=Reasoning(budget_tokens=64)), "reasoning.budget_tokens"),
    (chat(ASK, options={"min_p": 0.1}), "options.min_p"),
    (
        chat(
            ASK, structured_output=StructuredOutput(format="json_schema", schema={}, strict=False)
        ),
        "structured_output.strict",
    ),
    (chat(turn("user", "Hi", name="ann")), "input.chat.messages.name"),
    (
        chat(Message(role="assistant", content=(TextPart(text="a"), TextPart(text="b")))),
        "input.chat.messages[0].content[1].text",
    ),
    (chat(IMAGE_ASSISTANT), "input.chat.messages[0].content[0].image"),
    (
        chat(Message(role="user", content=(ImagePart(data=PNG_1X1),))),
        "input.chat.messages[0].content[0].image",
    ),
    (
        chat(
            Message(
                role="tool",
                content=(ToolResultPart(call_id="c", result="x", is_error=True),),
            )
        ),
        "input.chat.messages[0].content[0].tool_result.is_error",
    ),
    (
        chat(
            Message(
                role="user",
                content=(TextPart(text="a"), ToolResultPart(call_id="c", result="x")),
            )
        ),
        "input.chat.messages[0].content[1].tool_result",
    ),
    (
        chat(Message(role="user", content=(ToolCallPart(call_id="c", name="f", arguments={}),))),
        "input.chat.messages[0].content[0].tool_call",
    ),
    (chat(Message(role="tool", content=(TextPart(text="x"),))), "input.chat.messages[0]"),
    (chat(Message(role="user", content=())), "input.chat.messages[0]"),
    (chat(ASK, tools=Tools(choice="required")), "tools.choice"),
]


@pytest.mark.parametrize(("request_", "leaf"), REFUSALS, ids=[leaf for _, leaf in REFUSALS])
def test_what_the_wire_cannot_express_is_refused(request_: Request, leaf: str) -> None:
    with pytest.raises(Refused) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf and info.value.dialect == "openai_responses"


def test_refusals_name_the_dialect_that_can() -> None:
    reasons = {leaf: D.row_for(leaf) for leaf in ("sampling.seed", "sampling.n", "sampling.top_k")}
    for row in reasons.values():
        assert "vllm_native" in row.reason  # type: ignore[union-attr]


def test_capabilities_derived_from_the_table() -> None:
    caps = capability_outcomes(D)
    assert caps["seed"] == caps["top_k_sampling"] == caps["multiple_choices"] == "no"
    assert caps["input_scoring"] == caps["token_ids"] == caps["text_prompt"] == "no"
    assert (
        caps["sampled_top_k"] == caps["structured_output"] == caps["function_tools"] == "supported"
    )
    assert caps["sampling"] == caps["chat"] == "supported"
    assert caps["stop_strings"] == caps["penalties"] == caps["message_names"] == "no"


def test_images_lower_to_input_image_parts_with_a_detail() -> None:
    request = chat(
        Message(
            role="user",
            content=(
                ImagePart(url="https://example.com/cat.png", detail="low"),
                ImagePart(data=PNG_1X1, media_type="image/png"),
            ),
        )
    )
    low = lower(D, request, MODEL)
    assert low.body["input"][0]["content"] == [
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "low"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_1X1}", "detail": "auto"},
    ]
    detail = next(d for d in low.ledger if d.leaf.endswith("content[0].image.detail"))
    assert detail.path == "input[0].content[0].detail"
    pydantic.TypeAdapter(sdk.ResponseCreateParamsNonStreaming).validate_python(low.body)


def test_an_assistant_message_of_tool_calls_only_has_no_message_item() -> None:
    call = ToolCallPart(call_id="c1", name="f", arguments={"a": [1, 2]})
    low = lower(D, chat(ASK, Message(role="assistant", content=(call,))), MODEL)
    assert low.body["input"][1] == {
        "type": "function_call",
        "call_id": "c1",
        "name": "f",
        "arguments": '{"a":[1,2]}',
    }
    assert len(low.body["input"]) == 2


# -- replies that must not be believed (mutations of real replies) ------------------------------


def mutated(name: str, change) -> tuple[Lowered, bytes]:
    reply = copy.deepcopy(load_fixture("openai_responses", name)["reply"])
    change(reply)
    return lowered(name), json.dumps(reply).encode()


def _part(reply: dict) -> dict:
    return reply["output"][0]["content"][0]


def _short_top(reply: dict) -> None:
    _part(reply)["logprobs"][2]["top_logprobs"].pop()


def _no_logprobs(reply: dict) -> None:
    _part(reply)["logprobs"] = None


def _drop_position(reply: dict) -> None:
    del _part(reply)["logprobs"][1]


def _wrong_token(reply: dict) -> None:
    _part(reply)["logprobs"][1]["token"] = " blue"


def _too_many(reply: dict) -> None:
    _output_tokens(reply, 3)


def _too_few(reply: dict) -> None:
    _output_tokens(reply, 9)


def _output_tokens(reply: dict, n: int) -> None:
    """Another output count, the total moved with it: only the count is off."""
    reply["usage"]["total_tokens"] += n - reply["usage"]["output_tokens"]
    reply["usage"]["output_tokens"] = n


def _failed(reply: dict) -> None:
    reply["status"] = "failed"
    reply["error"] = {"code": "server_error", "message": "the engine fell over"}


def _failed_client(reply: dict) -> None:
    reply["status"] = "failed"
    reply["error"] = {"code": 400, "message": "bad prompt"}


def _in_progress(reply: dict) -> None:
    reply["status"] = "in_progress"


def _bad_arguments(reply: dict) -> None:
    reply["output"][0]["arguments"] = '{"city": "Par'


def _array_arguments(reply: dict) -> None:
    reply["output"][0]["arguments"] = '["Paris"]'


def _hosted_item(reply: dict) -> None:
    reply["output"].append({"type": "web_search_call", "id": "ws_1", "status": "completed"})


def _cut_json(reply: dict) -> None:
    _part(reply)["text"] = '{"name": "Bo'


@pytest.mark.parametrize(
    ("name", "change", "error", "needle"),
    [
        ("logprobs_top3", _short_top, ContractViolation, "lists 3 alternatives; 4 were asked"),
        ("logprobs_top3", _no_logprobs, ContractViolation, "missing although logprobs"),
        ("logprobs_top3", _drop_position, ContractViolation, "do not spell the answer"),
        ("logprobs_top3", _wrong_token, ContractViolation, "do not spell the answer"),
        ("logprobs_top3", _too_many, ContractViolation, "logprobs for 6 positions but generated 3"),
        ("logprobs_top3", _too_few, ContractViolation, "logprobs for 6 positions but generated 9"),
        ("plain", _failed, TransportError, "the engine fell over"),
        ("plain", _failed_client, ServerRejected, "bad prompt"),
        ("plain", _in_progress, ContractViolation, "not finished"),
        ("tool_required", _bad_arguments, ContractViolation, "not valid JSON"),
        ("tool_required", _array_arguments, ContractViolation, "is JSON but not an object"),
        ("plain", _hosted_item, ContractViolation, "expected shape"),
        ("json_schema", _cut_json, ContractViolation, "not valid JSON"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_inconsistent_replies_are_refused(name: str, change, error: type, needle: str) -> None:
    low, body = mutated(name, change)
    with pytest.raises(error, match=re.escape(needle)):
        lift(D, low, 200, {}, body)


def test_nan_logprob_is_a_contract_violation() -> None:
    fixture = load_fixture("openai_responses", "logprobs_top3")
    first = fixture["reply"]["output"][0]["content"][0]["logprobs"][0]["logprob"]
    body = reply_bytes(fixture).replace(repr(first).encode(), b"NaN", 1)
    with pytest.raises(ContractViolation, match="non-finite"):
        lift(D, lowered("logprobs_top3"), 200, {}, body)


def test_a_missing_reply_channel_is_a_contract_violation() -> None:
    fixture = load_fixture("openai_responses", "plain")  # recorded without logprobs
    request = chat(ASK, sampling=greedy(12), scoring=Scoring(sampled_logprobs=True))
    with pytest.raises(ContractViolation, match="logprobs"):
        lift(D, lower(D, request, MODEL), 200, {}, reply_bytes(fixture))


def test_logprobs_of_a_tool_call_are_not_on_this_wire() -> None:
    fixture = load_fixture("openai_responses", "tool_required")
    request = chat(turn("user", WEATHER_Q), tools=REQUIRED, scoring=Scoring(sampled_logprobs=True))
    with pytest.raises(ContractViolation, match="sampled_logprobs was requested and is missing"):
        lift(D, lower(D, request, MODEL), 200, {}, reply_bytes(fixture))


def test_a_refusal_part_is_visible() -> None:
    def refuse(reply: dict) -> None:
        reply["status"] = "completed"
        reply["incomplete_details"] = None
        reply["output"][0]["content"] = [{"type": "refusal", "refusal": "I cannot help."}]

    low, body = mutated("plain", refuse)
    r = lift(D, low, 200, {}, body)
    assert r.choices[0].text == "" and r.choices[0].finish_reason == "refusal"
    assert r.warnings == ("openai_responses: the model refused: 'I cannot help.'",)


def test_reasoning_items_are_lifted_apart_from_the_answer() -> None:
    def think(reply: dict) -> None:
        reply["output"].insert(
            0,
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": "Paris is the capital."}],
            },
        )
        reply["output"].insert(
            1,
            {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "S"}]},
        )

    low, body = mutated("plain", think)
    choice = lift(D, low, 200, {}, body).choices[0]
    assert choice.reasoning == "Paris is the capital.\n\nS"
    assert choice.text == "The capital of France is Paris.\nThe capital of France"


# -- streams that must not be believed ----------------------------------------------------------


def _sse(name: str) -> str:
    return str(load_fixture("openai_responses", name)["reply_sse"])


def _events(text_: str) -> list[str]:
    return [block for block in text_.split("\n\n") if block.strip()]


def _join(blocks: list[str]) -> bytes:
    return ("\n\n".join(blocks) + "\n\n").encode()


def test_a_stream_without_its_terminal_event_is_truncated() -> None:
    blocks = _events(_sse("stream_plain"))[:-1]
    with pytest.raises(ContractViolation, match="without a response.completed"):
        lift(D, lowered("stream_plain"), 200, {}, _join(blocks))


def test_an_in_band_error_event_is_the_error_it_reports() -> None:
    blocks = _events(_sse("stream_plain"))[:5]
    error = {"type": "error", "code": "server_error", "message": "overloaded", "param": None}
    blocks.append(f"event: error\ndata: {json.dumps(error)}")
    with pytest.raises(TransportError, match="overloaded"):
        lift(D, lowered("stream_plain"), 200, {}, _join(blocks))


def test_a_stream_cut_by_vllms_broken_in_band_error_is_truncated() -> None:
    """vLLM 0.32 validates its generation-error JSON against the event union, which cannot
    match, so the stream stops without a terminal event: never read as an answer."""
    blocks = _events(_sse("stream_plain"))[:3]
    blocks.append('data: {"error": {"message": "Internal server error", "code": 500}}')
    with pytest.raises(ContractViolation, match="truncated"):
        lift(D, lowered("stream_plain"), 200, {}, _join(blocks))


def test_a_failed_terminal_event_is_an_error() -> None:
    blocks = _events(_sse("stream_plain"))
    last = json.loads(blocks[-1].split("data: ", 1)[1])
    last["type"] = "response.failed"
    last["response"]["status"] = "failed"
    last["response"]["error"] = {"code": "server_error", "message": "ran out of memory"}
    blocks[-1] = f"event: response.failed\ndata: {json.dumps(last)}"
    with pytest.raises(TransportError, match="ran out of memory"):
        lift(D, lowered("stream_plain"), 200, {}, _join(blocks))


def test_a_final_response_that_disagrees_with_its_deltas_is_refused() -> None:
    blocks = _events(_sse("stream_logprobs"))
    delta = next(i for i, b in enumerate(blocks) if "output_text.delta" in b)
    blocks[delta] = blocks[delta].replace('"delta":"Name"', '"delta":"Nome"')
    with pytest.raises(ContractViolation, match="disagrees with itself"):
        lift(D, lowered("stream_logprobs"), 200, {}, _join(blocks))
    blocks = _events(_sse("stream_logprobs"))
    blocks = [b for i, b in enumerate(blocks) if i != delta]
    with pytest.raises(ContractViolation, match="disagrees with itself"):
        lift(D, lowered("stream_logprobs"), 200, {}, _join(blocks))


def test_streamed_logprobs_must_be_the_final_ones() -> None:
    blocks = _events(_sse("stream_logprobs"))
    last = json.loads(blocks[-1].split("data: ", 1)[1])
    last["response"]["output"][0]["content"][0]["logprobs"][0]["logprob"] = -0.5
    blocks[-1] = f"event: response.completed\ndata: {json.dumps(last)}"
    with pytest.raises(ContractViolation, match="rode on the text deltas"):
        lift(D, lowered("stream_logprobs"), 200, {}, _join(blocks))


def test_an_event_named_unlike_its_data_is_refused() -> None:
    blocks = _events(_sse("stream_plain"))
    blocks[0] = blocks[0].replace("event: response.created", "event: response.completed", 1)
    with pytest.raises(ContractViolation, match="named 'response.completed'"):
        lift(D, lowered("stream_plain"), 200, {}, _join(blocks))


def test_a_terminal_event_without_output_is_filled_from_the_done_items() -> None:
    blocks = _events(_sse("stream_tool_required"))
    last = json.loads(blocks[-1].split("data: ", 1)[1])
    last["response"]["output"] = []
    blocks[-1] = f"event: response.completed\ndata: {json.dumps(last)}"
    calls = lift(D, lowered("stream_tool_required"), 200, {}, _join(blocks)).choices[0].tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]


# -- fuzz: a malformed reply raises a SievalError or lifts ---------------------------------------

FUZZED = ("logprobs_top3", "tool_required", "json_schema")
PATHS = [
    (name, path)
    for name in FUZZED
    for path in paths(load_fixture("openai_responses", name)["reply"])[1:]
]


def _lift_or_sieval_error(low: Lowered, body: bytes) -> None:
    try:
        response = lift(D, low, 200, {}, body)
    except SievalError:
        return
    assert len(response.choices) == 1


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATHS), json_values)
def test_mutated_reply(case: tuple[str, tuple], value: Any) -> None:
    name, path = case
    reply = copy.deepcopy(load_fixture("openai_responses", name)["reply"])
    set_at(reply, path, value)
    _lift_or_sieval_error(lowered(name), json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(body: bytes) -> None:
    _lift_or_sieval_error(lowered("logprobs_top3"), body)
    _lift_or_sieval_error(lowered("stream_logprobs"), body)


STREAM_TEXT = _sse("stream_logprobs")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(STREAM_TEXT)), st.text(max_size=8))
def test_cut_or_spliced_stream(cut: int, junk: str) -> None:
    spliced = STREAM_TEXT[:cut] + junk + STREAM_TEXT[cut:]
    _lift_or_sieval_error(lowered("stream_logprobs"), spliced.encode())


STREAM_BLOCKS = _events(STREAM_TEXT)
LAST = json.loads(STREAM_BLOCKS[-1].split("data: ", 1)[1])
DELTA = json.loads(STREAM_BLOCKS[4].split("data: ", 1)[1])
EVENT_PATHS = [("last", p) for p in paths(LAST)[1:]] + [("delta", p) for p in paths(DELTA)[1:]]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(EVENT_PATHS), json_values)
def test_mutated_stream_event(case: tuple[str, tuple], value: Any) -> None:
    which, path = case
    blocks = list(STREAM_BLOCKS)
    index = len(blocks) - 1 if which == "last" else 4
    data = copy.deepcopy(LAST if which == "last" else DELTA)
    set_at(data, path, value)
    name = blocks[index].split("\n", 1)[0]
    blocks[index] = f"{name}\ndata: {json.dumps(data)}"
    _lift_or_sieval_error(lowered("stream_logprobs"), _join(blocks))


@pytest.mark.parametrize("k", [20, 100])
def test_a_top_k_past_the_wires_cap_is_refused_before_any_byte(k: int) -> None:
    """k + 1 is sent, and the wire serves at most 20 (vLLM 400s at 101): k <= 19, as on chat."""
    request = chat(ASK, scoring=Scoring(sampled_logprobs=True, sampled_top_k=k))
    with pytest.raises(Refused) as info:
        lower(D, request, MODEL)
    assert info.value.path == "scoring.sampled_top_k"
    assert "at most 20" in str(info.value) and "k <= 19" in str(info.value)
    assert "vllm_native" in str(info.value)
    nineteen = chat(ASK, scoring=Scoring(sampled_logprobs=True, sampled_top_k=19))
    assert lower(D, nineteen, MODEL).body["top_logprobs"] == 20


def test_the_server_rejects_what_the_dialect_refuses() -> None:
    """The recorded 400 for top_logprobs 101: what the refusal saves the user from."""
    fixture = load_fixture("openai_responses", "error_top_logprobs_101")
    assert fixture["request"]["top_logprobs"] == 101
    with pytest.raises(ServerRejected) as info:
        lift(D, lowered("plain"), fixture["status"], {}, reply_bytes(fixture))
    assert info.value.path == "top_k_cap" and "sample logprobs of 101" in info.value.server_message
