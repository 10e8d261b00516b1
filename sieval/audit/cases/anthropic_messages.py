"""Live probe cases for anthropic_messages (``sieval probe --dialect anthropic_messages``).

Each claim of ``docs/evidence/anthropic_messages.md`` is one case: a reply that must pass every
check (with a finding in one line), a refusal before I/O, or the server's own rejection. The
cases hold on the reference server and on vLLM 0.32.0 (``--enable-auto-tool-choice
--tool-call-parser hermes``, no ``--reasoning-parser``); the prompts are short and the answers of
a tiny model poor: the wire is what is proven.
"""

from __future__ import annotations

from ...ir.request import (
    ImagePart,
    Reasoning,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ...ir.response import Response
from ...model import Call
from .. import corpus
from ..corpus import PERSON, PNG_1X1_RED, TOOL_PROMPT, WEATHER, chat, turn
from ..probe import ProbeCase

__all__ = ["CASES"]

GREEDY_8 = Sampling(temperature=0.0, max_tokens=8)
CAPITAL = turn("user", corpus.CAPITAL)


def _responses(calls: list[Call]) -> list[Response]:
    return [c.result() for c in calls]


def _summary(r: Response) -> str:
    c = r.choices[0]
    return (
        f"stop_reason {c.finish_reason}, {r.usage.input_tokens} in / {r.usage.output_tokens} out, "
        f"text {c.text[:40]!r}"
    )


def _plain(calls: list[Call]) -> str:
    (r,) = _responses(calls)
    assert r.choices[0].finish_reason in ("end_turn", "max_tokens"), r.choices[0].finish_reason
    assert isinstance(r.usage.input_tokens, int) and isinstance(r.usage.output_tokens, int)
    return _summary(r)


def _system(calls: list[Call]) -> str:
    ledger = {d.leaf: d.path for d in calls[0].ledger}
    assert ledger["input.chat.messages[0]"] == "system", ledger
    assert calls[0].body is not None and calls[0].body["system"][0]["type"] == "text"
    return "system text sent as system[0]; " + _summary(_responses(calls)[0])


def _sampling(calls: list[Call]) -> str:
    ledger = {d.leaf: d.path for d in calls[0].ledger}
    for leaf, path in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k")):
        assert ledger[f"sampling.{leaf}"] == path, ledger
    return "temperature, top_p, top_k consumed; " + _summary(_responses(calls)[0])


def _stop(calls: list[Call]) -> str:
    (r,) = _responses(calls)
    c = r.choices[0]
    assert c.finish_reason == "stop_sequence", c.finish_reason
    assert c.stop_reason in ("3", ":"), c.stop_reason
    return f"stop_sequence {c.stop_reason!r} matched; text {c.text!r}"


def _max_tokens(calls: list[Call]) -> str:
    (r,) = _responses(calls)
    assert r.choices[0].finish_reason == "max_tokens" and r.usage.output_tokens == 2, _summary(r)
    return "stop_reason max_tokens after exactly 2 output tokens"


def _json(calls: list[Call]) -> str:
    (r,) = _responses(calls)
    value = getattr(r.choices[0].structured_output, "value", None)
    assert isinstance(value, dict) and value.get("name") in ("Ann", "Bob", "Eve"), value
    return f"parsed {value}"


def _tool(calls: list[Call]) -> str:
    (r,) = _responses(calls)
    c = r.choices[0]
    assert isinstance(c.tool_calls, tuple) and len(c.tool_calls) == 1, c
    call = c.tool_calls[0]
    assert call.name == "get_weather" and isinstance(call.arguments, dict)
    assert c.finish_reason == "tool_use", c.finish_reason
    return f"stop_reason tool_use, {call.name}({call.arguments}), id {call.call_id[:14]}…"


def _stream(calls: list[Call]) -> str:
    plain, streamed = _responses(calls)
    assert plain.choices == streamed.choices, (plain.choices, streamed.choices)
    assert plain.usage == streamed.usage, (plain.usage, streamed.usage)
    return "the folded stream equals the non-stream reply; " + _summary(streamed)


def _tool_stream(calls: list[Call]) -> str:
    (r,) = _responses(calls)
    c = r.choices[0]
    assert isinstance(c.tool_calls, tuple) and len(c.tool_calls) == 1, c
    assert isinstance(c.tool_calls[0].arguments, dict)
    return f"input_json deltas assembled: {c.tool_calls[0].arguments}"


CASES: list[ProbeCase] = [
    ProbeCase("plain user turn", "ok", (chat(CAPITAL, sampling=GREEDY_8),), _plain),
    ProbeCase(
        "system prompt + user",
        "ok",
        (chat(turn("system", "Answer in one word."), CAPITAL, sampling=GREEDY_8),),
        _system,
    ),
    ProbeCase(
        "multi-turn",
        "ok",
        (
            chat(
                turn("user", "My name is Ann."),
                turn("assistant", "Hello Ann."),
                turn("user", "What is my name?"),
                sampling=GREEDY_8,
            ),
        ),
        _plain,
    ),
    ProbeCase(
        "temperature + top_p + top_k",
        "ok",
        (
            chat(
                turn("user", "Tell me a story about a dragon."),
                sampling=Sampling(temperature=0.7, top_p=0.9, top_k=40, max_tokens=8),
            ),
        ),
        _sampling,
    ),
    ProbeCase(
        "stop_sequences that match",
        "ok",
        (
            chat(
                turn("user", "Continue the list: 1, 2, 3, 4, 5,"),
                sampling=Sampling(temperature=0.0, max_tokens=30, stop=("3", ":")),
            ),
        ),
        _stop,
    ),
    ProbeCase(
        "max_tokens reached",
        "ok",
        (
            chat(
                turn("user", "Tell me a story about a dragon."),
                sampling=Sampling(temperature=0.0, max_tokens=2),
            ),
        ),
        _max_tokens,
    ),
    ProbeCase(
        "JSON schema via output_config.format",
        "ok",
        (
            chat(
                turn("user", 'Return this JSON: {"name": "Ann", "adult": true}'),
                sampling=Sampling(temperature=0.0, max_tokens=40),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
        _json,
    ),
    ProbeCase(
        "forced tool call (tool_choice any)",
        "ok",
        (
            chat(
                turn("user", TOOL_PROMPT),
                sampling=Sampling(temperature=0.0, max_tokens=60),
                tools=Tools(functions=(WEATHER,), choice="required"),
            ),
        ),
        _tool,
    ),
    ProbeCase(
        "tool_result follow-up",
        "ok",
        (
            chat(
                turn("user", "What is the weather in Paris?"),
                turn(
                    "assistant",
                    ToolCallPart(
                        call_id="toolu_1", name="get_weather", arguments={"city": "Paris"}
                    ),
                ),
                turn("tool", ToolResultPart(call_id="toolu_1", result="22 C, sunny")),
                sampling=Sampling(temperature=0.0, max_tokens=12),
                tools=Tools(functions=(WEATHER,)),
            ),
        ),
        _plain,
    ),
    ProbeCase(
        "stream = non-stream",
        "ok",
        (
            chat(CAPITAL, sampling=GREEDY_8),
            chat(CAPITAL, sampling=GREEDY_8, scheduling=Scheduling(stream=True)),
        ),
        _stream,
    ),
    ProbeCase(
        "streamed forced tool call",
        "ok",
        (
            chat(
                turn("user", TOOL_PROMPT),
                sampling=Sampling(temperature=0.0, max_tokens=60),
                tools=Tools(functions=(WEATHER,), choice="required"),
                scheduling=Scheduling(stream=True),
            ),
        ),
        _tool_stream,
    ),
    ProbeCase(
        "effort low (output_config.effort)",
        "ok",
        (chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(effort="low")),),
        _plain,
    ),
    ProbeCase(
        "effort none (thinking disabled)",
        "ok",
        (chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(effort="none")),),
        _plain,
    ),
    ProbeCase(
        "thinking enabled, budget 1024 (no --reasoning-parser)",
        "ServerRejected",
        (
            chat(
                CAPITAL,
                sampling=Sampling(temperature=0.0, max_tokens=1100),
                reasoning=Reasoning(budget_tokens=1024),
            ),
        ),
    ),
    ProbeCase(
        "thinking budget not below max_tokens",
        "Refused",
        (
            chat(
                CAPITAL,
                sampling=Sampling(temperature=0.0, max_tokens=1024),
                reasoning=Reasoning(budget_tokens=1024),
            ),
        ),
    ),
    ProbeCase(
        "thinking budget 512",
        "Refused",
        (chat(CAPITAL, sampling=GREEDY_8, reasoning=Reasoning(budget_tokens=512)),),
    ),
    ProbeCase(
        "structured output cut at max_tokens",
        "ContractViolation",
        (
            chat(
                turn("user", 'Return this JSON: {"name": "Ann", "adult": true}'),
                sampling=Sampling(temperature=0.0, max_tokens=3),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
    ),
    ProbeCase(
        "image on a text-only model",
        "ServerRejected",
        (
            chat(
                turn(
                    "user",
                    "What colour is this?",
                    ImagePart(data=PNG_1X1_RED, media_type="image/png"),
                ),
                sampling=GREEDY_8,
            ),
        ),
    ),
    ProbeCase(
        "context overflow",
        "ServerRejected",
        (chat(turn("user", "hello " * 4200), sampling=Sampling(temperature=0.0, max_tokens=4)),),
    ),
    ProbeCase("max_tokens unset", "Refused", (chat(CAPITAL, sampling=Sampling(temperature=0.0)),)),
    ProbeCase("seed", "Refused", (chat(CAPITAL, sampling=Sampling(max_tokens=4, seed=1)),)),
    ProbeCase(
        "n = 2",
        "Refused",
        (chat(CAPITAL, sampling=Sampling(max_tokens=4, n=2, temperature=1.0)),),
    ),
    ProbeCase(
        "presence penalty",
        "Refused",
        (chat(CAPITAL, sampling=Sampling(max_tokens=4, presence_penalty=0.5)),),
    ),
    ProbeCase(
        "sampled logprobs",
        "Refused",
        (chat(CAPITAL, sampling=GREEDY_8, scoring=Scoring(sampled_logprobs=True)),),
    ),
    ProbeCase(
        "input scoring",
        "Refused",
        (chat(CAPITAL, sampling=GREEDY_8, scoring=Scoring(input_logprobs=True)),),
    ),
    ProbeCase(
        "temperature 1.5",
        "Refused",
        (chat(CAPITAL, sampling=Sampling(max_tokens=4, temperature=1.5)),),
    ),
    ProbeCase(
        "json_object",
        "Refused",
        (
            chat(
                CAPITAL,
                sampling=GREEDY_8,
                structured_output=StructuredOutput(format="json_object"),
            ),
        ),
    ),
    ProbeCase(
        "assistant prefill",
        "Refused",
        (chat(CAPITAL, turn("assistant", "The capital is"), sampling=GREEDY_8),),
    ),
    ProbeCase(
        "five stop_sequences",
        "Refused",
        (chat(CAPITAL, sampling=Sampling(max_tokens=4, stop=("a", "b", "c", "d", "e"))),),
    ),
]
