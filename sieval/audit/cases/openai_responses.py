"""Live probe cases for openai_responses (``sieval probe --dialect openai_responses``).

Sampled top-k made exact (k + 1 asked, sorted), stream and non-stream alike, structured output,
forced tool calls and tool history, the system item, the length finish; what OpenAI's Responses
wire cannot express is refused before I/O; the server's own limits come back as its words.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ...ir.request import (
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
from ...ir.response import StructuredValue
from ...model import Call
from ..corpus import PERSON, PNG_1X1, WEATHER_RESPONSES, chat, greedy, user
from ..probe import ProbeCase

__all__ = ["CASES"]

SCHEMA = StructuredOutput(format="json_schema", schema=PERSON, name="person", strict=True)


BOB = user("Return JSON with name Bob and adult true.")
TOP2_JSON = chat(
    BOB,
    sampling=greedy(40),
    structured_output=SCHEMA,
    scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
)
TOOL_TURNS = (
    user("What is the weather in Paris?"),
    Message(
        role="assistant",
        content=(ToolCallPart(call_id="call_1", name="get_weather", arguments={"city": "Paris"}),),
    ),
    Message(role="tool", content=(ToolResultPart(call_id="call_1", result={"sky": "clear"}),)),
)


def _top3(calls: list[Call]) -> str:
    choice = calls[0].result().choices[0]
    assert calls[0].body is not None and calls[0].body["top_logprobs"] == 4
    tokens = choice.tokens
    assert isinstance(tokens, tuple) and tokens
    for t in tokens:
        assert isinstance(t.top, tuple) and len(t.top) == 3, t
        assert [e.logprob for e in t.top] == sorted((e.logprob for e in t.top), reverse=True)
        assert isinstance(t.offset, int) and choice.text[t.offset :].startswith(t.text)
    outside = sum(1 for t in tokens if t.scored_rank == -1)
    return (
        f"{len(tokens)} positions, each an exact sorted top-3 (asked 4); the sampled token is "
        f"outside its top-3 at {outside}"
    )


def _stream_equals_plain(calls: list[Call]) -> str:
    """The fold's Response equals the non-stream one; logprobs are compared to 1e-3, since a
    shared live server's batching moves them slightly from call to call (wire reference 0.6)."""
    plain, streamed = (call.result().choices[0] for call in calls)
    assert (plain.text, plain.finish_reason) == (streamed.text, streamed.finish_reason)
    assert plain.structured_output == streamed.structured_output
    a, b = plain.tokens, streamed.tokens
    assert isinstance(a, tuple) and isinstance(b, tuple)
    assert [(t.text, t.offset) for t in a] == [(t.text, t.offset) for t in b]
    pairs = [(x.logprob, y.logprob) for x, y in zip(a, b, strict=True)]
    pairs += [
        (e.logprob, f.logprob)
        for x, y in zip(a, b, strict=True)
        for e, f in zip(x.top or (), y.top or (), strict=True)
    ]
    floats = [(p, q) for p, q in pairs if isinstance(p, float) and isinstance(q, float)]
    assert len(floats) == len(pairs)
    gap = max(abs(p - q) for p, q in floats)
    assert gap < 1e-3, gap
    assert calls[0].result().usage == calls[1].result().usage
    return f"same text, {len(a)} tokens with top-2 and usage either way; max logprob gap {gap:.1e}"


def _parsed(calls: list[Call]) -> dict[str, Any]:
    value = calls[0].result().choices[0].structured_output
    assert isinstance(value, StructuredValue) and isinstance(value.value, dict), value
    return value.value


def _person(calls: list[Call]) -> str:
    value = _parsed(calls)
    assert set(value) == {"name", "adult"}, value
    return f"parsed {value!r}"


def _json_object(calls: list[Call]) -> str:
    return f"parsed an object with keys {sorted(_parsed(calls))}"


def _tool_call(calls: list[Call]) -> str:
    choice = calls[0].result().choices[0]
    assert isinstance(choice.tool_calls, tuple) and len(choice.tool_calls) == 1
    call = choice.tool_calls[0]
    assert call.name == "get_weather" and isinstance(call.arguments.get("city"), str)
    return f"function_call {call.name}({call.arguments}), text {choice.text!r}"


def _tool_turn(calls: list[Call]) -> str:
    body = calls[0].body
    assert body is not None
    kinds = [item["type"] for item in body["input"]]
    assert kinds == ["message", "function_call", "function_call_output"], kinds
    usage = calls[0].result().usage
    return f"items {kinds} accepted; {usage.input_tokens} input tokens"


def _system_item(calls: list[Call]) -> str:
    body = calls[0].body
    assert body is not None and "instructions" not in body
    assert body["input"][0]["role"] == "system" and body["store"] is False
    return f"system text sent as input[0]; answer {calls[0].result().choices[0].text!r}"


def _length(calls: list[Call]) -> str:
    r = calls[0].result()
    assert r.choices[0].finish_reason == "max_output_tokens", r.choices[0].finish_reason
    assert r.usage.output_tokens == 2
    return "status incomplete, reason max_output_tokens after 2 tokens"


def _no_reasoning(calls: list[Call]) -> str:
    r = calls[0].result()
    assert r.choices[0].reasoning is UNSET
    assert calls[0].body is not None and calls[0].body["reasoning"] == {
        "effort": "low",
        "summary": "auto",
    }
    return f"accepted; no reasoning item; reasoning_tokens {r.usage.reasoning_tokens!r}"


CASES: list[ProbeCase] = [
    ProbeCase(
        "sampled top-3 at temperature 1",
        "ok",
        (
            chat(
                user("Name a color."),
                sampling=Sampling(temperature=1.0, max_tokens=6),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
            ),
        ),
        _top3,
    ),
    ProbeCase(
        "stream and non-stream give the same Response",
        "ok",
        (
            TOP2_JSON,
            Request(
                input=TOP2_JSON.input,
                sampling=TOP2_JSON.sampling,
                scoring=TOP2_JSON.scoring,
                structured_output=SCHEMA,
                scheduling=Scheduling(stream=True),
            ),
        ),
        _stream_equals_plain,
    ),
    ProbeCase(
        "JSON schema output",
        "ok",
        (chat(BOB, sampling=greedy(40), structured_output=SCHEMA),),
        _person,
    ),
    ProbeCase(
        "JSON object output",
        "ok",
        (
            chat(
                user('Give a JSON object with one key "color" whose value is "red".'),
                sampling=greedy(40),
                structured_output=StructuredOutput(format="json_object"),
            ),
        ),
        _json_object,
    ),
    ProbeCase(
        "required tool call",
        "ok",
        (
            chat(
                user("What is the weather in Paris?"),
                sampling=greedy(60),
                tools=Tools(functions=(WEATHER_RESPONSES,), choice="required"),
            ),
        ),
        _tool_call,
    ),
    ProbeCase(
        "tool call and result in the history",
        "ok",
        (chat(*TOOL_TURNS, sampling=greedy(8), tools=Tools(functions=(WEATHER_RESPONSES,))),),
        _tool_turn,
    ),
    ProbeCase(
        "system message as an input item",
        "ok",
        (
            chat(
                Message(role="system", content=(TextPart(text="Answer in one word."),)),
                user("What is the capital of France?"),
                sampling=greedy(8),
            ),
        ),
        _system_item,
    ),
    ProbeCase(
        "max_output_tokens reached",
        "ok",
        (chat(user("Tell me a story."), sampling=greedy(2)),),
        _length,
    ),
    ProbeCase(
        "reasoning effort and summary",
        "ok",
        (
            chat(
                user("What is 2+2?"),
                sampling=greedy(4),
                reasoning=Reasoning(effort="low", summary="auto"),
            ),
        ),
        _no_reasoning,
    ),
    ProbeCase("seed", "Refused", (chat(BOB, sampling=Sampling(seed=11)),)),
    ProbeCase("stop", "Refused", (chat(BOB, sampling=Sampling(stop=("\n",))),)),
    ProbeCase("n = 2", "Refused", (chat(BOB, sampling=Sampling(n=2, temperature=1.0)),)),
    ProbeCase("top_k", "Refused", (chat(BOB, sampling=Sampling(top_k=5)),)),
    ProbeCase("presence penalty", "Refused", (chat(BOB, sampling=Sampling(presence_penalty=0.5)),)),
    ProbeCase("input scoring", "Refused", (chat(BOB, scoring=Scoring(input_logprobs=True)),)),
    ProbeCase("token ids", "Refused", (chat(BOB, scoring=Scoring(token_ids=True)),)),
    ProbeCase("reasoning budget", "Refused", (chat(BOB, reasoning=Reasoning(budget_tokens=64)),)),
    ProbeCase(
        "top-k 20 asks 21 > OpenAI's cap of 20 (vLLM 400s at 101)",
        "Refused",
        (chat(BOB, scoring=Scoring(sampled_logprobs=True, sampled_top_k=20)),),
    ),
    ProbeCase(
        "context overflow",
        "ServerRejected",
        (chat(user("hello " * 4200), sampling=greedy(2)),),
    ),
    ProbeCase(
        "image on a text-only model",
        "ServerRejected",
        (
            chat(
                Message(
                    role="user",
                    content=(
                        TextPart(text="What is this?"),
                        ImagePart(data=PNG_1X1, media_type="image/png"),
                    ),
                ),
                sampling=Sampling(max_tokens=2),
            ),
        ),
    ),
    ProbeCase(
        "structured output cut at max_output_tokens",
        "ContractViolation",
        (chat(BOB, sampling=greedy(3), structured_output=SCHEMA),),
    ),
]
