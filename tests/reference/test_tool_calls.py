"""Tool calls on every chat wire of the reference server: which tool, its arguments, parallel and
forced calls, tool results and multi-turn loops, streamed or not, and the parser faults.

Requests go through sieval's own dialects (so the replies are ones sieval can read), and every
raw reply body or event is parsed with the official SDK's types (openai, anthropic,
google-genai), the oracle of each wire's shape.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
import pydantic
import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent
from google.genai import types as genai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response as OpenAIResponse
from openai.types.responses import ResponseStreamEvent

from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lower
from sieval.ir.request import (
    ChatInput,
    FunctionTool,
    Message,
    Request,
    Sampling,
    Scheduling,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from sieval.ir.response import Response
from sieval.model import Call as ModelCall
from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.reference.tool_calls import Call, Offer, Tool, call_id, decide, extract, follow_up

WIRES = ("openai_chat", "openai_responses", "anthropic_messages", "google_genai")
WEATHER = FunctionTool(
    name="get_weather",
    description="Current weather for a city",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
)
TIME = FunctionTool(
    name="get_time",
    description="Current time in a timezone",
    parameters={
        "type": "object",
        "properties": {"zone": {"type": "string"}},
        "required": ["zone"],
    },
)
BOTH = (WEATHER, TIME)
GREEDY = Sampling(temperature=0.0, max_tokens=120)
TWO_CALLS = "Use get_weather for Paris and get_time for Tokyo."
ID = re.compile(r"chatcmpl-tool-[0-9a-f]{16}")


def user(text: str) -> Message:
    return Message(role="user", content=(TextPart(text=text),))


def ask(*messages: Message, stream: bool = False, **tools: Any) -> Request:
    return Request(
        input=ChatInput(messages=messages),
        sampling=GREEDY,
        tools=Tools(functions=tools.pop("functions", BOTH), **tools),
        scheduling=Scheduling(stream=stream),
    )


async def call(
    server: ReferenceServer, wire: str, request: Request, fault: str | None = None
) -> ModelCall:
    headers = {"x-sieval-fault": fault} if fault else {}
    async with Model(
        dialect=wire, base_url=server.url, model_id=server.model_name, headers=headers
    ) as model:
        return await model.call(request)


async def run(server: ReferenceServer, wire: str, request: Request) -> Response:
    got = await call(server, wire, request)
    assert got.ok, got.error
    assert got.response is not None
    return got.response


def calls_of(response: Response) -> list[tuple[str, dict[str, Any]]]:
    tool_calls = response.choices[0].tool_calls
    return [(c.name, c.arguments) for c in tool_calls or ()]


# -- the rules, without a wire ----------------------------------------------------------------


def _offer(mode: Any = "auto", parallel: bool = True, named: str | None = None) -> Offer:
    tools = tuple(Tool(t.name, str(t.description), t.parameters) for t in BOTH)
    return Offer(tools, mode, named, parallel)


def _turns(*texts: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": t} for t in texts]


def test_a_named_tool_is_called_with_its_own_words() -> None:
    got = decide(_turns("get_weather for Paris, then get_weather for Oslo"), _offer())
    assert got == (Call("get_weather", {"city": "Paris"}), Call("get_weather", {"city": "Oslo"}))


def test_without_a_name_the_closest_description_wins_or_nothing() -> None:
    assert decide(_turns("What time is it in Lima?"), _offer()) == (
        Call("get_time", {"zone": "Lima"}),
    )
    assert decide(_turns("Tell me a story."), _offer()) == ()


def test_required_named_none_and_parallel() -> None:
    story = _turns("Tell me a story.")
    assert [c.name for c in decide(story, _offer("required"))] == ["get_weather"]
    assert [c.name for c in decide(story, _offer("named", named="get_time"))] == ["get_time"]
    assert decide(_turns(TWO_CALLS), _offer("none")) == ()
    assert len(decide(_turns(TWO_CALLS), _offer())) == 2
    assert [c.name for c in decide(_turns(TWO_CALLS), _offer(parallel=False))] == ["get_weather"]


def test_calls_already_made_are_not_made_again() -> None:
    history = [
        *_turns(TWO_CALLS),
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": "get_weather"}]},
        {"role": "tool", "content": "18 C", "tool_call_id": "a"},
    ]
    assert [c.name for c in decide(history, _offer(parallel=False))] == ["get_time"]
    history += [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "b", "name": "get_time"}]},
        {"role": "tool", "content": "09:00", "tool_call_id": "b"},
    ]
    assert decide(history, _offer()) == ()
    assert follow_up(history) == "get_time returned 09:00."
    assert follow_up(history[:3]) == "get_weather returned 18 C."
    assert follow_up(_turns("Hi")) is None


def test_the_parser_reads_what_was_written_and_its_faults_lose_it() -> None:
    calls = (Call("a", {"x": 1}), Call("b", {"y": "z"}))
    text = '{"x": 1}\n{"y": "z"}'
    assert extract(text, calls) == calls
    assert extract('{"x": 1}\n{"y": "', calls) is None  # cut: the text stays the answer
    assert extract(text, calls, "tool-calls-as-text") is None
    assert extract(text, calls, "tool-call-dropped") == calls[:1]
    assert extract(text, calls, "tool-calls-empty") == ()
    assert extract(text, ()) is None


def test_call_ids_are_vllms_form_and_follow_the_conversation() -> None:
    one, two = call_id(_turns("a"), 0), call_id(_turns("a"), 1)
    assert ID.fullmatch(one) and ID.fullmatch(two) and one != two
    assert call_id(_turns("a"), 0) == one != call_id(_turns("b"), 0)


# -- on every wire ------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_auto_calls_the_tool_the_question_needs(
    server: ReferenceServer, wire: str, stream: bool
) -> None:
    got = await run(server, wire, ask(user("What is the weather in Paris?"), stream=stream))
    assert calls_of(got) == [("get_weather", {"city": "Paris"})]
    assert got.choices[0].text == ""


@pytest.mark.parametrize("wire", WIRES)
async def test_auto_answers_in_text_when_no_tool_fits(server: ReferenceServer, wire: str) -> None:
    got = await run(server, wire, ask(user("Tell me a story about a dragon.")))
    assert calls_of(got) == [] and got.choices[0].text


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_parallel_calls_come_in_one_reply(
    server: ReferenceServer, wire: str, stream: bool
) -> None:
    got = await run(server, wire, ask(user(TWO_CALLS), stream=stream))
    assert calls_of(got) == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "Tokyo"})]
    ids = [c.call_id for c in got.choices[0].tool_calls or ()]
    assert len(set(ids)) == 2


@pytest.mark.parametrize("wire", ["openai_chat", "openai_responses"])
async def test_parallel_calls_off_gives_one_call(server: ReferenceServer, wire: str) -> None:
    got = await run(server, wire, ask(user(TWO_CALLS), parallel=False))
    assert calls_of(got) == [("get_weather", {"city": "Paris"})]


async def test_vllms_messages_route_ignores_disable_parallel_tool_use(
    server: ReferenceServer,
) -> None:
    lowered = lower(get_dialect("anthropic_messages"), ask(user(TWO_CALLS), parallel=False), "m")
    assert lowered.body["tool_choice"]["disable_parallel_tool_use"] is True
    got = await run(server, "anthropic_messages", ask(user(TWO_CALLS), parallel=False))
    assert len(calls_of(got)) == 2


@pytest.mark.parametrize("wire", WIRES)
async def test_required_forces_a_call_and_none_forbids_one(
    server: ReferenceServer, wire: str
) -> None:
    forced = await run(server, wire, ask(user("Tell me a story."), choice="required"))
    assert [name for name, _ in calls_of(forced)] == ["get_weather"]
    if wire != "google_genai":  # the google dialect has no tool_choice none to send
        barred = await run(server, wire, ask(user(TWO_CALLS), choice="none"))
        assert calls_of(barred) == [] and barred.choices[0].text


def _result_turns(result: Any, name: str = "get_weather") -> tuple[Message, ...]:
    return (
        user("What is the weather in Paris?"),
        Message(
            role="assistant",
            content=(ToolCallPart(call_id="call_7", name=name, arguments={"city": "Paris"}),),
        ),
        Message(role="tool", content=(ToolResultPart(call_id="call_7", result=result),)),
    )


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_tool_result_reaches_the_answer(
    server: ReferenceServer, wire: str, stream: bool
) -> None:
    got = await run(server, wire, ask(*_result_turns({"temperature_c": 18}), stream=stream))
    assert calls_of(got) == []
    assert "get_weather returned" in got.choices[0].text
    assert re.search(r'"temperature_c": ?18', got.choices[0].text), got.choices[0].text


LOOPS = {  # the turns of calls a loop sees, parallel calls off where the wire can say so
    "openai_chat": [["get_weather"], ["get_time"]],
    "openai_responses": [["get_weather"], ["get_time"]],
    "anthropic_messages": [["get_weather", "get_time"]],  # vLLM drops disable_parallel_tool_use
    "google_genai": [["get_weather", "get_time"]],  # Google has no such switch
}


@pytest.mark.parametrize("wire", WIRES)
async def test_a_loop_walks_through_the_calls_then_answers(
    server: ReferenceServer, wire: str
) -> None:
    history: list[Message] = [user(TWO_CALLS)]
    results = {"get_weather": "18 C", "get_time": "09:00"}
    parallel = {} if wire == "google_genai" else {"parallel": False}
    turns = []
    for _ in range(4):
        got = await run(server, wire, ask(*history, **parallel))
        calls = got.choices[0].tool_calls or ()
        if not calls:
            break
        turns.append([c.name for c in calls])
        history.append(
            Message(
                role="assistant",
                content=tuple(
                    ToolCallPart(call_id=c.call_id, name=c.name, arguments=c.arguments)
                    for c in calls
                ),
            )
        )
        answers = [ToolResultPart(call_id=c.call_id, result=results[c.name]) for c in calls]
        if wire == "google_genai":  # Google wants all of a turn's responses in one Content
            history.append(Message(role="tool", content=tuple(answers)))
        else:
            history += [Message(role="tool", content=(answer,)) for answer in answers]
    assert turns == LOOPS[wire]
    assert re.search(r"get_time returned (09:00|\{\"output\": \"09:00\"\})\.", got.choices[0].text)


# -- raw bodies: named choices, finish reasons, ids, and the SDK's types ------------------------


async def post(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    path: str,
    body: dict[str, Any],
    **h: str,
) -> tuple[int, str]:
    async with client.post(server.url + path, json=body, headers=h) as r:
        return r.status, await r.text()


def _events(text: str) -> list[Any]:
    blocks = [b for b in text.split("\n\n") if "data: " in b]
    data = [b[b.index("data: ") + 6 :] for b in blocks]
    return [json.loads(d) for d in data if d != "[DONE]"]


ADAPTERS: dict[str, pydantic.TypeAdapter[Any]] = {
    "chunk": pydantic.TypeAdapter(ChatCompletionChunk),
    "responses": pydantic.TypeAdapter(ResponseStreamEvent),
    "messages": pydantic.TypeAdapter(RawMessageStreamEvent),
}


def _sdk_parse(wire: str, text: str, stream: bool) -> None:
    """Every reply body (or streamed event) parses as the official SDK's type."""
    if wire == "openai_chat":
        if stream:
            for e in _events(text):
                ADAPTERS["chunk"].validate_python(e)
        else:
            ChatCompletion.model_validate_json(text)
    elif wire == "openai_responses":
        if stream:
            for e in _events(text):
                ADAPTERS["responses"].validate_python(e)
        else:
            OpenAIResponse.model_validate_json(text)
    elif wire == "anthropic_messages":
        if stream:
            for e in _events(text):
                ADAPTERS["messages"].validate_python(e)
        else:
            AnthropicMessage.model_validate_json(text)
    else:
        for e in _events(text) if stream else [json.loads(text)]:
            genai.GenerateContentResponse.model_validate(e)


SCENES = {
    "auto": ask(user("What is the weather in Paris?")),
    "parallel": ask(user(TWO_CALLS)),
    "required": ask(user("Tell me a story."), choice="required"),
    "result": ask(*_result_turns("22 C, sunny")),
    "two_turns": Request(
        input=ChatInput(
            messages=(
                user("Hi, my name is Ann."),
                Message(role="assistant", content=(TextPart(text="Hello Ann."),)),
                user("What is my name?"),
            )
        ),
        sampling=Sampling(temperature=0.0, max_tokens=12),
    ),
}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("scene", sorted(SCENES))
@pytest.mark.parametrize("wire", WIRES)
async def test_every_reply_parses_as_the_sdks_type(
    client: aiohttp.ClientSession, server: ReferenceServer, wire: str, scene: str, stream: bool
) -> None:
    request = SCENES[scene]
    request = Request(
        input=request.input,
        sampling=request.sampling,
        tools=request.tools,
        scheduling=Scheduling(stream=stream),
    )
    lowered = lower(get_dialect(wire), request, server.model_name)
    status, text = await post(client, server, lowered.path, lowered.body)
    assert status == 200, text
    _sdk_parse(wire, text, stream)


def _body(
    wire: str, server: ReferenceServer, text: str, **extra: Any
) -> tuple[str, dict[str, Any]]:
    lowered = lower(get_dialect(wire), ask(user(text)), server.model_name)
    return lowered.path, {**lowered.body, **extra}


NAMED = {
    "openai_chat": {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    "openai_responses": {"tool_choice": {"type": "function", "name": "get_time"}},
    "anthropic_messages": {"tool_choice": {"type": "tool", "name": "get_time"}},
    "google_genai": {
        "toolConfig": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}
        }
    },
}


@pytest.mark.parametrize("wire", WIRES)
async def test_a_named_choice_calls_that_tool_and_finishes_as_vllm_does(
    client: aiohttp.ClientSession, server: ReferenceServer, wire: str
) -> None:
    path, body = _body(wire, server, "What is the weather in Paris?", **NAMED[wire])
    status, text = await post(client, server, path, body)
    reply = json.loads(text)
    assert status == 200, text
    if wire == "openai_chat":
        choice = reply["choices"][0]
        assert choice["finish_reason"] == "stop" and choice["message"]["content"] == ""
        assert [c["function"]["name"] for c in choice["message"]["tool_calls"]] == ["get_time"]
    elif wire == "openai_responses":
        assert [(i["type"], i["name"]) for i in reply["output"]] == [("function_call", "get_time")]
        assert reply["status"] == "completed" and reply["output"][0]["id"].startswith("fc_")
    elif wire == "anthropic_messages":  # recorded: anthropic_messages/0.32.0/tool_named
        assert reply["stop_reason"] == "tool_use"
        assert [b["name"] for b in reply["content"]] == ["get_time"]
    else:
        (candidate,) = reply["candidates"]
        assert candidate["finishReason"] == "STOP"
        assert [p["functionCall"]["name"] for p in candidate["content"]["parts"]] == ["get_time"]


FINISH = {  # (auto with calls, required with calls, a text answer)
    "openai_chat": ("tool_calls", "tool_calls", "stop"),
    "anthropic_messages": ("tool_use", "tool_use", "end_turn"),
    "google_genai": ("STOP", "STOP", "STOP"),
}


@pytest.mark.parametrize("wire", sorted(FINISH))
async def test_finish_reasons_are_the_wires_own(server: ReferenceServer, wire: str) -> None:
    auto = await run(server, wire, ask(user("What is the weather in Paris?")))
    forced = await run(server, wire, ask(user("Tell me a story."), choice="required"))
    text = await run(server, wire, ask(*_result_turns("18 C")))
    got = tuple(r.choices[0].finish_reason for r in (auto, forced, text))
    assert got == FINISH[wire]


async def test_call_ids_are_vllms_form_and_repeat_with_the_request(server: ReferenceServer) -> None:
    for wire in ("openai_chat", "openai_responses", "anthropic_messages"):
        first = await run(server, wire, ask(user(TWO_CALLS)))
        again = await run(server, wire, ask(user(TWO_CALLS)))
        ids = [c.call_id for c in first.choices[0].tool_calls or ()]
        assert all(ID.fullmatch(i) for i in ids) and len(set(ids)) == 2, (wire, ids)
        assert ids == [c.call_id for c in again.choices[0].tool_calls or ()]


# -- history checks ----------------------------------------------------------------------------


async def test_vllm_checks_history_calls_but_not_result_ids(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    def chat(calls: Any) -> dict[str, Any]:
        return {
            "model": server.model_name,
            "max_completion_tokens": 30,
            "messages": [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": None, "tool_calls": calls},
                {"role": "tool", "tool_call_id": "no-such-call", "content": "18 C"},
            ],
        }

    status, text = await post(client, server, "/v1/chat/completions", chat(["x"]))
    assert status == 400 and json.loads(text) == {  # vLLM 0.32.0's reply, seen live
        "error": {
            "message": "2 validation errors:\n  {'type': 'dict_type', 'loc': "
            "'body.0.ChatCompletionMessageFunctionToolCallParam', 'msg': 'Input should be a "
            "valid dictionary', 'input': 'x'}\n  {'type': 'dict_type', 'loc': "
            "'body.0.ChatCompletionMessageCustomToolCallParam', 'msg': 'Input should be a valid "
            "dictionary', 'input': 'x'}",
            "type": "Bad Request",
            "param": "body.0.ChatCompletionMessageFunctionToolCallParam",
            "code": 400,
        }
    }
    bad = [{"id": "a", "type": "custom", "custom": {}}]
    status, text = await post(client, server, "/v1/chat/completions", chat(bad))
    assert status == 400 and "Input should be 'function'" in text
    fine = [{"id": "a", "type": "function", "function": {"name": "w", "arguments": "not json"}}]
    status, text = await post(client, server, "/v1/chat/completions", chat(fine))
    assert status == 200, text  # an id matching no call, and malformed arguments, are accepted
    assert "w returned" not in text and "the tool returned 18 C." in text


@pytest.mark.parametrize(
    ("contents", "needle"),
    [
        (
            [
                {"role": "user", "parts": [{"text": "Weather?"}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "w", "response": {}}}]},
            ],
            "function response turn comes immediately after a function call turn",
        ),
        (
            [
                {"role": "user", "parts": [{"text": "Weather?"}]},
                {
                    "role": "model",
                    "parts": [
                        {"functionCall": {"name": "w", "args": {}}},
                        {"functionCall": {"name": "w", "args": {}}},
                    ],
                },
                {"role": "user", "parts": [{"functionResponse": {"name": "w", "response": {}}}]},
            ],
            "number of function response parts is equal to the number of function call parts",
        ),
        (
            [
                {"role": "user", "parts": [{"text": "Weather?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "w", "response": "x"}}]},
            ],
            "contents[2].parts[0].function_response.response' "
            "(type.googleapis.com/google.protobuf.Struct)",
        ),
    ],
)
async def test_google_checks_function_responses_against_calls(
    client: aiohttp.ClientSession, server: ReferenceServer, contents: Any, needle: str
) -> None:
    path = f"/v1beta/models/{server.model_name}:generateContent"
    status, text = await post(client, server, path, {"contents": contents})
    assert status == 400 and needle in json.loads(text)["error"]["message"], text
    assert json.loads(text)["error"]["status"] == "INVALID_ARGUMENT"


# -- the parser faults --------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_parser_that_returns_calls_as_text(
    server: ReferenceServer, wire: str, stream: bool
) -> None:
    request = ask(user(TWO_CALLS), stream=stream)
    request = Request(
        input=request.input,
        sampling=Sampling(max_tokens=400),
        tools=request.tools,
        scheduling=request.scheduling,
    )
    got = await call(server, wire, request, "tool-calls-as-text")
    assert got.ok and got.response is not None, got.error
    choice = got.response.choices[0]
    assert not choice.tool_calls
    assert choice.text.count("<tool_call>") == 2 and '"name": "get_time"' in choice.text


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_parser_that_drops_one_of_parallel_calls(
    server: ReferenceServer, wire: str, stream: bool
) -> None:
    clean = await run(server, wire, ask(user(TWO_CALLS), stream=stream))
    got = await call(server, wire, ask(user(TWO_CALLS), stream=stream), "tool-call-dropped")
    assert got.ok and got.response is not None, got.error
    assert calls_of(got.response) == calls_of(clean)[:1] and len(calls_of(clean)) == 2
    assert got.response.usage.output_tokens == clean.usage.output_tokens  # generated, then lost


EMPTY = {
    "openai_chat": ("/v1/chat/completions", lambda r: r["choices"][0]["message"]["tool_calls"]),
    "openai_responses": ("/v1/responses", lambda r: r["output"]),
    "anthropic_messages": ("/v1/messages", lambda r: r["content"]),
}
SAYS_CALLED = {
    "openai_chat": lambda r: r["choices"][0]["finish_reason"] == "tool_calls",
    "openai_responses": lambda r: r["status"] == "completed",
    "anthropic_messages": lambda r: r["stop_reason"] == "tool_use",
    "google_genai": lambda r: r["candidates"][0]["content"]["parts"] == [],
}


@pytest.mark.parametrize("wire", WIRES)
async def test_a_parser_that_returns_an_empty_list(
    client: aiohttp.ClientSession, server: ReferenceServer, wire: str
) -> None:
    path, body = _body(wire, server, TWO_CALLS)
    status, text = await post(client, server, path, body, **{"x-sieval-fault": "tool-calls-empty"})
    reply = json.loads(text)
    assert status == 200 and SAYS_CALLED[wire](reply), text
    if wire in EMPTY:
        assert EMPTY[wire][1](reply) == []
    _sdk_parse(wire, text, False)


async def test_the_messages_dialect_catches_a_tool_use_stop_without_a_call(
    server: ReferenceServer,
) -> None:
    got = await call(server, "anthropic_messages", ask(user(TWO_CALLS)), "tool-calls-empty")
    assert not got.ok and "stop_reason is tool_use but the reply holds no tool_use block" in str(
        got.error
    )


async def test_each_choice_has_its_own_call_ids(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    path, body = _body("openai_chat", server, TWO_CALLS, n=2, temperature=1.0, seed=1)
    status, text = await post(client, server, path, body)
    choices = json.loads(text)["choices"]
    ids = [c["id"] for choice in choices for c in choice["message"]["tool_calls"]]
    assert status == 200 and len(ids) == 4 == len(set(ids))


ORPHANS = {  # a result whose id matches no call: vLLM forwards it unchecked on both routes
    "/v1/responses": {
        "input": [
            {"type": "message", "role": "user", "content": "Weather in Paris?"},
            {"type": "function_call_output", "call_id": "no-such-call", "output": "18 C"},
        ],
        "max_output_tokens": 40,
    },
    "/v1/messages": {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "18 C"}],
            },
        ],
        "max_tokens": 40,
    },
}


@pytest.mark.parametrize("route", sorted(ORPHANS))
async def test_a_result_for_no_call_is_accepted_as_vllm_does(
    client: aiohttp.ClientSession, server: ReferenceServer, route: str
) -> None:
    status, text = await post(client, server, route, {"model": server.model_name, **ORPHANS[route]})
    assert status == 200, text
    assert "the tool returned 18 C." in text


async def test_a_responses_function_call_item_needs_its_fields(
    client: aiohttp.ClientSession, server: ReferenceServer
) -> None:
    body = {
        "model": server.model_name,
        "input": [
            {"type": "message", "role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "c1", "name": "get_weather"},
        ],
    }
    status, text = await post(client, server, "/v1/responses", body)
    assert status == 400 and "needs call_id, name and arguments" in text
