"""openai_chat lowered and lifted against replies recorded from the real vLLM 0.32.0.

Every recorded body is what the dialect lowers its IR request to; every recorded reply parses with
the openai SDK's types; mutations of real replies prove each check; hypothesis fuzzes ``lift``.
"""

from __future__ import annotations

import copy
import json
import math
import typing
from collections.abc import Callable, Mapping
from typing import Any

import pydantic
import pytest
from conftest import FIXTURES, load_fixture, reply_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec import UNSET
from mutation import json_values, paths, set_at
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat import completion_create_params as sdk

from sieval.audit.corpus import (
    CALL_TEXT,
    CAPITAL,
    PERSON,
    PERSON_TEXT,
    PNG_1X1,
    WEATHER_CHAT,
    chat,
    greedy,
    turn,
)
from sieval.dialects.openai_chat import DIALECT as D
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.dialects.vocabulary import Lowered
from sieval.errors import ContractViolation, Refused, ServerRejected, SievalError, TransportError
from sieval.ir.request import (
    FunctionTool,
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
FOLDER = FIXTURES / "openai_chat" / "0.32.0"
STREAM = Scheduling(stream=True)
STORY = turn("user", "Tell me a story.")
SCHEMA = StructuredOutput(format="json_schema", schema=PERSON, name="person", strict=True)
TOOL_TURNS = (
    turn("user", CALL_TEXT),
    Message(
        role="assistant",
        content=(ToolCallPart(call_id="call_1", name="get_weather", arguments={"city": "Paris"}),),
    ),
    Message(role="tool", content=(ToolResultPart(call_id="call_1", result={"temperature_c": 18}),)),
)

CASES: dict[str, Request] = {
    "plain": chat(turn("user", CAPITAL), sampling=greedy(8)),
    "system_user": chat(
        turn("system", "Answer in one word."), turn("user", CAPITAL), sampling=greedy(8)
    ),
    "developer_name": chat(
        turn("developer", "Be brief."), turn("user", "Hi", name="ann"), sampling=greedy(6)
    ),
    "multi_turn": chat(
        turn("user", "Hi"),
        turn("assistant", "Hello! How can I help?"),
        turn("user", CAPITAL),
        sampling=greedy(8),
    ),
    **{
        name: chat(STORY, sampling=Sampling(temperature=1.0, max_tokens=8, seed=seed))
        for name, seed in (("seed_11_a", 11), ("seed_11_b", 11), ("seed_12", 12))
    },
    "n2_temp1": chat(
        STORY,
        sampling=Sampling(temperature=1.0, max_tokens=6, seed=7, n=2),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    ),
    "logprobs_sampled": chat(
        STORY,
        sampling=Sampling(temperature=1.0, max_tokens=6, seed=7),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
    ),
    "logprobs_greedy": chat(
        turn("user", CAPITAL),
        sampling=greedy(8),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    ),
    "byte_fallback": chat(
        turn("user", "𝔘𝔫𝔦 ꙮ 𐍈"),
        sampling=greedy(10),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=1),
    ),
    "stop_string": chat(
        turn("user", "Say hi."),
        sampling=Sampling(temperature=0.0, max_tokens=12, stop=(" mend",)),
        scoring=Scoring(sampled_logprobs=True),
    ),
    "json_schema": chat(turn("user", PERSON_TEXT), sampling=greedy(24), structured_output=SCHEMA),
    "json_schema_cut": chat(
        turn("user", "Give a person as JSON."), sampling=greedy(40), structured_output=SCHEMA
    ),
    "json_object": chat(
        turn("user", PERSON_TEXT),
        sampling=greedy(24),
        structured_output=StructuredOutput(format="json_object"),
    ),
    "tool_required": chat(
        turn("user", CALL_TEXT),
        sampling=greedy(40),
        tools=Tools(functions=(WEATHER_CHAT,), choice="required"),
    ),
    "tool_result_turn": chat(
        *TOOL_TURNS, sampling=greedy(12), tools=Tools(functions=(WEATHER_CHAT,))
    ),
    "tool_required_cut": chat(
        turn("user", "What is the weather in Paris?"),
        sampling=greedy(40),
        tools=Tools(functions=(WEATHER_CHAT,), choice="required"),
    ),
    "tool_array_arguments": chat(
        turn("user", "What is the weather in Paris?"),
        sampling=Sampling(temperature=0.7, max_tokens=40, seed=6),
        tools=Tools(functions=(WEATHER_CHAT,), choice="required"),
    ),
    "reasoning_absent": chat(
        turn("user", CAPITAL), sampling=greedy(8), reasoning=Reasoning(effort="low")
    ),
    "clamped": chat(turn("user", "hello " * 4080), sampling=greedy(40)),
    "stream": chat(turn("user", CAPITAL), sampling=greedy(8), scheduling=STREAM),
    "stream_logprobs": chat(
        turn("user", CAPITAL),
        sampling=greedy(8),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        scheduling=STREAM,
    ),
    "stream_tool": chat(
        turn("user", CALL_TEXT),
        sampling=greedy(40),
        tools=Tools(functions=(WEATHER_CHAT,), choice="required"),
        scheduling=STREAM,
    ),
    "error_image": chat(
        Message(
            role="user",
            content=(
                TextPart(text="What is this?"),
                ImagePart(data=PNG_1X1, media_type="image/png", detail="low"),
            ),
        ),
        sampling=Sampling(max_tokens=4),
    ),
    "error_unknown_model": chat(turn("user", "Hi"), sampling=Sampling(max_tokens=1)),
    "error_context_overflow": chat(turn("user", "hello " * 4200), sampling=greedy(4)),
}
TIME = FunctionTool(
    name="get_time",
    description="Current time in a timezone",
    parameters={
        "type": "object",
        "properties": {"zone": {"type": "string"}},
        "required": ["zone"],
    },
)
AUTO_TEXT = f"Copy this text exactly:\n<tool_call>\n{CALL_TEXT}\n</tool_call>\nEND"
TWO_CALLS_TEXT = (
    f"Copy this text exactly:\n<tool_call>\n{CALL_TEXT}\n</tool_call>\n<tool_call>\n"
    '{"name": "get_time", "arguments": {"zone": "Asia/Tokyo"}}\n</tool_call>\nEND'
)
BOTH = Tools(functions=(WEATHER_CHAT, TIME))
PARALLEL_RESULTS = (
    turn("user", TWO_CALLS_TEXT),
    Message(
        role="assistant",
        content=(
            ToolCallPart(call_id="call_1", name="get_weather", arguments={"city": "Paris"}),
            ToolCallPart(call_id="call_2", name="get_time", arguments={"zone": "Asia/Tokyo"}),
        ),
    ),
    Message(role="tool", content=(ToolResultPart(call_id="call_1", result="18 C"),)),
    Message(role="tool", content=(ToolResultPart(call_id="call_2", result="09:00"),)),
)
TOOL_SHAPES: dict[str, Request] = {
    "tool_auto": chat(
        turn("user", AUTO_TEXT),
        sampling=Sampling(temperature=0.0, max_tokens=60, stop=("END",)),
        tools=BOTH,
    ),
    "tool_auto_no_call": chat(turn("user", CAPITAL), sampling=greedy(8), tools=BOTH),
    "stream_tool_auto": chat(
        turn("user", AUTO_TEXT),
        sampling=Sampling(temperature=0.0, max_tokens=60, stop=("END",)),
        tools=BOTH,
        scheduling=STREAM,
    ),
    "tool_results_parallel": chat(*PARALLEL_RESULTS, sampling=greedy(16), tools=BOTH),
}
"""Issue 35's tool shapes (scripts/record_openai_chat_fixtures.py): each a case once recorded."""
CASES.update({k: v for k, v in TOOL_SHAPES.items() if (FOLDER / f"{k}.json").exists()})
MODEL_OF = {"error_unknown_model": "no-such-model"}
NOT_SENT_BY_THE_DIALECT = {"error_top_logprobs_101", "error_tools_empty"} | {
    name for name in ("tool_named",) if (FOLDER / f"{name}.json").exists()
}  # the IR has no named tool choice


def lowered(name: str) -> Lowered:
    return lower(D, CASES[name], MODEL_OF.get(name, MODEL))


def run(name: str) -> Response:
    fixture = load_fixture("openai_chat", name)
    return lift(D, lowered(name), fixture["status"], {}, reply_bytes(fixture))


def raw(name: str) -> dict[str, Any]:
    reply: dict[str, Any] = load_fixture("openai_chat", name)["reply"]
    return reply


def recorded() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.json"))


# -- what is sent ---------------------------------------------------------------------------------


def test_the_registry_finds_the_dialect() -> None:
    assert get_dialect("openai_chat") is D
    assert D.endpoint.path == "/v1/chat/completions" and D.auth.describe() == (
        "Authorization: Bearer <key>"
    )


def test_every_fixture_is_a_case_or_a_body_the_dialect_never_sends() -> None:
    assert set(recorded()) == set(CASES) | NOT_SENT_BY_THE_DIALECT


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_gives_exactly_the_recorded_body(name: str) -> None:
    fixture = load_fixture("openai_chat", name)
    assert fixture["server"] == {"engine": "vllm", "version": "0.32.0", "model": MODEL}
    assert lowered(name).body == fixture["request"]


def _deep(value: Any) -> Any:
    """Consume pydantic's lazy ``Iterable`` validators, so nested parts are validated too."""
    if isinstance(value, Mapping):
        return {k: _deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [_deep(v) for v in value]
    return value


SDK_FIELDS = set(typing.get_type_hints(sdk.CompletionCreateParamsBase)) | {"stream"}
# built once and kept: their lazy validators must outlive each validation
PLAIN_PARAMS = pydantic.TypeAdapter(sdk.CompletionCreateParamsNonStreaming)
STREAM_PARAMS = pydantic.TypeAdapter(sdk.CompletionCreateParamsStreaming)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_body_validates_against_the_sdk_request_types(name: str) -> None:
    body = lowered(name).body
    params = STREAM_PARAMS if body.get("stream") else PLAIN_PARAMS
    _deep(params.validate_python(body))
    assert set(body) <= SDK_FIELDS


def test_the_sdk_check_catches_a_malformed_part() -> None:
    body = copy.deepcopy(lowered("plain").body)
    body["messages"][0]["content"][0] = {"type": "text", "txt": CAPITAL}
    with pytest.raises(pydantic.ValidationError):
        _deep(PLAIN_PARAMS.validate_python(body))


@pytest.mark.parametrize("name", recorded())
def test_the_sdk_parses_every_recorded_reply(name: str) -> None:
    fixture = load_fixture("openai_chat", name)
    if "reply_sse" in fixture:
        events = [e[6:] for e in fixture["reply_sse"].split("\n\n") if e.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [ChatCompletionChunk.model_validate(json.loads(e)) for e in events[:-1]]
        assert chunks[-1].usage is not None and chunks[-1].choices == []
    elif fixture["status"] == 200:
        assert ChatCompletion.model_validate(fixture["reply"]).object == "chat.completion"
    else:
        assert fixture["reply"]["error"]["code"] == fixture["status"]


def test_the_ledger_names_every_message_and_part() -> None:
    ledger = {d.leaf: (d.outcome, d.detail) for d in lowered("tool_result_turn").ledger}
    assert ledger["input.chat.messages[1].content[0].tool_call"] == (
        "consumed",
        "messages[1].tool_calls[0]",
    )
    assert ledger["input.chat.messages[2].content[0].tool_result"] == (
        "consumed",
        "messages[2].content[0]",
    )
    assert ledger["sampling.max_tokens"] == ("consumed", "max_completion_tokens")
    assert ledger["tools.functions.description"] == (
        "consumed",
        "tools[0].function.description",
    )
    image = {d.leaf: d.detail for d in lowered("error_image").ledger}
    assert image["input.chat.messages[0].content[1].image.data"] == (
        "messages[0].content[1].image_url.url"
    )
    assert image["input.chat.messages[0].content[1].image.detail"] == (
        "messages[0].content[1].image_url.detail"
    )


def test_a_schema_without_a_name_gets_openais_required_name() -> None:
    request = chat(
        turn("user", "x"), structured_output=StructuredOutput(format="json_schema", schema=PERSON)
    )
    body = lower(D, request, MODEL).body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": PERSON},
    }


def test_an_image_url_is_sent_as_is() -> None:
    request = chat(Message(role="user", content=(ImagePart(url="https://x/cat.png"),)))
    part = lower(D, request, MODEL).body["messages"][0]["content"][0]
    assert part == {"type": "image_url", "image_url": {"url": "https://x/cat.png"}}


def test_a_tool_choice_of_none_without_tools_is_a_noop() -> None:
    request = chat(turn("user", "x"), tools=Tools(choice="none", parallel=True))
    low = lower(D, request, MODEL)
    assert "tool_choice" not in low.body and "parallel_tool_calls" not in low.body
    assert {d.leaf: d.outcome for d in low.ledger}["tools.choice"] == "noop"


# -- refused before I/O -------------------------------------------------------------------------

HI = turn("user", "Hi")
REFUSALS = [
    (Request.completion("x"), "input.completion.text", "use openai_completions"),
    (chat(HI, sampling=Sampling(top_k=5)), "sampling.top_k", "vllm_native"),
    (chat(HI, sampling=Sampling(max_tokens=0)), "sampling.max_tokens", "at least one token"),
    (chat(HI, sampling=Sampling(stop=("a", "b", "c", "d", "e"))), "sampling.stop", "at most 4"),
    (chat(HI, scoring=Scoring(input_logprobs=True)), "scoring.input_logprobs", "vllm_native"),
    (chat(HI, scoring=Scoring(token_ids=True)), "scoring.token_ids", "return_token_ids"),
    (
        chat(HI, scoring=Scoring(sampled_logprobs=True, candidate_token_ids=(1, 2))),
        "scoring.candidate_token_ids",
        "sglang_native",
    ),
    (
        chat(HI, scoring=Scoring(sampled_logprobs=True, sampled_top_k=20)),
        "scoring.sampled_top_k",
        "k <= 19",
    ),
    (
        chat(HI, scoring=Scoring(sampled_logprobs=True, sampled_top_k=100)),
        "scoring.sampled_top_k",
        "at most 20",
    ),
    (chat(HI, reasoning=Reasoning(budget_tokens=64)), "reasoning.budget_tokens", "effort"),
    (chat(HI, reasoning=Reasoning(summary="auto")), "reasoning.summary", "openai_responses"),
    (chat(HI, options={"min_p": 0.1}), "options.min_p", "vllm_native"),
    (chat(HI, tools=Tools(choice="required")), "tools.choice", "needs tools.functions"),
    (
        chat(HI, structured_output=StructuredOutput(format="json_schema", schema={}, name="a b")),
        "structured_output.name",
        "1-64 letters",
    ),
    (
        chat(Message(role="tool", content=(ToolResultPart(call_id="c", result=1, is_error=True),))),
        "input.chat.messages[0].content[0].tool_result.is_error",
        "no error flag",
    ),
    (
        chat(Message(role="user", content=(ToolResultPart(call_id="c", result=1),))),
        "input.chat.messages[0].content[0].tool_result",
        "tool messages only",
    ),
    (
        chat(Message(role="tool", content=(TextPart(text="18"),))),
        "input.chat.messages[0]",
        "exactly one tool result",
    ),
    (
        chat(Message(role="tool", name="w", content=(ToolResultPart(call_id="c", result=1),))),
        "input.chat.messages[0].name",
        "take no name",
    ),
    (
        chat(Message(role="user", content=(ToolCallPart(call_id="c", name="f", arguments={}),))),
        "input.chat.messages[0].content[0].tool_call",
        "assistant messages only",
    ),
    (
        chat(Message(role="system", content=(ImagePart(url="https://x/y.png"),))),
        "input.chat.messages[0].content[0].image",
        "user messages only",
    ),
    (
        chat(Message(role="user", content=(ImagePart(data="AAAA"),))),
        "input.chat.messages[0].content[0].image",
        "needs media_type",
    ),
    (chat(Message(role="user", content=())), "input.chat.messages[0]", "at least one part"),
]


@pytest.mark.parametrize(
    ("request_", "leaf", "why"), REFUSALS, ids=[leaf for _, leaf, _ in REFUSALS]
)
def test_what_the_wire_cannot_express_is_refused(request_: Request, leaf: str, why: str) -> None:
    with pytest.raises(Refused, match=why) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf
    assert info.value.dialect == "openai_chat"


def test_every_leaf_the_table_accepts_is_one_the_wire_takes() -> None:
    from sieval.dialects.table import capability_outcomes

    caps = capability_outcomes(D)
    assert caps["chat"] == caps["sampled_top_k"] == caps["function_tools"] == "supported"
    assert caps["text_prompt"] == caps["input_scoring"] == caps["top_k_sampling"] == "no"
    assert caps["reasoning"] == "partial"


# -- recorded replies ---------------------------------------------------------------------------


def test_plain_reply_is_the_content_with_usage_and_provenance() -> None:
    r = run("plain")
    choice = r.choices[0]
    assert choice.text == raw("plain")["choices"][0]["message"]["content"]
    assert choice.finish_reason == "length" and choice.tokens is UNSET
    assert (r.usage.input_tokens, r.usage.output_tokens) == (16, 8)
    assert r.usage.cached_tokens is UNSET and r.usage.reasoning_tokens is UNSET
    assert r.model == MODEL and str(r.system_fingerprint).startswith("vllm-0.32.0")
    assert r.warnings == ()


def test_vllm_folds_the_system_and_developer_messages_into_the_user_turn() -> None:
    assert run("system_user").choices[0].text.startswith("Answer in one word.\n\n")
    assert run("developer_name").choices[0].text.startswith("Be brief.\n\nHi")


def test_a_seed_repeats_at_temperature_1_and_another_seed_differs() -> None:
    a, b, c = (run(n).choices[0].text for n in ("seed_11_a", "seed_11_b", "seed_12"))
    assert a == b and a != c


def _sorted_k(entries: list[dict[str, Any]], k: int) -> list[tuple[str, float]]:
    ranked = sorted(entries, key=lambda e: -e["logprob"])
    return [(e["token"], e["logprob"]) for e in ranked[:k]]


def test_sampled_first_lists_are_sorted_and_cut_to_the_exact_top_k() -> None:
    content = raw("logprobs_sampled")["choices"][0]["logprobs"]["content"]
    first = content[0]
    wire_list = [(e["token"], e["logprob"]) for e in first["top_logprobs"]]
    assert wire_list[0] == (first["token"], first["logprob"]) == ("Sometimes", first["logprob"])
    assert wire_list[0][1] < min(lp for _, lp in wire_list[1:])  # sampled first, not the best
    tokens = run("logprobs_sampled").choices[0].tokens
    assert len(tokens) == len(content) == 6
    for token, entry in zip(tokens, content, strict=True):
        assert [(e.token, e.logprob) for e in token.top] == _sorted_k(entry["top_logprobs"], 3)
    assert tokens[0].scored_rank == -1
    assert [e.token for e in tokens[0].top] == ["Tell", "I", "You"]


def test_greedy_tokens_are_rank_0_and_spell_the_content() -> None:
    choice = run("logprobs_greedy").choices[0]
    assert "".join(t.text for t in choice.tokens) == choice.text
    for token in choice.tokens:
        assert token.scored_rank == 0 and token.top[0].logprob == token.logprob
        assert len(token.top) == 2
        assert choice.text[token.offset :].startswith(token.text)


def test_n2_keeps_its_channels_per_choice() -> None:
    r = run("n2_temp1")
    assert [c.index for c in r.choices] == [0, 1]
    assert r.choices[0].text != r.choices[1].text
    for c in r.choices:
        assert "".join(t.text for t in c.tokens) == c.text
        assert all(len(t.top) == 2 and t.top[0].logprob >= t.top[1].logprob for t in c.tokens)
    assert r.usage.output_tokens == 12 == sum(len(c.tokens) for c in r.choices)


def test_byte_fallback_halves_are_empty_and_the_tokens_still_spell_the_content() -> None:
    choice = run("byte_fallback").choices[0]
    texts = [t.text for t in choice.tokens]
    assert texts[:4] == ["", "", "", "𝔢"] and "".join(texts) == choice.text == "𝔢𝔡 "
    offsets = [t.offset for t in choice.tokens]
    assert offsets == sorted(offsets) and offsets[:4] == [0, 0, 0, 0] and offsets[4] == 1


def test_tokens_past_a_stop_string_are_kept_with_a_warning() -> None:
    r = run("stop_string")
    choice = r.choices[0]
    assert choice.text == "Say hi." and choice.stop_reason == " mend"
    assert [t.text for t in choice.tokens][-1] == " mendatang"
    assert choice.tokens[-1].offset == len(choice.text)
    assert len(r.warnings) == 1 and "' mend'" in r.warnings[0]


def test_json_schema_output_is_parsed() -> None:
    value = run("json_schema").choices[0].structured_output
    assert value.value == {"name": "Bob", "adult": True}


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("json_schema_cut", r"not valid JSON \(cut at max_tokens\)"),
        ("json_object", "not valid JSON"),
    ],
)
def test_structured_output_that_does_not_parse_is_refused(name: str, needle: str) -> None:
    with pytest.raises(ContractViolation, match=needle):
        run(name)


def test_a_forced_tool_call_is_lifted_with_parsed_arguments() -> None:
    r = run("tool_required")
    choice = r.choices[0]
    wire_call = raw("tool_required")["choices"][0]["message"]["tool_calls"][0]
    assert choice.tool_calls == (
        ToolCall(call_id=wire_call["id"], name="get_weather", arguments={"city": "Paris"}),
    )
    assert choice.finish_reason == "tool_calls" and choice.text == "" and r.warnings == ()


def test_the_follow_up_turn_with_the_tool_result_is_answered() -> None:
    choice = run("tool_result_turn").choices[0]
    assert choice.text.startswith('({"temperature_c":18') and choice.tool_calls is UNSET


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("tool_required_cut", "carries no tool call"),
        ("tool_array_arguments", "JSON but not an object"),
    ],
)
def test_a_forced_call_that_is_cut_or_not_an_object_is_refused(name: str, needle: str) -> None:
    with pytest.raises(ContractViolation, match=needle):
        run(name)


def test_reasoning_fields_absent_stay_unset_not_zero() -> None:
    r = run("reasoning_absent")
    assert raw("reasoning_absent")["choices"][0]["message"]["reasoning"] is None
    assert r.choices[0].reasoning is UNSET and r.usage.reasoning_tokens is UNSET
    assert {d.leaf: d.path for d in lowered("reasoning_absent").ledger}["reasoning.effort"] == (
        "reasoning_effort"
    )


def test_a_length_finish_before_max_tokens_is_the_context_clamp() -> None:
    r = run("clamped")
    assert r.usage.output_tokens == 7 and r.choices[0].finish_reason == "length"
    assert len(r.warnings) == 1 and "after 7 of max_tokens=40" in r.warnings[0]


def test_the_folded_stream_is_the_non_stream_response() -> None:
    assert run("stream").choices == run("plain").choices
    assert run("stream").usage == run("plain").usage
    streamed, plain = run("stream_logprobs"), run("logprobs_greedy")
    assert streamed.choices == plain.choices and streamed.usage == plain.usage
    tool_s, tool_p = run("stream_tool").choices[0], run("tool_required").choices[0]
    assert [(c.name, c.arguments) for c in tool_s.tool_calls] == [
        (c.name, c.arguments) for c in tool_p.tool_calls
    ]
    assert tool_s.finish_reason == tool_p.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("name", "status", "kind", "needle"),
    [
        ("error_image", 400, None, "not a multimodal model"),
        ("error_unknown_model", 404, "unknown_model", "does not exist"),
        ("error_context_overflow", 400, "context_overflow", "maximum context length is 4096"),
    ],
)
def test_server_errors_carry_vllms_message(
    name: str, status: int, kind: str | None, needle: str
) -> None:
    with pytest.raises(ServerRejected) as info:
        run(name)
    assert info.value.status == status and info.value.path == kind
    assert needle in info.value.server_message


def test_what_the_dialect_refuses_the_server_rejects_too() -> None:
    """top_logprobs 101 and tools: [] are 400s on vLLM; the dialect never sends them."""
    with pytest.raises(Refused):
        lower(D, chat(HI, scoring=Scoring(sampled_logprobs=True, sampled_top_k=100)), MODEL)
    assert "tools" not in lower(D, chat(HI, tools=Tools(functions=())), MODEL).body
    low = lowered("plain")
    for name, kind in (("error_top_logprobs_101", "top_k_cap"), ("error_tools_empty", None)):
        fixture = load_fixture("openai_chat", name)
        with pytest.raises(ServerRejected) as info:
            lift(D, low, fixture["status"], {}, reply_bytes(fixture))
        assert info.value.path == kind


def test_a_5xx_reaching_lift_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="HTTP 503"):
        lift(D, lowered("plain"), 503, {}, b"<html>busy</html>")


# -- replies that must not be believed (mutations of real replies) ------------------------------


def mutated(name: str, change: Callable[[dict[str, Any]], None]) -> bytes:
    reply = copy.deepcopy(raw(name))
    change(reply)
    return json.dumps(reply).encode()


def _first(reply: dict[str, Any]) -> dict[str, Any]:
    choice: dict[str, Any] = reply["choices"][0]
    return choice


def _short_top(reply: dict[str, Any]) -> None:
    _first(reply)["logprobs"]["content"][2]["top_logprobs"].pop()


def _no_logprobs(reply: dict[str, Any]) -> None:
    _first(reply)["logprobs"] = None


def _dup_index(reply: dict[str, Any]) -> None:
    reply["choices"][1]["index"] = 0


def _drop_token(reply: dict[str, Any]) -> None:
    del _first(reply)["logprobs"]["content"][3]


def _wrong_token(reply: dict[str, Any]) -> None:
    entry = _first(reply)["logprobs"]["content"][1]
    entry["token"] = " was"
    # renamed in its top-k entry too (vLLM lists it first), or the top-k check refuses it first
    assert entry["top_logprobs"][0]["logprob"] == entry["logprob"]
    entry["top_logprobs"][0]["token"] = " was"


def _count_off(reply: dict[str, Any]) -> None:
    reply["usage"]["completion_tokens"] += 1
    reply["usage"]["total_tokens"] += 1  # the usage still adds up: only the count is off


def _bad_arguments(reply: dict[str, Any]) -> None:
    _first(reply)["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Par'


def _no_call(reply: dict[str, Any]) -> None:
    _first(reply)["message"]["tool_calls"] = []


def _no_content(reply: dict[str, Any]) -> None:
    _first(reply)["message"]["content"] = None


def _refusal(reply: dict[str, Any]) -> None:
    _first(reply)["message"].update(content=None, refusal="I can't help with that.")


@pytest.mark.parametrize(
    ("name", "change", "needle"),
    [
        ("logprobs_greedy", _short_top, "lists 2 alternatives; top_logprobs=3"),
        ("logprobs_greedy", _no_logprobs, "missing although logprobs were requested"),
        ("logprobs_greedy", _drop_token, "is not the text at character"),
        ("logprobs_greedy", _wrong_token, "is not the text at character"),
        ("logprobs_greedy", _count_off, "usage.completion_tokens is 9"),
        ("n2_temp1", _dup_index, "choice indices"),
        ("tool_required", _bad_arguments, "is not valid JSON"),
        ("tool_required", _no_call, "finished for tool_calls but carries no tool call"),
        ("json_schema", _no_content, "not valid JSON"),
        ("json_schema", _refusal, "is a refusal"),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_inconsistent_replies_are_contract_violations(
    name: str, change: Callable[[dict[str, Any]], None], needle: str
) -> None:
    with pytest.raises(ContractViolation, match=needle):
        lift(D, lowered(name), 200, {}, mutated(name, change))


def test_the_last_top_k_entry_short_is_seen_even_when_sorted() -> None:
    body = mutated(
        "logprobs_sampled", lambda r: _first(r)["logprobs"]["content"][0]["top_logprobs"].pop()
    )
    with pytest.raises(ContractViolation, match="top_logprobs=4 was sent"):
        lift(D, lowered("logprobs_sampled"), 200, {}, body)


def test_a_refusal_and_an_empty_content_are_visible_with_their_text_empty() -> None:
    r = lift(D, lowered("plain"), 200, {}, mutated("plain", _refusal))
    assert r.choices[0].text == "" and "refusal" in r.warnings[0]
    assert "I can't help with that." in r.warnings[0]
    r = lift(D, lowered("plain"), 200, {}, mutated("plain", _no_content))
    assert r.choices[0].text == "" and "has no content (finish_reason='length')" in r.warnings[0]


@pytest.mark.parametrize("key", ["reasoning", "reasoning_content"])
def test_reasoning_is_its_own_channel_never_the_answer(key: str) -> None:
    def think(reply: dict[str, Any]) -> None:
        _first(reply)["message"][key] = "France's capital is Paris."
        reply["usage"]["completion_tokens_details"] = {"reasoning_tokens": 3}

    r = lift(D, lowered("plain"), 200, {}, mutated("plain", think))
    assert r.choices[0].reasoning == "France's capital is Paris."
    assert r.choices[0].text == raw("plain")["choices"][0]["message"]["content"]
    assert r.usage.reasoning_tokens == 3


def test_tokens_that_also_spell_reasoning_keep_no_offsets() -> None:
    def think(reply: dict[str, Any]) -> None:
        _first(reply)["message"]["reasoning"] = "hmm"

    r = lift(D, lowered("logprobs_greedy"), 200, {}, mutated("logprobs_greedy", think))
    assert all(t.offset is UNSET for t in r.choices[0].tokens)
    assert "carry no offsets" in r.warnings[0]


def test_true_token_bytes_spell_a_split_character() -> None:
    """OpenAI's bytes are the token's own bytes: a character split over two tokens is rebuilt
    from them when the token texts alone do not spell the content."""

    def split(reply: dict[str, Any]) -> None:
        choice = _first(reply)
        choice["message"]["content"] = "é!"
        choice["logprobs"]["content"] = [
            {"token": "\\xc3", "logprob": -0.1, "bytes": [0xC3], "top_logprobs": []},
            {"token": "\\xa9", "logprob": -0.2, "bytes": [0xA9], "top_logprobs": []},
            {"token": "!", "logprob": -0.3, "bytes": [0x21], "top_logprobs": []},
        ]
        reply["usage"]["completion_tokens"] = 3
        reply["usage"]["total_tokens"] = reply["usage"]["prompt_tokens"] + 3

    request = chat(turn("user", "x"), sampling=greedy(8), scoring=Scoring(sampled_logprobs=True))
    r = lift(D, lower(D, request, MODEL), 200, {}, mutated("logprobs_greedy", split))
    assert [t.offset for t in r.choices[0].tokens] == [0, 0, 1]


def test_a_special_token_at_the_end_covers_no_text() -> None:
    def eos(reply: dict[str, Any]) -> None:
        alternatives = [
            {"token": "<eos>", "logprob": 0.0, "bytes": []},
            {"token": "<pad>", "logprob": -9999.0, "bytes": []},
            {"token": "x", "logprob": -9999.0, "bytes": [120]},
        ]
        entry = {"token": "<eos>", "logprob": 0.0, "bytes": [], "top_logprobs": alternatives}
        _first(reply)["logprobs"]["content"].append(entry)
        reply["usage"]["completion_tokens"] += 1
        reply["usage"]["total_tokens"] += 1

    r = lift(D, lowered("logprobs_greedy"), 200, {}, mutated("logprobs_greedy", eos))
    tokens = r.choices[0].tokens
    assert tokens[-1].text == "<eos>" and tokens[-1].offset == len(r.choices[0].text)
    assert tokens[-1].scored_rank == 0


def test_nan_in_the_body_is_a_contract_violation() -> None:
    body = reply_bytes(load_fixture("openai_chat", "logprobs_greedy"))
    value = str(raw("logprobs_greedy")["choices"][0]["logprobs"]["content"][0]["logprob"])
    with pytest.raises(ContractViolation, match="non-finite"):
        lift(D, lowered("logprobs_greedy"), 200, {}, body.replace(value.encode(), b"NaN", 1))


def sse(name: str) -> str:
    text: str = load_fixture("openai_chat", name)["reply_sse"]
    return text


def test_a_stream_without_done_is_truncated() -> None:
    body = sse("stream").replace("data: [DONE]", "").encode()
    with pytest.raises(ContractViolation, match=r"without 'data: \[DONE\]'"):
        lift(D, lowered("stream"), 200, {}, body)


def test_an_in_band_error_event_is_the_servers_error() -> None:
    events = sse("stream").split("\n\n")
    error = {"error": {"message": "engine died", "type": "InternalServerError", "code": 500}}
    body = "\n\n".join([*events[:2], f"data: {json.dumps(error)}", "data: [DONE]", ""]).encode()
    with pytest.raises(TransportError, match="engine died"):
        lift(D, lowered("stream"), 200, {}, body)
    error["error"]["code"] = 400
    body = f"data: {json.dumps(error)}\n\ndata: [DONE]\n\n".encode()
    with pytest.raises(ServerRejected, match="engine died"):
        lift(D, lowered("stream"), 200, {}, body)


def test_a_stream_missing_a_chunk_is_short_against_its_usage() -> None:
    kept = [e for e in sse("stream_logprobs").split("\n\n") if "mendatang" not in e]
    with pytest.raises(
        ContractViolation, match="7 sampled tokens but usage.completion_tokens is 8"
    ):
        lift(D, lowered("stream_logprobs"), 200, {}, "\n\n".join(kept).encode())


def test_a_tool_call_stream_without_its_first_fragment_is_refused() -> None:
    kept = [e for e in sse("stream_tool").split("\n\n") if '"name":"get_weather"' not in e]
    with pytest.raises(ContractViolation, match="starts without its id and name"):
        lift(D, lowered("stream_tool"), 200, {}, "\n\n".join(kept).encode())


# -- fuzz: a malformed reply raises a SievalError or lifts --------------------------------------

FUZZED = ["logprobs_sampled", "tool_required", "json_schema", "n2_temp1"]
FUZZ_PATHS = [(name, path) for name in FUZZED for path in paths(raw(name))[1:]]


def _lift_or_sieval_error(low: Lowered, body: bytes) -> None:
    try:
        response = lift(D, low, 200, {}, body)
    except SievalError:
        return
    assert len(response.choices) == low.request.sampling.n
    for c in response.choices:
        if isinstance(c.tokens, tuple) and c.tokens and c.tokens[0].offset is not UNSET:
            assert all(isinstance(t.logprob, float) and math.isfinite(t.logprob) for t in c.tokens)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FUZZ_PATHS), json_values)
def test_mutated_reply(case: tuple[str, tuple[Any, ...]], value: Any) -> None:
    name, path = case
    reply = copy.deepcopy(raw(name))
    set_at(reply, path, value)
    _lift_or_sieval_error(lowered(name), json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(body: bytes) -> None:
    _lift_or_sieval_error(lowered("logprobs_greedy"), body)
    _lift_or_sieval_error(lowered("stream_logprobs"), body)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["stream_logprobs", "stream_tool"]), st.data())
def test_cut_or_spliced_stream(name: str, data: st.DataObject) -> None:
    text = sse(name)
    cut = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(max_size=8))
    _lift_or_sieval_error(lowered(name), (text[:cut] + junk + text[cut:]).encode())
