"""google_genai lowered and lifted against replies recorded from a real Gemini-wire server (LiteLLM
1.108.7's proxy in front of vLLM 0.32.0), with google-genai 3.6.1's types as the oracle for the
request bodies and the replies, and the reference server's Google wire for what the proxy drops."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import FIXTURES, load_fixture, reply_bytes
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st
from mutation import json_values, paths, set_at
from pydantic import TypeAdapter

from sieval.audit.corpus import (
    CAPITAL_ONE_WORD,
    HERMES_CALL,
    PERSON_OPEN,
    PNG_1X1_RED,
    WEATHER,
    turn,
)
from sieval.dialects.google_genai import DIALECT as D
from sieval.dialects.table import lift, lower
from sieval.dialects.vocabulary import Lowered
from sieval.errors import ContractViolation, Refused, ServerRejected, SievalError, TransportError
from sieval.ir.request import (
    ChatInput,
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
from sieval.reference import get_model
from sieval.reference.wires import Context, Reply
from sieval.reference.wires.google import WIRE

VERSION = "litellm-1.108.7"
MODEL = "gemma-3-270m"
STORY = "Tell me a story about a dragon."
REPEAT = "Write the word cat ten times."
ANN = 'Return this JSON: {"name": "Ann", "adult": true}'
YES_NO = "Answer with one word: yes or no."


def greedy(max_tokens: int, **more: Any) -> Sampling:
    return Sampling(temperature=0.0, top_p=1.0, max_tokens=max_tokens, **more)


def chat(*messages: Message) -> ChatInput:
    return ChatInput(messages=messages)


def user(text: str) -> ChatInput:
    return chat(turn("user", text))


HISTORY = chat(
    turn("user", "What is the weather in Paris?"),
    turn("assistant", ToolCallPart(call_id="c1", name="get_weather", arguments={"city": "Paris"})),
    turn("tool", ToolResultPart(call_id="c1", result={"temperature_c": 18, "sky": "sunny"})),
)
FEW_SHOT_CALL = chat(
    turn("user", "Weather in Paris?"),
    turn("assistant", HERMES_CALL),
    turn("user", "Weather in Paris?"),
)
STREAM = Scheduling(stream=True)
TOP3 = Scoring(sampled_logprobs=True, sampled_top_k=3)

CASES: dict[str, Request] = {
    "plain": Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(8)),
    "system_instruction": Request(
        input=chat(turn("system", YES_NO), turn("user", "Is Paris in France?")), sampling=greedy(8)
    ),
    "system_instruction_two_parts": Request(
        input=chat(
            turn("system", YES_NO, "Always answer in French."), turn("user", "Is Paris in France?")
        ),
        sampling=greedy(8),
    ),
    "multi_turn": Request(
        input=chat(
            turn("user", "My name is Ann."),
            turn("assistant", "Hello Ann! How can I help you?"),
            turn("user", "What is my name?"),
        ),
        sampling=greedy(12),
    ),
    "sampling_stop": Request(
        input=user("Continue the list: 1, 2, 3, 4, 5,"),
        sampling=Sampling(temperature=0.7, top_p=0.5, max_tokens=30, stop=(",",)),
    ),
    "drop_fifth_stop": Request(
        input=user("Continue the list: 1, 2, 3, 4, 5,"),
        sampling=Sampling(
            temperature=0.7, top_p=0.5, max_tokens=30, stop=("x1", "x2", "x3", "x4", ",")
        ),
    ),
    "max_tokens": Request(input=user(STORY), sampling=greedy(3)),
    "json_schema": Request(
        input=user(ANN),
        sampling=greedy(40),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON_OPEN),
    ),
    "json_schema_whitespace_run": Request(
        input=user("Describe a person named Ann, aged 30, as JSON."),
        sampling=greedy(40),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON_OPEN),
    ),
    "drop_json_object": Request(
        input=user(ANN),
        sampling=greedy(30),
        structured_output=StructuredOutput(format="json_object"),
    ),
    "stream": Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(8), scheduling=STREAM),
    "stream_system_instruction": Request(
        input=chat(turn("system", YES_NO), turn("user", "Is Paris in France?")),
        sampling=greedy(8),
        scheduling=STREAM,
    ),
    "top_k_control": Request(input=user(STORY), sampling=greedy(12)),
    "drop_top_k": Request(
        input=user(STORY), sampling=Sampling(temperature=1.0, top_p=1.0, max_tokens=12, top_k=1)
    ),
    "drop_seed": Request(
        input=user(STORY), sampling=Sampling(temperature=1.0, top_p=1.0, max_tokens=12, seed=7)
    ),
    "drop_candidate_count": Request(
        input=user(STORY), sampling=Sampling(temperature=1.0, top_p=1.0, max_tokens=8, n=2)
    ),
    "drop_logprobs": Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(4), scoring=TOP3),
    "stream_drop_logprobs": Request(
        input=user(CAPITAL_ONE_WORD), sampling=greedy(4), scoring=TOP3, scheduling=STREAM
    ),
    "penalties_control": Request(input=user(REPEAT), sampling=greedy(16)),
    "drop_penalties": Request(
        input=user(REPEAT), sampling=greedy(16, presence_penalty=2.0, frequency_penalty=2.0)
    ),
    "drop_thinking_config": Request(
        input=user(CAPITAL_ONE_WORD),
        sampling=greedy(8),
        reasoning=Reasoning(budget_tokens=64, summary="auto"),
    ),
    "inline_image": Request(
        input=chat(
            turn(
                "user",
                "What colour is this image?",
                ImagePart(data=PNG_1X1_RED, media_type="image/png"),
            )
        ),
        sampling=greedy(8),
    ),
    "function_response_history": Request(input=HISTORY, sampling=greedy(20)),
    "tool_call_reply": Request(
        input=FEW_SHOT_CALL,
        sampling=greedy(40, stop=("</tool_call>",)),
        tools=Tools(functions=(WEATHER,), choice="auto"),
    ),
    "stream_tool_call_reply": Request(
        input=FEW_SHOT_CALL,
        sampling=greedy(40, stop=("</tool_call>",)),
        tools=Tools(functions=(WEATHER,), choice="auto"),
        scheduling=STREAM,
    ),
    "tool_forced_json_schema": Request(
        input=user("What is the weather in Paris?"),
        sampling=greedy(30),
        tools=Tools(functions=(WEATHER,), choice="required"),
    ),
    "error_temperature": Request(
        input=user(CAPITAL_ONE_WORD), sampling=Sampling(temperature=3.0, max_tokens=4)
    ),
    "error_context_overflow": Request(
        input=user("hello " * 4200), sampling=Sampling(temperature=0.0, max_tokens=1)
    ),
    "error_wrong_key": Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(4)),
    "error_no_key": Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(4)),
}
OTHER_MODEL = {
    "error_unknown_model": "no-such-model",
    "stream_error_unknown_model": "no-such-model",
}
CASES["error_unknown_model"] = CASES["error_wrong_key"]
CASES["stream_error_unknown_model"] = Request(
    input=user(CAPITAL_ONE_WORD), sampling=greedy(4), scheduling=STREAM
)


def fixture(name: str) -> dict[str, Any]:
    return load_fixture("google_genai", name, VERSION)


def lowered(name: str) -> Lowered:
    return lower(D, CASES[name], OTHER_MODEL.get(name, MODEL))


def run(name: str) -> Response:
    recorded = fixture(name)
    low = lowered(name)
    assert low.body == recorded["request"], "lowering drifted from the recorded body"
    assert low.path == recorded["route"]
    return lift(D, low, recorded["status"], {}, reply_bytes(recorded))


# -- the recorded requests are exactly what the dialect sends ---------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_gives_the_recorded_body_and_route(name: str) -> None:
    recorded = fixture(name)
    low = lowered(name)
    assert low.body == recorded["request"]
    assert low.path == recorded["route"]
    assert low.stream == ("streamGenerateContent" in recorded["route"])


# -- what the proxy forwards, lifted ----------------------------------------------------------


def test_plain_reply() -> None:
    r = run("plain")
    assert [c.text for c in r.choices] == ["What is the capital of France? Answer"]
    assert r.choices[0].finish_reason == "MAX_TOKENS"  # the server's word, not normalised
    assert (r.usage.input_tokens, r.usage.output_tokens) == (21, 8)
    assert r.usage.reasoning_tokens.__class__.__name__ == "UnsetType"  # not reported != 0
    assert r.model.__class__.__name__ == "UnsetType"  # the proxy sends no modelVersion


def test_stream_folds_into_the_non_stream_response() -> None:
    plain, streamed = run("plain"), run("stream")
    assert streamed.choices == plain.choices
    assert streamed.usage == plain.usage
    assert "[DONE]" not in fixture("stream")["reply_sse"]  # Google's stream ends with the body


def test_system_instruction_and_turns() -> None:
    low = lowered("system_instruction_two_parts")
    assert low.body["systemInstruction"] == {
        "parts": [{"text": YES_NO}, {"text": "Always answer in French."}]
    }
    ledger = {d.leaf: d.detail for d in low.ledger}
    assert ledger["input.chat.messages[0]"] == "systemInstruction.parts"
    assert ledger["input.chat.messages[0].content[1].text"] == "systemInstruction.parts[1]"
    assert ledger["input.chat.messages[1]"] == "contents[0]"
    # the proxy forwards only the first part: same prompt count as the one-part instruction
    one, two = run("system_instruction"), run("system_instruction_two_parts")
    assert one.usage.input_tokens == two.usage.input_tokens == 24
    roles = [c["role"] for c in lowered("multi_turn").body["contents"]]
    assert roles == ["user", "model", "user"]
    assert run("stream_system_instruction").choices == one.choices


def test_stop_sequences_and_the_proxys_cap_of_four() -> None:
    stopped = run("sampling_stop").choices[0]
    assert stopped.text == "Continue the list: 1" and stopped.finish_reason == "STOP"
    fifth = run("drop_fifth_stop").choices[0]
    assert lowered("drop_fifth_stop").body["generationConfig"]["stopSequences"][4] == ","
    assert fifth.text.startswith("Continue the list: 1, 2,")  # the fifth stop never applied


def test_json_schema_is_parsed_and_a_run_of_whitespace_is_refused() -> None:
    r = run("json_schema")
    assert r.choices[0].structured_output.value == {"name": "Ann", "adult": True}
    with pytest.raises(ContractViolation, match=r"not valid JSON \(cut at max_tokens\)"):
        run("json_schema_whitespace_run")


def test_inline_image_is_sent_in_googles_spelling() -> None:
    part = lowered("inline_image").body["contents"][0]["parts"][1]
    assert part == {"inlineData": {"mimeType": "image/png", "data": PNG_1X1_RED}}
    ledger = {d.leaf: d.detail for d in lowered("inline_image").ledger}
    assert ledger["input.chat.messages[0].content[1].image.data"] == (
        "contents[0].parts[1].inlineData.data"
    )
    # the proxy dropped the camelCase image: 15 prompt tokens, as for the text alone
    assert run("inline_image").usage.input_tokens == 15


def test_function_call_and_response_history() -> None:
    body = lowered("function_response_history").body
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
    }
    assert body["contents"][2]["role"] == "user"  # results go back in a user turn
    assert run("function_response_history").choices[0].text


def test_a_real_function_call_reply_becomes_a_tool_call() -> None:
    for name in ("tool_call_reply", "stream_tool_call_reply"):
        choice = run(name).choices[0]
        assert choice.tool_calls == (
            ToolCall(call_id="get_weather-0", name="get_weather", arguments={"city": "Paris"}),
        )
        assert choice.text == "" and choice.finish_reason == "STOP"
    body = lowered("tool_call_reply").body
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Get the current weather for a city.",
                    "parametersJsonSchema": WEATHER.parameters,
                }
            ]
        }
    ]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


def test_forced_call_markup_that_vllm_could_not_parse_stays_text() -> None:
    choice = run("tool_forced_json_schema").choices[0]
    assert lowered("tool_forced_json_schema").body["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY"
    }
    assert choice.text.startswith("<tool_call>") and choice.finish_reason == "MAX_TOKENS"
    assert choice.tool_calls.__class__.__name__ == "UnsetType"


# -- what the proxy drops: sent (Google honours it), and caught or shown ----------------------


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("drop_logprobs", "logprobsResult is missing although responseLogprobs was sent"),
        ("stream_drop_logprobs", "logprobsResult is missing although responseLogprobs was sent"),
        ("drop_candidate_count", r"choice indices are \[0\]; expected exactly 0..1 for n=2"),
        ("drop_json_object", "structured output is not valid JSON"),
    ],
)
def test_a_dropped_field_whose_channel_is_missing_is_a_contract_violation(
    name: str, needle: str
) -> None:
    with pytest.raises(ContractViolation, match=needle):
        run(name)


def test_dropped_fields_that_no_reply_can_show_are_still_sent() -> None:
    config = {n: lowered(n).body["generationConfig"] for n in CASES}
    assert config["drop_top_k"]["topK"] == 1
    assert config["drop_seed"]["seed"] == 7
    assert config["drop_penalties"]["presencePenalty"] == 2.0
    assert config["drop_thinking_config"]["thinkingConfig"] == {
        "thinkingBudget": 64,
        "includeThoughts": True,
    }
    # ... and the replies show the proxy ignored them
    assert run("drop_top_k").choices[0].text != run("top_k_control").choices[0].text
    assert fixture("drop_seed")["reply"] != fixture("drop_seed_repeat")["reply"]
    assert run("drop_penalties") == run("penalties_control")
    thinking = run("drop_thinking_config")
    assert thinking.choices == run("plain").choices  # answered as if thinkingConfig were unset
    assert thinking.choices[0].reasoning.__class__.__name__ == "UnsetType"  # best effort


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status", "needle", "kind"),
    [
        (
            "error_unknown_model",
            400,
            "Invalid model name passed in model=no-such-model",
            "unknown_model",
        ),
        ("stream_error_unknown_model", 400, "Invalid model name", "unknown_model"),
        # LiteLLM without a database answers a wrong key so (its key lookup needs one)
        ("error_wrong_key", 400, "No connected db.", "key_refused"),
        ("error_temperature", 400, "temperature must be in [0, 2], got 3.0", None),
        ("error_context_overflow", 400, "maximum context length is 4096", "context_overflow"),
    ],
)
def test_the_proxys_openai_shaped_errors_carry_its_words(
    name: str, status: int, needle: str, kind: str | None
) -> None:
    with pytest.raises(ServerRejected) as info:
        run(name)
    assert info.value.status == status and needle in info.value.server_message
    assert info.value.path == kind


def test_a_plain_text_500_is_a_transport_error() -> None:
    assert fixture("error_no_key")["reply"] == "Internal Server Error"
    with pytest.raises(TransportError, match="HTTP 500"):
        run("error_no_key")


def test_googles_own_envelope_is_read() -> None:
    recorded = fixture("count_tokens_error")  # the proxy's only Google-shaped error
    err = D.error(D.id, recorded["status"], reply_bytes(recorded))
    assert isinstance(err, ServerRejected)
    assert err.server_message == "Invalid Google countTokens request body"


def test_logprobs_not_enabled_says_what_to_do() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "Logprobs is not enabled for models/gemini-2.5-flash",
            "status": "INVALID_ARGUMENT",
        }
    }
    with pytest.raises(ServerRejected) as info:
        lift(D, lowered("drop_logprobs"), 400, {}, json.dumps(body).encode())
    assert info.value.path == "logprobs_disabled"
    assert "drop scoring.sampled_logprobs" in str(info.value)
    assert info.value.server_message == "Logprobs is not enabled for models/gemini-2.5-flash"


# -- decided before I/O -----------------------------------------------------------------------


def ledger_of(request: Request) -> dict[str, tuple[str, str]]:
    return {d.leaf: (d.outcome, d.detail) for d in lower(D, request, MODEL).ledger}


def test_every_field_goes_where_googles_wire_has_it() -> None:
    request = Request(
        input=chat(turn("developer", "Be brief."), turn("user", "hi")),
        sampling=Sampling(
            temperature=0.5,
            top_p=0.9,
            top_k=40,
            max_tokens=16,
            stop=("\n",),
            seed=3,
            n=2,
            frequency_penalty=0.1,
            presence_penalty=0.2,
        ),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=5, token_ids=True),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON_OPEN, name="person"),
        reasoning=Reasoning(effort="low", summary="auto"),
        tools=Tools(functions=(WEATHER,), choice="required", parallel=True),
    )
    low = lower(D, request, MODEL)
    assert low.body["generationConfig"] == {
        "temperature": 0.5,
        "topP": 0.9,
        "topK": 40,
        "maxOutputTokens": 16,
        "stopSequences": ["\n"],
        "seed": 3,
        "candidateCount": 2,
        "frequencyPenalty": 0.1,
        "presencePenalty": 0.2,
        "responseLogprobs": True,
        "logprobs": 5,
        "responseMimeType": "application/json",
        "responseJsonSchema": PERSON_OPEN,
        "thinkingConfig": {"thinkingLevel": "LOW", "includeThoughts": True},
    }
    assert low.body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert low.body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    ledger = {d.leaf: (d.outcome, d.detail) for d in low.ledger}
    assert ledger["scoring.token_ids"] == ("consumed", "generationConfig.responseLogprobs")
    assert ledger["structured_output.name"][0] == "noop"
    assert ledger["tools.parallel"][0] == "noop"
    assert ledger["tools.functions[0].description"] == (
        "consumed",
        "tools[0].functionDeclarations[0].description",
    )
    assert low.path == "/v1beta/models/gemma-3-270m:generateContent"
    assert "model" not in low.body  # the model is in the path


def test_streaming_is_carried_by_the_url() -> None:
    low = lower(D, CASES["stream"], "models/odd id")
    assert low.path == "/v1beta/models/models%2Fodd%20id:streamGenerateContent?alt=sse"
    assert "stream" not in low.body
    assert {d.leaf: d.detail for d in low.ledger}["scheduling.stream"] == (
        "/v1beta/models/{model}:streamGenerateContent?alt=sse"
    )


@pytest.mark.parametrize(
    ("reasoning", "config"),
    [
        (Reasoning(effort="none"), {"thinkingBudget": 0}),
        (Reasoning(effort="high"), {"thinkingLevel": "HIGH"}),
        (Reasoning(budget_tokens=512), {"thinkingBudget": 512}),
    ],
)
def test_reasoning_controls(reasoning: Reasoning, config: dict[str, Any]) -> None:
    low = lower(D, Request(input=user("x"), reasoning=reasoning), MODEL)
    assert low.body["generationConfig"]["thinkingConfig"] == config


def test_tool_results_name_their_function_and_mark_errors() -> None:
    request = Request(
        input=chat(
            turn("user", "go"),
            turn(
                "assistant",
                ToolCallPart(call_id="a", name="f", arguments={}),
                ToolCallPart(call_id="b", name="g", arguments={"x": 1}),
            ),
            turn(
                "tool",
                ToolResultPart(call_id="b", result="boom", is_error=True),
                ToolResultPart(call_id="a", result=[1, 2], is_error=False),
            ),
        )
    )
    low = lower(D, request, MODEL)
    assert low.body["contents"][2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "g", "response": {"error": "boom"}}},
            {"functionResponse": {"name": "f", "response": {"output": [1, 2]}}},
        ],
    }
    ledger = {d.leaf: (d.outcome, d.detail) for d in low.ledger}
    assert ledger["input.chat.messages[2].content[0].tool_result.is_error"] == (
        "consumed",
        "contents[2].parts[0].functionResponse.response.error",
    )
    assert ledger["input.chat.messages[2].content[1].tool_result.is_error"][0] == "noop"


def test_the_results_of_one_turn_sent_apart_go_back_in_one_content() -> None:
    # Gemini refuses parallel calls whose function responses are in separate Contents
    request = Request(
        input=chat(
            turn("user", "go"),
            turn(
                "assistant",
                ToolCallPart(call_id="a", name="f", arguments={}),
                ToolCallPart(call_id="b", name="g", arguments={}),
            ),
            turn("tool", ToolResultPart(call_id="a", result=1)),
            turn("tool", ToolResultPart(call_id="b", result=2)),
            turn("user", "and now?"),
            turn("tool", ToolResultPart(call_id="a", result=3)),
        )
    )
    low = lower(D, request, MODEL)
    assert [c["role"] for c in low.body["contents"]] == ["user", "model", "user", "user", "user"]
    assert low.body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "f", "response": {"output": 1}}},
        {"functionResponse": {"name": "g", "response": {"output": 2}}},
    ]
    ledger = {d.leaf: (d.outcome, d.detail) for d in low.ledger}
    assert ledger["input.chat.messages[3].content[0].tool_result"][1] == "contents[2].parts[1]"
    assert ledger["input.chat.messages[5].content[0].tool_result"][1] == "contents[4].parts[0]"


def test_image_detail_auto_is_a_noop() -> None:
    request = Request(
        input=chat(turn("user", ImagePart(data="AAAA", media_type="image/png", detail="auto")))
    )
    assert ledger_of(request)["input.chat.messages[0].content[0].image.detail"][0] == "noop"


REFUSED = [
    (Request.completion("x"), "input.completion.text", "chat"),
    (
        Request(input=user("x"), scoring=Scoring(input_logprobs=True)),
        "scoring.input_logprobs",
        "scores no input tokens",
    ),
    (
        Request(input=user("x"), scoring=Scoring(sampled_logprobs=True, sampled_top_k=21)),
        "scoring.sampled_top_k",
        "at most 20",
    ),
    (
        Request(input=user("x"), scoring=Scoring(sampled_logprobs=True, candidate_token_ids=(1,))),
        "scoring.candidate_token_ids",
        "sglang_native",
    ),
    (Request(input=user("x"), sampling=Sampling(top_k=0)), "sampling.top_k", "positive"),
    (Request(input=user("x"), sampling=Sampling(max_tokens=0)), "sampling.max_tokens", "ask for 1"),
    (Request(input=user("x"), sampling=Sampling(stop=tuple("abcdef"))), "sampling.stop", "5"),
    (
        Request(input=user("x"), options={"safetySettings": []}),
        "options.safetySettings",
        "only the IR's fields",
    ),
    (
        Request(
            input=user("x"),
            structured_output=StructuredOutput(
                format="json_schema", schema=PERSON_OPEN, strict=True
            ),
        ),
        "structured_output.strict",
        "strictness",
    ),
    (
        Request(input=user("x"), reasoning=Reasoning(summary="detailed")),
        "reasoning.summary",
        "summary=auto",
    ),
    (
        Request(input=user("x"), tools=Tools(functions=(WEATHER,), parallel=False)),
        "tools.parallel",
        "parallel",
    ),
    (Request(input=user("x"), tools=Tools(choice="auto")), "tools.choice", "needs functions"),
    (
        Request(input=chat(turn("user", ImagePart(url="https://x.test/a.png")))),
        "input.chat.messages[0].content[0].image",
        "inlineData",
    ),
    (
        Request(input=chat(turn("user", ImagePart(data="AAAA")))),
        "input.chat.messages[0].content[0].image",
        "mimeType",
    ),
    (
        Request(
            input=chat(turn("user", ImagePart(data="AA", media_type="image/png", detail="low")))
        ),
        "input.chat.messages[0].content[0].image.detail",
        "detail",
    ),
    (
        Request(
            input=chat(Message(role="user", content=(TextPart(text="x"),), name="ann")),
        ),
        "input.chat.messages.name",
        "author name",
    ),
    (
        Request(input=chat(turn("user", "a"), turn("system", "late"))),
        "input.chat.messages[1]",
        "systemInstruction",
    ),
    (
        Request(input=chat(turn("tool", ToolResultPart(call_id="nope", result=1)))),
        "input.chat.messages[0].content[0].tool_result",
        "call_id 'nope'",
    ),
    (
        Request(input=chat(turn("user", ToolCallPart(call_id="c", name="f", arguments={})))),
        "input.chat.messages[0].content[0].tool_call",
        "model turn",
    ),
]


@pytest.mark.parametrize(("request_", "leaf", "why"), REFUSED, ids=[r[1] for r in REFUSED])
def test_what_googles_wire_cannot_express_is_refused(
    request_: Request, leaf: str, why: str
) -> None:
    with pytest.raises(Refused, match=why) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf and info.value.dialect == "google_genai"


# -- the SDK as the oracle of request bodies --------------------------------------------------

_BODY_KEYS = {"contents", "systemInstruction", "generationConfig", "tools", "toolConfig"}
_CONTENTS = TypeAdapter(list[types.Content])


def sdk_validates(body: dict[str, Any]) -> None:
    """Each part of the body parses as google-genai's own type (camelCase aliases, unknown fields
    forbidden), and the config parts together as a ``GenerateContentConfig``."""
    assert set(body) <= _BODY_KEYS, set(body) - _BODY_KEYS
    _CONTENTS.validate_json(json.dumps(body["contents"]))
    config = dict(body.get("generationConfig", {}))
    types.GenerationConfig.model_validate_json(json.dumps(config))
    for key in ("systemInstruction", "tools", "toolConfig"):
        if key in body:
            config[key] = body[key]
    types.GenerateContentConfig.model_validate_json(json.dumps(config))


TABLE_CASES = [
    Request(
        input=chat(
            turn("system", "s"), turn("user", "hi", ImagePart(data="AAAA", media_type="a/b"))
        ),
        sampling=Sampling(temperature=1.0, top_k=3, n=2, seed=1, stop=("a",)),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=20, token_ids=True),
        structured_output=StructuredOutput(format="json_object"),
        reasoning=Reasoning(effort="minimal", summary="auto"),
    ),
    Request(input=HISTORY, tools=Tools(functions=(WEATHER,), choice="none")),
    Request(input=user("x"), reasoning=Reasoning(effort="none")),
]


@pytest.mark.parametrize("request_", [*CASES.values(), *TABLE_CASES])
def test_every_body_validates_against_the_sdks_request_types(request_: Request) -> None:
    sdk_validates(lower(D, request_, MODEL).body)


def test_the_sdk_oracle_rejects_a_misspelt_field() -> None:
    body = lowered("plain").body
    bad = {**body, "generationConfig": {**body["generationConfig"], "maxTokens": 8}}
    with pytest.raises(ValueError, match="maxTokens"):
        sdk_validates(bad)


def test_the_recorded_sdk_bodies_are_what_the_dialect_sends() -> None:
    """google-genai 3.6.1's own body for the same call equals the dialect's, but for the role the
    SDK adds to systemInstruction (optional on the wire)."""
    for sdk, case in (("sdk_request_plain", "plain"), ("sdk_request_json_schema", "json_schema")):
        sent = fixture(sdk)["request"]
        ours = lowered(case).body
        assert sent["contents"] == ours["contents"]
        assert set(sent["generationConfig"]) == set(ours["generationConfig"])
    sent = fixture("sdk_request_stream_system_instruction")["request"]
    ours = lowered("stream_system_instruction").body
    assert {**ours["systemInstruction"], "role": "user"} == sent["systemInstruction"]


# -- the SDK as the oracle of replies ---------------------------------------------------------


def _recorded_bodies() -> list[tuple[str, Any]]:
    out = []
    for name in sorted(p.stem for p in (FIXTURES / "google_genai" / VERSION).glob("*.json")):
        recorded = fixture(name)
        if recorded.get("status") != 200 or "generatecontent" not in recorded["route"].lower():
            continue
        if "reply_sse" in recorded:
            for i, block in enumerate(recorded["reply_sse"].split("\n\n")):
                if block.startswith("data: "):
                    out.append((f"{name}[{i}]", json.loads(block[6:])))
        else:
            out.append((name, recorded["reply"]))
    return out


RECORDED = _recorded_bodies()


def test_replies_were_recorded() -> None:
    assert len(RECORDED) > 40


@pytest.mark.parametrize(("name", "body"), RECORDED, ids=[n for n, _ in RECORDED])
def test_every_recorded_reply_parses_as_the_sdks_response(name: str, body: Any) -> None:
    parsed = types.GenerateContentResponse.model_validate(body)
    assert parsed.candidates, name


# -- replies that must not be believed (mutations of real replies) ----------------------------


def mutated(name: str, change: Callable[[dict[str, Any]], None]) -> bytes:
    reply = copy.deepcopy(fixture(name)["reply"])
    change(reply)
    return json.dumps(reply).encode()


def _candidate(reply: dict[str, Any]) -> dict[str, Any]:
    return reply["candidates"][0]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda r: r["candidates"].append(copy.deepcopy(_candidate(r))), "choice indices"),
        (lambda r: _candidate(r).pop("finishReason"), "has no finishReason"),
        (lambda r: r.update(candidates=[]), "no candidates and no promptFeedback"),
        (lambda r: r.pop("candidates"), "no candidates and no promptFeedback"),
        (lambda r: _candidate(r).update(index=1), r"indices are \[1\]"),
        (lambda r: _candidate(r)["content"]["parts"].append({"text": 3}), "expected shape"),
    ],
)
def test_inconsistent_replies_are_contract_violations(change: Any, needle: str) -> None:
    with pytest.raises(ContractViolation, match=needle):
        lift(D, lowered("plain"), 200, {}, mutated("plain", change))


def test_an_absent_index_is_candidate_zero() -> None:
    """proto3 JSON omits a zero int."""
    body = mutated("plain", lambda r: _candidate(r).pop("index"))
    assert lift(D, lowered("plain"), 200, {}, body).choices[0].index == 0


def test_a_blocked_prompt_is_a_refusal_the_record_shows() -> None:
    def block(reply: dict[str, Any]) -> None:
        reply["candidates"] = []
        reply["promptFeedback"] = {"blockReason": "SAFETY", "blockReasonMessage": "unsafe"}

    with pytest.raises(ServerRejected) as info:
        lift(D, lowered("plain"), 200, {}, mutated("plain", block))
    assert info.value.path == "prompt_blocked" and info.value.status == 200
    assert "blockReason SAFETY: unsafe" in str(info.value)


def test_a_withheld_candidate_is_visible_not_an_empty_answer() -> None:
    def withhold(reply: dict[str, Any]) -> None:
        _candidate(reply).pop("content")
        _candidate(reply)["finishReason"] = "SAFETY"

    with pytest.raises(ServerRejected, match="finished with SAFETY") as info:
        lift(D, lowered("plain"), 200, {}, mutated("plain", withhold))
    assert info.value.path == "candidate_withheld"

    def recite(reply: dict[str, Any]) -> None:
        _candidate(reply)["finishReason"] = "RECITATION"

    r = lift(D, lowered("plain"), 200, {}, mutated("plain", recite))
    assert r.choices[0].finish_reason == "RECITATION" and r.choices[0].text
    assert "ended with RECITATION" in r.warnings[0]


def test_thought_parts_are_reasoning_never_the_answer() -> None:
    def think(reply: dict[str, Any]) -> None:
        _candidate(reply)["content"]["parts"].insert(0, {"text": "Let me think.", "thought": True})
        reply["usageMetadata"].update(thoughtsTokenCount=4, cachedContentTokenCount=0)

    r = lift(D, lowered("plain"), 200, {}, mutated("plain", think))
    assert r.choices[0].text == "What is the capital of France? Answer"
    assert r.choices[0].reasoning == "Let me think."
    assert r.usage.reasoning_tokens == 4 and r.usage.output_tokens == 12  # 8 + 4 thoughts
    assert r.usage.cached_tokens == 0  # reported as 0, unlike absent
    assert r.usage.reported_total_tokens == 29  # Google's total here leaves the thoughts out


def test_max_tokens_before_any_answer_is_a_warning() -> None:
    def empty(reply: dict[str, Any]) -> None:
        _candidate(reply)["content"]["parts"] = [{"text": "hmm", "thought": True}]

    r = lift(D, lowered("plain"), 200, {}, mutated("plain", empty))
    assert r.choices[0].text == "" and "before any answer text" in r.warnings[0]


def _stream_text() -> str:
    return str(fixture("stream")["reply_sse"])


@pytest.mark.parametrize(
    ("body", "error", "needle"),
    [
        (_stream_text().rsplit("data: ", 1)[0], ContractViolation, "without a finishReason"),
        ("", ContractViolation, "no events"),
        (
            _stream_text().rsplit("data: ", 1)[0]
            + 'data: {"error": {"code": 500, "message": "backend died", "status": "INTERNAL"}}\n\n',
            TransportError,
            "backend died",
        ),
        (
            'data: {"error": {"message": "bad", "type": "invalid_request_error", "code": "400"}}',
            ServerRejected,
            "bad",
        ),
        (_stream_text() + "data: {not json\n\n", ContractViolation, "not valid JSON"),
    ],
)
def test_a_stream_cut_short_or_failing_in_band_is_not_believed(
    body: str, error: type[SievalError], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        lift(D, lowered("stream"), 200, {}, body.encode())


# -- logprobs: the full wire, from the reference server's Google route ------------------------

_CTX = Context(served_model=MODEL, model=get_model())
_ROUTES = {r.path: r for r in WIRE.routes}


def reference(low: Lowered) -> Reply:
    """What the reference server's Google route answers (its renderer, no socket)."""
    key = low.path.replace(MODEL, "{model}").split("?")[0]
    return _ROUTES[key].render(copy.deepcopy(low.body), _CTX)


LOGPROBS = lower(D, Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(6), scoring=TOP3), MODEL)
LOGPROBS_REPLY = reference(LOGPROBS).body


def lift_logprobs(change: Callable[[dict[str, Any]], None] | None = None, low=LOGPROBS) -> Response:
    reply = copy.deepcopy(LOGPROBS_REPLY)
    if change is not None:
        change(reply)
    return lift(D, low, 200, {}, json.dumps(reply).encode())


def test_logprobs_become_sampled_tokens_with_exact_top_k() -> None:
    r = lift_logprobs()
    choice = r.choices[0]
    result = LOGPROBS_REPLY["candidates"][0]["logprobsResult"]
    assert [t.text for t in choice.tokens] == [c["token"] for c in result["chosenCandidates"]]
    assert "".join(t.text for t in choice.tokens) == choice.text
    assert choice.tokens[0].offset == 0
    assert len(choice.tokens) == r.usage.output_tokens
    for t, step in zip(choice.tokens, result["topCandidates"], strict=True):
        assert [e.token_id for e in t.top] == [c["tokenId"] for c in step["candidates"]]
        assert [e.logprob for e in t.top] == sorted((e.logprob for e in t.top), reverse=True)
        assert t.scored_rank == next(
            (i for i, e in enumerate(t.top) if e.token_id == t.token_id), -1
        )


def test_the_chosen_token_may_be_absent_from_the_top_list() -> None:
    def replace_best(reply: dict[str, Any]) -> None:
        # three others at least as likely as the chosen token (else the list is not the top-3)
        step = reply["candidates"][0]["logprobsResult"]["topCandidates"][0]["candidates"]
        own = step[0]["logProbability"]
        step[:] = [
            {"token": t, "tokenId": 9 + i, "logProbability": own + d}
            for i, (t, d) in enumerate([("xxx", 0.0), ("yyy", 0.2), ("zzz", 0.5)])
        ]  # and out of order: the reader sorts

    token = lift_logprobs(replace_best).choices[0].tokens[0]
    assert token.scored_rank == -1 and token.top[0].token == "zzz"


def _result(reply: dict[str, Any]) -> dict[str, Any]:
    return reply["candidates"][0]["logprobsResult"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda r: _result(r)["topCandidates"][1]["candidates"].pop(), "lists 2 alternatives"),
        (lambda r: _result(r)["chosenCandidates"].pop(), "counted differently"),
        (lambda r: _result(r)["topCandidates"].pop(), "counted differently"),
        (
            lambda r: r["usageMetadata"].update(candidatesTokenCount=99, totalTokenCount=999),
            "counted differently",
        ),
        (lambda r: r["candidates"][0].update(tokenCount=1), "counted differently"),
        (lambda r: _result(r).update(logProbabilitySum=-50.0), "logProbabilitySum"),
        (lambda r: _result(r)["chosenCandidates"][0].pop("logProbability"), "no logProbability"),
        (lambda r: _result(r)["chosenCandidates"][2].pop("token"), "has no token"),
        (lambda r: r["candidates"][0].pop("logprobsResult"), "logprobsResult is missing"),
    ],
)
def test_short_or_inconsistent_logprobs_are_refused(change: Any, needle: str) -> None:
    with pytest.raises(ContractViolation, match=needle):
        lift_logprobs(change)


def test_a_nan_logprob_is_refused() -> None:
    reply = copy.deepcopy(LOGPROBS_REPLY)
    _result(reply).pop("logProbabilitySum")
    text = json.dumps(reply)
    first = str(_result(reply)["chosenCandidates"][0]["logProbability"])
    with pytest.raises(ContractViolation, match="finite"):
        lift(D, LOGPROBS, 200, {}, text.replace(first, "NaN", 1).encode())


def test_token_ids_ride_on_the_chosen_candidates() -> None:
    low = lower(
        D,
        Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(6), scoring=Scoring(token_ids=True)),
        MODEL,
    )
    reply = reference(low).body
    ids = lift(D, low, 200, {}, json.dumps(reply).encode()).choices[0].token_ids
    assert ids == tuple(c["tokenId"] for c in _result(reply)["chosenCandidates"])
    _result(reply)["chosenCandidates"][1].pop("tokenId")
    with pytest.raises(ContractViolation, match="no tokenId at steps"):
        lift(D, low, 200, {}, json.dumps(reply).encode())


def test_a_streamed_logprob_reply_folds_into_the_same_tokens() -> None:
    streamed = lower(
        D,
        Request(input=user(CAPITAL_ONE_WORD), sampling=greedy(6), scoring=TOP3, scheduling=STREAM),
        MODEL,
    )
    events = reference(streamed).events
    assert events is not None and len(events) > 1
    body = "".join(f"data: {json.dumps(data)}\n\n" for _, data in events)
    a, b = lift_logprobs(), lift(D, streamed, 200, {}, body.encode())
    assert a.choices == b.choices and a.usage == b.usage


def test_n2_candidates_keep_their_own_tokens() -> None:
    low = lower(
        D,
        Request(
            input=user(STORY),
            sampling=Sampling(temperature=1.0, max_tokens=6, n=2, seed=4),
            scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
        ),
        MODEL,
    )
    r = lift(D, low, 200, {}, json.dumps(reference(low).body).encode())
    assert [c.index for c in r.choices] == [0, 1]
    assert sum(len(c.tokens) for c in r.choices) == r.usage.output_tokens


# -- fuzz: a malformed reply raises a sieval error or lifts; nothing else ---------------------


def _lift_or_sieval_error(low: Lowered, body: bytes) -> None:
    try:
        response = lift(D, low, 200, {}, body)
    except SievalError:
        return
    assert len(response.choices) == low.request.sampling.n


LOGPROB_PATHS = paths(LOGPROBS_REPLY)[1:]
STREAM_LOWERED = lowered("stream")
TOOL_REPLY = fixture("tool_call_reply")["reply"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LOGPROB_PATHS), json_values)
def test_fuzz_mutated_logprob_reply(path: tuple[Any, ...], value: Any) -> None:
    reply = copy.deepcopy(LOGPROBS_REPLY)
    set_at(reply, path, value)
    _lift_or_sieval_error(LOGPROBS, json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(paths(TOOL_REPLY)[1:]), json_values)
def test_fuzz_mutated_function_call_reply(path: tuple[Any, ...], value: Any) -> None:
    reply = copy.deepcopy(TOOL_REPLY)
    set_at(reply, path, value)
    _lift_or_sieval_error(lowered("tool_call_reply"), json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_arbitrary_bytes(body: bytes) -> None:
    _lift_or_sieval_error(LOGPROBS, body)
    _lift_or_sieval_error(STREAM_LOWERED, body)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(_stream_text())), st.text(max_size=8))
def test_fuzz_cut_or_spliced_stream(cut: int, junk: str) -> None:
    text = _stream_text()
    _lift_or_sieval_error(STREAM_LOWERED, (text[:cut] + junk + text[cut:]).encode())
