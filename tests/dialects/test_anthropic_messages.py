"""anthropic_messages lowered and lifted against replies recorded from vLLM 0.32.0's /v1/messages.

Every recorded request body is what the dialect lowers from the IR request of the same name; the
recorded replies lift, and mutations of them prove each check. The official anthropic SDK is the
oracle for the shapes: its request TypedDicts validate every body lowered here, its response
types parse every recorded reply and stream event.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec
import pydantic
import pytest
from anthropic.types import (
    Message as SdkMessage,
)
from anthropic.types import (
    MessageCountTokensParams,
    MessageTokensCount,
    RawMessageStreamEvent,
)
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from anthropic.types.shared.error_response import ErrorResponse
from conftest import load_fixture, reply_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from mutation import json_values, paths, set_at

from sieval.audit import corpus
from sieval.audit.corpus import PERSON, PNG_1X1_RED, TOOL_PROMPT, WEATHER, chat, turn
from sieval.dialects.anthropic_messages import DIALECT as D
from sieval.dialects.table import lift, lower
from sieval.dialects.vocabulary import Lowered
from sieval.dialects.wire.sse import parse
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
from sieval.ir.response import Response

MODEL = "gemma-3-270m"
FOLDER = "anthropic_messages"
CAPITAL = turn("user", corpus.CAPITAL)
GREEDY_8 = Sampling(temperature=0.0, max_tokens=8)

CASES: dict[str, Request] = {
    "plain": chat(CAPITAL, sampling=GREEDY_8),
    "system_user": chat(turn("system", "Answer in one word."), CAPITAL, sampling=GREEDY_8),
    "system_two_blocks": chat(
        turn("system", "Answer in one word.", "Answer in French."), CAPITAL, sampling=GREEDY_8
    ),
    "multi_turn": chat(
        turn("user", "My name is Ann."),
        turn("assistant", "Hello Ann."),
        turn("user", "What is my name?"),
        sampling=GREEDY_8,
    ),
    "sampling": chat(
        turn("user", "Tell me a story about a dragon."),
        sampling=Sampling(temperature=0.7, top_p=0.9, top_k=40, max_tokens=12),
    ),
    "stop_sequence": chat(
        turn("user", "Continue the list: 1, 2, 3, 4, 5,"),
        sampling=Sampling(temperature=0.0, max_tokens=30, stop=("3",)),
    ),
    "max_tokens": chat(
        turn("user", "Tell me a story about a dragon."),
        sampling=Sampling(temperature=0.0, max_tokens=3),
    ),
    "json_schema": chat(
        turn("user", 'Return this JSON: {"name": "Ann", "adult": true}'),
        sampling=Sampling(temperature=0.0, max_tokens=40),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON),
    ),
    "json_schema_cut": chat(
        turn("user", "Give a person as JSON."),
        sampling=Sampling(temperature=0.0, max_tokens=40),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON),
    ),
    "effort_low": chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(effort="low")),
    "thinking_disabled": chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(effort="none")),
    "thinking_enabled": chat(
        CAPITAL,
        sampling=Sampling(temperature=0.0, max_tokens=1100),
        reasoning=Reasoning(budget_tokens=1024),
    ),
    "error_thinking_budget_not_below_max": chat(
        CAPITAL,
        sampling=Sampling(temperature=0.0, max_tokens=1024),
        reasoning=Reasoning(budget_tokens=1024),
    ),
    "tool_any": chat(
        turn("user", TOOL_PROMPT),
        sampling=Sampling(temperature=0.0, max_tokens=60),
        tools=Tools(functions=(WEATHER,), choice="required"),
    ),
    "tool_result": chat(
        turn("user", "What is the weather in Paris?"),
        turn(
            "assistant",
            ToolCallPart(
                call_id="toolu_sieval_01", name="get_weather", arguments={"city": "Paris"}
            ),
        ),
        turn("tool", ToolResultPart(call_id="toolu_sieval_01", result="22 C, sunny")),
        sampling=Sampling(temperature=0.0, max_tokens=12),
        tools=Tools(functions=(WEATHER,)),
    ),
    "stream": chat(CAPITAL, sampling=GREEDY_8, scheduling=Scheduling(stream=True)),
    "stream_tool_any": chat(
        turn("user", TOOL_PROMPT),
        sampling=Sampling(temperature=0.0, max_tokens=60),
        tools=Tools(functions=(WEATHER,), choice="required"),
        scheduling=Scheduling(stream=True),
    ),
    "image_base64": chat(
        turn(
            "user",
            "What colour is this image?",
            ImagePart(data=PNG_1X1_RED, media_type="image/png"),
        ),
        sampling=GREEDY_8,
    ),
    "error_context_overflow": chat(
        turn("user", "hello " * 4200), sampling=Sampling(temperature=0.0, max_tokens=4)
    ),
    "x_api_key_without_server_key": chat(CAPITAL, sampling=Sampling(temperature=0.0, max_tokens=4)),
}


def lowered_for(name: str, model: str = MODEL) -> tuple[Lowered, dict[str, Any]]:
    fixture = load_fixture(FOLDER, name)
    lowered = lower(D, CASES[name], model)
    assert lowered.body == fixture["request"], "lowering drifted from the recorded body"
    return lowered, fixture


def run(name: str) -> Response:
    lowered, fixture = lowered_for(name)
    return lift(D, lowered, fixture["status"], {}, reply_bytes(fixture))


def answer(name: str) -> str:
    return run(name).choices[0].text


# -- lowering: the recorded bodies, the SDK's request types ---------------------------------------


def sdk_validate(params: Any, body: dict[str, Any]) -> Any:
    """The body validated by the SDK's TypedDict, its lazily checked iterables (messages, blocks,
    tools, system) drained so that every nested element is checked too."""

    def drain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: drain(v) for k, v in value.items()}
        if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
            return [drain(v) for v in value]
        return value

    # the adapter must outlive the iterators it returns (they point into its schema)
    if params not in _ADAPTERS:
        _ADAPTERS[params] = pydantic.TypeAdapter(params)
    return drain(_ADAPTERS[params].validate_python(body))


_ADAPTERS: dict[Any, pydantic.TypeAdapter[Any]] = {}


REFUSED_NOW = {"error_thinking_budget_not_below_max"}
"""Recorded to show vLLM's answer to a body the dialect now refuses before I/O."""


@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED_NOW))
def test_every_lowered_body_validates_against_the_sdk_request_type(name: str) -> None:
    lowered = lower(D, CASES[name], MODEL)
    params = MessageCreateParamsStreaming if lowered.stream else MessageCreateParamsNonStreaming
    assert sdk_validate(params, lowered.body)["messages"]


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b["messages"][0].update(role="tool"),
        lambda b: b["messages"][0]["content"][0].update(type="input_text"),
        lambda b: b.update(tool_choice={"type": "required"}),
        lambda b: b.update(system=[{"type": "image"}]),
    ],
)
def test_the_sdk_oracle_rejects_a_wrong_body(change: Any) -> None:
    body = copy.deepcopy(lower(D, CASES["plain"], MODEL).body)
    change(body)
    with pytest.raises(pydantic.ValidationError):
        sdk_validate(MessageCreateParamsNonStreaming, body)


def test_system_messages_become_the_top_level_system_blocks() -> None:
    lowered, _ = lowered_for("system_two_blocks")
    assert lowered.body["system"] == [
        {"type": "text", "text": "Answer in one word."},
        {"type": "text", "text": "Answer in French."},
    ]
    assert [m["role"] for m in lowered.body["messages"]] == ["user"]
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["input.chat.messages[0]"] == "system"
    assert ledger["input.chat.messages[0].content[1].text"] == "system[1]"
    assert ledger["input.chat.messages[1]"] == "messages[0]"


def test_a_developer_message_is_a_system_block_too() -> None:
    request = chat(turn("developer", "Be brief."), CAPITAL, sampling=GREEDY_8)
    lowered = lower(D, request, MODEL)
    assert lowered.body["system"] == [{"type": "text", "text": "Be brief."}]
    assert {d.leaf: d.path for d in lowered.ledger}["input.chat.messages[0]"] == "system"


def test_a_tool_turn_is_a_user_turn_of_tool_results() -> None:
    lowered, _ = lowered_for("tool_result")
    turns = lowered.body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == [
        {
            "type": "tool_use",
            "id": "toolu_sieval_01",
            "name": "get_weather",
            "input": {"city": "Paris"},
        }
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_sieval_01", "content": "22 C, sunny"}
    ]
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["input.chat.messages[2].content[0].tool_result"] == "messages[2].content[0]"


def test_a_tool_result_that_is_not_text_is_sent_as_json_text_with_is_error() -> None:
    request = chat(
        turn("user", "go"),
        turn("assistant", ToolCallPart(call_id="c1", name="f", arguments={})),
        turn("tool", ToolResultPart(call_id="c1", result={"error": "no city"}, is_error=True)),
        sampling=GREEDY_8,
        tools=Tools(functions=(FunctionTool(name="f", parameters={"type": "object"}),)),
    )
    lowered = lower(D, request, MODEL)
    block = lowered.body["messages"][2]["content"][0]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": '{"error":"no city"}',
        "is_error": True,
    }
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["input.chat.messages[2].content[0].tool_result.is_error"] == (
        "messages[2].content[0].is_error"
    )


def test_images_take_base64_or_url_sources() -> None:
    lowered, _ = lowered_for("image_base64")
    block = lowered.body["messages"][0]["content"][1]
    assert block == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1_RED},
    }
    url = chat(
        turn("user", ImagePart(url="https://example.org/cat.png", detail="auto")), sampling=GREEDY_8
    )
    lowered = lower(D, url, MODEL)
    assert lowered.body["messages"][0]["content"][0] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.org/cat.png"},
    }
    outcomes = {d.leaf: d.outcome for d in lowered.ledger}
    assert outcomes["input.chat.messages[0].content[0].image.detail"] == "noop"


def test_json_schema_goes_to_output_config_format() -> None:
    lowered, _ = lowered_for("json_schema")
    assert lowered.body["output_config"] == {"format": {"type": "json_schema", "schema": PERSON}}
    named = chat(
        CAPITAL,
        sampling=GREEDY_8,
        structured_output=StructuredOutput(
            format="json_schema", schema=PERSON, name="person", strict=True
        ),
    )
    lowered = lower(D, named, MODEL)
    outcomes = {d.leaf: d.outcome for d in lowered.ledger}
    assert outcomes["structured_output.name"] == "noop"
    assert outcomes["structured_output.strict"] == "noop"
    assert "name" not in lowered.body["output_config"]["format"]


def test_effort_and_format_share_output_config() -> None:
    request = chat(
        CAPITAL,
        sampling=GREEDY_8,
        reasoning=Reasoning(effort="high"),
        structured_output=StructuredOutput(format="json_schema", schema=PERSON),
    )
    body = lower(D, request, MODEL).body
    assert body["output_config"] == {
        "effort": "high",
        "format": {"type": "json_schema", "schema": PERSON},
    }


def test_reasoning_rows_write_thinking_and_effort() -> None:
    assert lowered_for("thinking_disabled")[0].body["thinking"] == {"type": "disabled"}
    assert lowered_for("effort_low")[0].body["output_config"] == {"effort": "low"}
    assert lowered_for("thinking_enabled")[0].body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 1024,
    }
    summary = chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(summary="auto"))
    outcomes = {d.leaf: d.outcome for d in lower(D, summary, MODEL).ledger}
    assert outcomes["reasoning.summary"] == "noop"


def test_tools_and_tool_choice() -> None:
    lowered, _ = lowered_for("tool_any")
    assert lowered.body["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "input_schema": WEATHER.parameters,
        }
    ]
    assert lowered.body["tool_choice"] == {"type": "any"}
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["tools.functions[0].description"] == "tools[0].description"
    assert ledger["tools.choice"] == "tool_choice.type"


def test_parallel_false_disables_parallel_tool_use_with_an_auto_choice() -> None:
    request = chat(CAPITAL, sampling=GREEDY_8, tools=Tools(functions=(WEATHER,), parallel=False))
    lowered = lower(D, request, MODEL)
    assert lowered.body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    forced = chat(
        CAPITAL,
        sampling=GREEDY_8,
        tools=Tools(functions=(WEATHER,), choice="required", parallel=True),
    )
    assert lower(D, forced, MODEL).body["tool_choice"] == {
        "type": "any",
        "disable_parallel_tool_use": False,
    }


def test_tool_settings_without_tools_change_nothing_or_are_refused() -> None:
    none = chat(CAPITAL, sampling=GREEDY_8, tools=Tools(choice="none", parallel=False))
    lowered = lower(D, none, MODEL)
    assert "tool_choice" not in lowered.body and "tools" not in lowered.body
    assert {d.leaf: d.outcome for d in lowered.ledger}["tools.choice"] == "noop"
    with pytest.raises(Refused, match="needs tools.functions") as info:
        lower(D, chat(CAPITAL, sampling=GREEDY_8, tools=Tools(choice="required")), MODEL)
    assert info.value.path == "tools.choice"


def test_auth_is_hosted_anthropics_by_default() -> None:
    assert D.auth.headers(None) == {"anthropic-version": "2023-06-01"}
    assert D.auth.headers("sk-x") == {"anthropic-version": "2023-06-01", "x-api-key": "sk-x"}
    fixture = load_fixture(FOLDER, "x_api_key_without_server_key")
    assert fixture["headers"] == {
        "anthropic-version": "2023-06-01",
        "x-api-key": "<redacted x-api-key>",
    }
    r = run("x_api_key_without_server_key")  # a keyless vLLM ignores the header
    assert r.choices[0].finish_reason == "max_tokens"


# -- refused before I/O ---------------------------------------------------------------------------

REFUSALS: list[tuple[Request, str, str]] = [
    (chat(CAPITAL, sampling=Sampling(max_tokens=4, seed=1)), "sampling.seed", "no seed"),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4, n=2, temperature=1.0)),
        "sampling.n",
        "one message per call",
    ),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4, frequency_penalty=0.5)),
        "sampling.frequency_penalty",
        "no penalties",
    ),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4, presence_penalty=0.5)),
        "sampling.presence_penalty",
        "no penalties",
    ),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4), scoring=Scoring(sampled_logprobs=True)),
        "scoring.sampled_logprobs",
        "no logprobs",
    ),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4), scoring=Scoring(input_logprobs=True)),
        "scoring.input_logprobs",
        "vllm_native",
    ),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4), scoring=Scoring(token_ids=True)),
        "scoring.token_ids",
        "no token ids",
    ),
    (
        chat(CAPITAL, sampling=Sampling(temperature=0.0)),
        "sampling.max_tokens",
        "set sampling.max_tokens",
    ),
    (chat(CAPITAL, sampling=Sampling(max_tokens=0)), "sampling.max_tokens", "ask for 1"),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4, temperature=1.5)),
        "sampling.temperature",
        "0..1",
    ),
    (chat(CAPITAL, sampling=Sampling(max_tokens=4, top_k=0)), "sampling.top_k", "positive"),
    (
        chat(CAPITAL, sampling=Sampling(max_tokens=4, stop=("a", "b", "c", "d", "e"))),
        "sampling.stop",
        "at most 4",
    ),
    (
        chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(budget_tokens=512)),
        "reasoning.budget_tokens",
        "at least 1024",
    ),
    (
        chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(effort="minimal")),
        "reasoning.effort",
        "ask for low",
    ),
    (
        chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(summary="detailed")),
        "reasoning.summary",
        "use auto",
    ),
    (
        chat(CAPITAL, sampling=GREEDY_8, structured_output=StructuredOutput(format="json_object")),
        "structured_output.format",
        "no json_object",
    ),
    (
        chat(
            CAPITAL,
            sampling=GREEDY_8,
            structured_output=StructuredOutput(format="json_schema", schema=PERSON, strict=False),
        ),
        "structured_output.strict",
        "always enforced",
    ),
    (
        chat(CAPITAL, turn("assistant", "The capital is"), sampling=GREEDY_8),
        "input.chat.messages[1]",
        "prefill",
    ),
    (
        chat(CAPITAL, turn("system", "late"), turn("user", "x"), sampling=GREEDY_8),
        "input.chat.messages[1]",
        "before the first user turn",
    ),
    (
        chat(Message(role="user", name="ann", content=(TextPart(text="hi"),)), sampling=GREEDY_8),
        "input.chat.messages.name",
        "carry no name",
    ),
    (chat(turn("user", ""), sampling=GREEDY_8), "input.chat.messages[0].content[0].text", "empty"),
    (
        chat(Message(role="user", content=()), sampling=GREEDY_8),
        "input.chat.messages[0]",
        "content block",
    ),
    (
        chat(turn("user", ImagePart(url="https://x/y.png", detail="high")), sampling=GREEDY_8),
        "input.chat.messages[0].content[0].image.detail",
        "no detail control",
    ),
    (
        chat(turn("user", ImagePart(data="AAAA", media_type="image/tiff")), sampling=GREEDY_8),
        "input.chat.messages[0].content[0].image",
        "image/png",
    ),
    (
        chat(turn("system", ImagePart(url="https://x/y.png")), CAPITAL, sampling=GREEDY_8),
        "input.chat.messages[0]",
        "text blocks only",
    ),
    (
        chat(
            turn("user", ToolCallPart(call_id="c", name="f", arguments={})),
            sampling=GREEDY_8,
        ),
        "input.chat.messages[0].content[0].tool_call",
        "assistant turn",
    ),
    (
        chat(
            CAPITAL,
            turn("assistant", ToolResultPart(call_id="c", result="x")),
            turn("user", "and?"),
            sampling=GREEDY_8,
        ),
        "input.chat.messages[1].content[0].tool_result",
        "tool or user turn",
    ),
    (
        chat(
            CAPITAL,
            sampling=GREEDY_8,
            tools=Tools(functions=(FunctionTool(name="f", parameters={"type": "array"}),)),
        ),
        "tools.functions",
        "['f'] are not",
    ),
    (chat(CAPITAL, sampling=GREEDY_8, options={"min_p": 0.1}), "options.min_p", "drops fields"),
    (chat(turn("system", "only rules"), sampling=GREEDY_8), "input.chat.messages", "one user turn"),
    (Request.completion("2+2=", sampling=GREEDY_8), "input.completion.text", "chat messages"),
]


@pytest.mark.parametrize(
    ("request_", "leaf", "why"), REFUSALS, ids=[f"{leaf}:{why}" for _, leaf, why in REFUSALS]
)
def test_what_the_wire_cannot_express_is_refused_before_io(
    request_: Request, leaf: str, why: str
) -> None:
    with pytest.raises(Refused) as info:
        lower(D, request_, MODEL)
    assert info.value.path == leaf
    assert why in str(info.value)
    assert info.value.dialect == "anthropic_messages"


@pytest.mark.parametrize(
    ("request_", "fixture", "status", "needle"),
    [
        (
            chat(
                CAPITAL, sampling=Sampling(max_tokens=1100), reasoning=Reasoning(budget_tokens=512)
            ),
            "error_thinking_budget_low",
            400,
            "greater than or equal to 1024",
        ),
        (chat(CAPITAL, sampling=Sampling(max_tokens=0)), "error_max_tokens_0", 400, "positive"),
        (
            chat(CAPITAL, sampling=Sampling(max_tokens=4, stop=("a", "b", "c", "d", "e"))),
            "error_stop_sequences_5",
            400,
            "at most 4 items",
        ),
        (
            chat(CAPITAL, sampling=Sampling(temperature=0.0)),
            "error_missing_max_tokens",
            400,
            "Field required",
        ),
        # vLLM's range is 0..2, Anthropic's 0..1: refused although this server would answer
        (
            chat(CAPITAL, sampling=Sampling(max_tokens=4, temperature=1.5)),
            "temperature_above_1",
            200,
            "",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_what_is_refused_was_recorded_against_vllm(
    request_: Request, fixture: str, status: int, needle: str
) -> None:
    with pytest.raises(Refused):
        lower(D, request_, MODEL)
    recorded = load_fixture(FOLDER, fixture)
    assert recorded["status"] == status
    if status != 200:
        assert needle in recorded["reply"]["error"]["message"]


# -- lifting the recorded replies -----------------------------------------------------------------


def test_plain_reply_text_stop_reason_and_usage() -> None:
    r = run("plain")
    choice = r.choices[0]
    assert choice.text == "What is the capital of France? mendatang"
    assert choice.finish_reason == "max_tokens" and choice.stop_reason is None
    assert (r.usage.input_tokens, r.usage.output_tokens) == (16, 8)
    assert r.usage.cached_tokens.__class__.__name__ == "UnsetType"  # not reported, not 0
    assert r.model == "gemma-3-270m" and r.dialect == "anthropic_messages"
    assert choice.reasoning.__class__.__name__ == "UnsetType"


def test_system_and_turns_reach_the_model() -> None:
    assert answer("system_user").startswith("Answer in one word.\n\n")  # Gemma echoes its prompt
    assert answer("system_two_blocks").startswith("Answer in one word.Answer in French")
    assert run("multi_turn").usage.input_tokens == 32


def test_a_matched_stop_sequence_is_kept() -> None:
    choice = run("stop_sequence").choices[0]
    assert choice.finish_reason == "stop_sequence" and choice.stop_reason == "3"
    assert choice.text == "Continue the list: 1, 2, " and "3" not in choice.text


def test_max_tokens_reached_is_the_servers_word() -> None:
    r = run("max_tokens")
    assert r.choices[0].finish_reason == "max_tokens" and r.usage.output_tokens == 3
    assert r.warnings == ()
    sampled = run("sampling")
    assert sampled.choices[0].finish_reason == "max_tokens" and sampled.usage.output_tokens == 12


def test_json_schema_output_is_parsed() -> None:
    value = run("json_schema").choices[0].structured_output
    assert value.value == {"name": "Ann", "adult": True}


def test_json_schema_cut_at_max_tokens_is_a_contract_violation() -> None:
    with pytest.raises(ContractViolation, match=r"not valid JSON \(cut at max_tokens\)"):
        run("json_schema_cut")


def test_effort_and_disabled_thinking_are_accepted_and_change_no_shape() -> None:
    for name in ("effort_low", "thinking_disabled"):
        r = run(name)
        assert r.choices[0].reasoning.__class__.__name__ == "UnsetType"
        assert r.choices[0].text == answer("plain")  # the Gemma template ignores effort


def test_thinking_without_a_reasoning_parser_is_rejected_by_vllm() -> None:
    with pytest.raises(ServerRejected, match="reasoning-parser") as info:
        run("thinking_enabled")
    assert info.value.status == 400


def test_a_budget_not_below_max_tokens_is_refused_before_vllm_would_reject_it() -> None:
    fixture = load_fixture("anthropic_messages", "error_thinking_budget_not_below_max")
    assert fixture["status"] == 400  # what vLLM answers when such a body reaches it
    assert "must be less than max_tokens" in json.dumps(fixture["reply"])
    with pytest.raises(Refused, match="budget_tokens must be below max_tokens") as info:
        lower(D, CASES["error_thinking_budget_not_below_max"], MODEL)
    assert info.value.path == "reasoning.budget_tokens"


def test_a_forced_tool_call_is_lifted_with_its_input() -> None:
    r = run("tool_any")
    choice = r.choices[0]
    assert choice.finish_reason == "tool_use" and choice.text == ""
    (call,) = choice.tool_calls
    assert call.name == "get_weather" and call.arguments == {"city": "Paris"}
    assert call.call_id.startswith("chatcmpl-tool-")


def test_the_tool_result_turn_gets_an_answer() -> None:
    r = run("tool_result")
    assert r.choices[0].text.startswith("23 C, sunny")
    assert r.choices[0].tool_calls.__class__.__name__ == "UnsetType"


def test_stream_folds_into_the_same_response_as_non_stream() -> None:
    streamed, plain = run("stream"), run("plain")
    assert streamed.choices == plain.choices
    assert streamed.usage == plain.usage


def test_streamed_tool_input_is_assembled_from_its_json_deltas() -> None:
    streamed, plain = run("stream_tool_any"), run("tool_any")
    assert streamed.choices[0].tool_calls[0].arguments == {"city": "Paris"}
    assert streamed.choices[0].finish_reason == plain.choices[0].finish_reason == "tool_use"
    assert streamed.usage == plain.usage


@pytest.mark.parametrize(
    ("name", "status", "kind", "needle"),
    [
        ("image_base64", 400, None, "is not a multimodal model"),
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


def test_an_unknown_model_is_rejected_with_the_servers_words() -> None:
    fixture = load_fixture(FOLDER, "error_unknown_model")
    lowered = lower(D, CASES["x_api_key_without_server_key"], "no-such-model")
    assert lowered.body == fixture["request"]
    with pytest.raises(ServerRejected, match="does not exist") as info:
        lift(D, lowered, 404, {}, reply_bytes(fixture))
    assert info.value.path == "unknown_model"


def test_openai_shaped_validation_errors_are_read_too() -> None:
    fixture = load_fixture(FOLDER, "error_missing_max_tokens")
    lowered = lower(D, CASES["plain"], MODEL)
    with pytest.raises(ServerRejected, match="Field required"):
        lift(D, lowered, 400, {}, reply_bytes(fixture))


def test_overloaded_529_is_a_transport_error() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    with pytest.raises(TransportError, match="Overloaded") as info:
        lift(D, lower(D, CASES["plain"], MODEL), 529, {}, body)
    assert info.value.status == 529


# -- the SDK parses what vLLM sends ---------------------------------------------------------------

FIXTURE_NAMES = sorted(
    p.stem for p in (load_fixture.__globals__["FIXTURES"] / FOLDER / "0.32.0").glob("*.json")
)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_the_sdk_parses_every_recorded_reply(name: str) -> None:
    fixture = load_fixture(FOLDER, name)
    if fixture["route"].endswith("/count_tokens"):
        assert sdk_validate(MessageCountTokensParams, fixture["request"])["system"]
        assert MessageTokensCount.model_validate(fixture["reply"]).input_tokens == 22
    elif "reply_sse" in fixture:
        events = [json.loads(e.data) for e in parse(reply_bytes(fixture))]
        adapter = pydantic.TypeAdapter(RawMessageStreamEvent)
        assert [adapter.validate_python(e).type for e in events][-1] == "message_stop"
    elif fixture["status"] == 200:
        assert SdkMessage.model_validate(fixture["reply"]).role == "assistant"
    else:
        assert fixture["status"] in (400, 404)


def test_the_sdk_rejects_vllms_handler_error_types() -> None:
    # vLLM's handler errors are Anthropic-shaped but typed with its own names (BadRequestError)
    reply = load_fixture(FOLDER, "image_base64")["reply"]
    assert reply["type"] == "error" and reply["error"]["type"] == "BadRequestError"
    with pytest.raises(pydantic.ValidationError):
        ErrorResponse.model_validate(reply)
    assert ErrorResponse.model_validate(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "x"}}
    )


# -- replies that must not be believed (mutations of real replies) --------------------------------


def mutated(name: str, change: Any) -> tuple[Lowered, bytes]:
    lowered, fixture = lowered_for(name)
    reply = copy.deepcopy(fixture["reply"])
    change(reply)
    return lowered, json.dumps(reply).encode()


def _set(path: str, value: Any) -> Any:
    def change(reply: dict[str, Any]) -> None:
        node: Any = reply
        *head, last = path.split(".")
        for key in head:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value

    return change


def _drop(key: str) -> Any:
    return lambda reply: reply.pop(key)


MUTATIONS = [
    ("plain", _drop("stop_reason"), "no stop_reason"),
    ("plain", _set("type", "completion"), "expected shape"),
    ("plain", _set("content.0.type", "server_tool_use"), "expected shape"),
    ("plain", _set("stop_sequence", "x"), "contradicts"),
    ("stop_sequence", _set("stop_sequence", "9"), "not one of the requested"),
    ("stop_sequence", _drop("stop_sequence"), "stop_sequence is None"),
    (
        "plain",
        lambda r: r.update(stop_reason="stop_sequence", stop_sequence="?"),
        "not one of the requested",
    ),
    ("tool_any", _set("content", [{"type": "text", "text": "hi"}]), "no tool_use block"),
    ("tool_any", _set("content.0.name", "get_time"), "did not offer"),
    ("tool_any", _set("content.0.input", "Paris"), "expected shape"),
    (
        "tool_any",
        lambda r: r.update(stop_reason="end_turn", content=[{"type": "text", "text": "no"}]),
        "did not honour it",
    ),
    ("json_schema", _set("content.0.text", '{"name": "Ann"'), "not valid JSON"),
    ("plain", _set("usage.output_tokens", "eight"), "expected shape"),
]


@pytest.mark.parametrize(("name", "change", "needle"), MUTATIONS)
def test_a_mutated_reply_is_refused(name: str, change: Any, needle: str) -> None:
    lowered, body = mutated(name, change)
    with pytest.raises(ContractViolation, match=needle):
        lift(D, lowered, 200, {}, body)


def test_thinking_blocks_go_to_the_reasoning_channel_never_the_text() -> None:
    def add_thinking(reply: dict[str, Any]) -> None:
        reply["content"].insert(0, {"type": "thinking", "thinking": "2+2 is 4.", "signature": "ab"})

    lowered, body = mutated("plain", add_thinking)
    choice = lift(D, lowered, 200, {}, body).choices[0]
    assert choice.reasoning == "2+2 is 4."
    assert choice.text == "What is the capital of France? mendatang"


def test_redacted_thinking_and_a_refusal_are_warned_about() -> None:
    def refuse(reply: dict[str, Any]) -> None:
        reply["content"].insert(0, {"type": "redacted_thinking", "data": "opaque"})
        reply["stop_reason"] = "refusal"

    lowered, body = mutated("plain", refuse)
    r = lift(D, lowered, 200, {}, body)
    assert r.choices[0].finish_reason == "refusal"
    assert any("refused" in w for w in r.warnings)
    assert any("redacted_thinking" in w for w in r.warnings)


def test_cache_counts_join_the_input_total_and_absent_stays_unset() -> None:
    lowered, body = mutated(
        "plain",
        _set(
            "usage",
            {
                "input_tokens": 4,
                "output_tokens": 8,
                "cache_read_input_tokens": 10,
                "cache_creation_input_tokens": 2,
            },
        ),
    )
    usage = lift(D, lowered, 200, {}, body).usage
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (16, 10, 8)


def test_a_max_tokens_stop_short_of_max_tokens_is_warned_about() -> None:
    lowered, body = mutated("max_tokens", _set("usage.output_tokens", 2))
    (warning,) = lift(D, lowered, 200, {}, body).warnings
    assert "after 2 of max_tokens=3" in warning


# -- streams that must not be believed ------------------------------------------------------------

SSE = load_fixture(FOLDER, "stream")["reply_sse"]
TOOL_SSE = load_fixture(FOLDER, "stream_tool_any")["reply_sse"]


def events_of(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [(str(e.event), json.loads(e.data)) for e in parse(text.encode())]


def sse_of(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in events).encode()


def lift_stream(name: str, events: list[tuple[str, dict[str, Any]]]) -> Response:
    lowered, _ = lowered_for(name)
    return lift(D, lowered, 200, {}, sse_of(events))


def test_pings_anywhere_change_nothing() -> None:
    events = events_of(SSE)
    ping = ("ping", {"type": "ping"})
    with_pings = [ping, events[0], ping, *events[1:3], ping, *events[3:], ping]
    assert lift_stream("stream", with_pings) == run("stream")


def _without_stop(events: list[Any]) -> list[Any]:
    return events[:-1]


def _swap_names(events: list[Any]) -> list[Any]:
    events[1] = ("content_block_delta", events[1][1])
    return events


def _second_start(events: list[Any]) -> list[Any]:
    return [events[0], *events]


def _delta_first(events: list[Any]) -> list[Any]:
    return [events[2], *events]


def _skip_index(events: list[Any]) -> list[Any]:
    for _, data in events:
        if "index" in data:
            data["index"] = 1
    return events


def _never_stopped(events: list[Any]) -> list[Any]:
    return [e for e in events if e[0] != "content_block_stop"]


def _no_message_delta(events: list[Any]) -> list[Any]:
    return [e for e in events if e[0] != "message_delta"]


def _wrong_delta_kind(events: list[Any]) -> list[Any]:
    events[2] = (
        events[2][0],
        {**events[2][1], "delta": {"type": "input_json_delta", "partial_json": "{"}},
    )
    return events


def _duplicate_block(events: list[Any]) -> list[Any]:
    stop = next(i for i, e in enumerate(events) if e[0] == "content_block_stop")
    return [*events[: stop + 1], *events[1 : stop + 1], *events[stop + 1 :]]


STREAM_BREAKS = [
    ("stream", _duplicate_block, "starts block 0, expected block 1"),
    ("stream", _without_stop, "without a message_stop"),
    ("stream", _swap_names, "is named"),
    ("stream", _second_start, "second message_start"),
    ("stream", _delta_first, "before message_start"),
    ("stream", _skip_index, "expected block 0"),
    ("stream", _never_stopped, "is open"),
    ("stream", _no_message_delta, "without a message_delta"),
    ("stream", _wrong_delta_kind, "input_json_delta for a text block"),
]


@pytest.mark.parametrize(("name", "change", "needle"), STREAM_BREAKS)
def test_a_broken_stream_is_refused(name: str, change: Any, needle: str) -> None:
    events = change(events_of(SSE if name == "stream" else TOOL_SSE))
    with pytest.raises(ContractViolation, match=needle):
        lift_stream(name, events)


def test_a_tool_call_cut_mid_json_is_refused() -> None:
    events = [e for e in events_of(TOOL_SSE) if e[1].get("delta", {}).get("partial_json") != '"}']
    with pytest.raises(ContractViolation, match="not a JSON object"):
        lift_stream("stream_tool_any", events)


@pytest.mark.parametrize(
    ("kind", "error"),
    [("overloaded_error", TransportError), ("invalid_request_error", ServerRejected)],
)
def test_an_in_band_error_event_is_the_error_its_status_would_give(
    kind: str, error: type[SievalError]
) -> None:
    events = events_of(SSE)
    failure = ("error", {"type": "error", "error": {"type": kind, "message": "Overloaded"}})
    broken = [*events[:4], failure]
    with pytest.raises(error, match="in-band") as info:
        lift_stream("stream", broken)
    assert getattr(info.value, "status", None) == (529 if kind == "overloaded_error" else 400)


# -- fuzz: a malformed reply raises a SievalError or lifts ----------------------------------------

FUZZED = {name: load_fixture(FOLDER, name)["reply"] for name in ("tool_any", "json_schema")}
FUZZ_PATHS = [(name, p) for name, reply in FUZZED.items() for p in paths(reply)[1:]]


def _lift_or_sieval_error(name: str, body: bytes) -> None:
    try:
        response = lift(D, lower(D, CASES[name], MODEL), 200, {}, body)
    except SievalError:
        return
    assert len(response.choices) == 1


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FUZZ_PATHS), json_values)
def test_mutated_reply(where: tuple[str, tuple[Any, ...]], value: Any) -> None:
    name, path = where
    reply = copy.deepcopy(FUZZED[name])
    set_at(reply, path, value)
    _lift_or_sieval_error(name, json.dumps(reply).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes(body: bytes) -> None:
    _lift_or_sieval_error("plain", body)
    _lift_or_sieval_error("stream", body)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["stream", "stream_tool_any"]), st.floats(0, 1), st.text(max_size=8))
def test_cut_or_spliced_stream(name: str, where: float, junk: str) -> None:
    text = SSE if name == "stream" else TOOL_SSE
    cut = int(where * len(text))
    _lift_or_sieval_error(name, (text[:cut] + junk + text[cut:]).encode())


def test_the_fuzz_starts_from_replies_that_lift() -> None:
    for name in FUZZED:
        assert msgspec.json.decode(json.dumps(FUZZED[name]).encode()) == FUZZED[name]
        assert run(name).choices
