"""Live probe cases for openai_chat (``sieval probe --dialect openai_chat``).

Each claim of ``docs/evidence/openai_chat.md`` is one case: a reply that passes every check (with
a one-line finding), a refusal before I/O, a server rejection in the server's words, or a reply
the dialect does not believe. The prompts lean on Gemma 3 270M copying its input, so its forced
call and its JSON complete; every check holds for any model.
"""

from __future__ import annotations

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
from ...ir.response import Choice, Response
from ...model import Call
from ..corpus import (
    CALL_TEXT,
    CAPITAL,
    PERSON,
    PERSON_TEXT,
    PNG_1X1,
    WEATHER_CHAT,
    chat,
    greedy,
    user,
)
from ..probe import ProbeCase

__all__ = ["CASES"]

FORCED = Tools(functions=(WEATHER_CHAT,), choice="required")


def _spelled(c: Choice) -> bool:
    """Every token sits where it claims in the text, and the last one ends it (or runs past)."""
    if not isinstance(c.tokens, tuple):
        return False
    for t in c.tokens:
        at = t.offset
        if not isinstance(at, int) or not (c.text.startswith(t.text, at) or t.text.startswith("<")):
            return False
    return True


def _plain(calls: list[Call]) -> str:
    r = calls[0].result()
    c = r.choices[0]
    assert c.text and isinstance(c.finish_reason, str)
    assert isinstance(r.usage.input_tokens, int) and isinstance(r.usage.output_tokens, int)
    return (
        f"{c.text[:40]!r} ({c.finish_reason}); usage {r.usage.input_tokens}+{r.usage.output_tokens}"
    )


def _seed(calls: list[Call]) -> str:
    a, b, c = (call.result().choices[0].text for call in calls)
    assert a == b, (a, b)
    assert a != c, (a, c)
    return f"seed 11 twice: {a!r} == {b!r}; seed 12: {c!r}"


def _sorted_top(r: Response, k: int) -> None:
    for c in r.choices:
        assert _spelled(c), [t.text for t in c.tokens or ()]
        for t in c.tokens or ():
            assert isinstance(t.top, tuple) and len(t.top) == k
            lps = [e.logprob for e in t.top]
            assert lps == sorted(lps, reverse=True)
            rank = t.scored_rank
            assert isinstance(rank, int) and isinstance(t.logprob, float)
            assert t.top[rank].logprob == t.logprob if rank >= 0 else t.logprob <= lps[-1]


def _n2(calls: list[Call]) -> str:
    r = calls[0].result()
    assert len(r.choices) == 2
    _sorted_top(r, 2)
    counted = sum(len(c.tokens or ()) for c in r.choices)
    assert counted == r.usage.output_tokens
    return f"2 choices with their own tokens ({counted} = usage.completion_tokens), top-2 sorted"


def _top3(calls: list[Call]) -> str:
    assert calls[0].body is not None and calls[0].body["top_logprobs"] == 4
    r = calls[0].result()
    _sorted_top(r, 3)
    tokens = r.choices[0].tokens or ()
    outside = sum(1 for t in tokens if t.scored_rank == -1)
    return (
        f"asked 4, kept the 3 best of each of {len(tokens)} lists; sampled outside top-3: {outside}"
    )


def _bytes(calls: list[Call]) -> str:
    c = calls[0].result().choices[0]
    assert _spelled(c) and isinstance(c.tokens, tuple)
    empty = sum(1 for t in c.tokens if t.text == "")
    return f"{len(c.tokens)} tokens spell {c.text!r}; {empty} byte-fallback halves read ''"


def _json(calls: list[Call]) -> str:
    value = calls[0].result().choices[0].structured_output
    data = getattr(value, "value", None)
    assert isinstance(data, dict) and data.get("name") in ("Ann", "Bob", "Eve"), data
    assert isinstance(data.get("adult"), bool), data
    return f"parsed {data}"


def _tool(calls: list[Call]) -> str:
    c = calls[0].result().choices[0]
    assert isinstance(c.tool_calls, tuple) and len(c.tool_calls) == 1
    call = c.tool_calls[0]
    assert call.name == "get_weather" and isinstance(call.arguments.get("city"), str)
    return f"{call.name}({call.arguments}) id {call.call_id[:24]}; finish {c.finish_reason}"


def _follow_up(calls: list[Call]) -> str:
    c = calls[0].result().choices[0]
    assert c.text and c.tool_calls is UNSET
    return f"answered {c.text[:40]!r}"


def _stream(calls: list[Call]) -> str:
    plain, streamed = (call.result() for call in calls)
    assert plain.choices == streamed.choices, (plain.choices, streamed.choices)
    assert plain.usage == streamed.usage
    return f"same text {plain.choices[0].text[:30]!r}, tokens, top-2 and usage streamed or not"


def _reasoning(calls: list[Call]) -> str:
    r = calls[0].result()
    assert {d.leaf: d.path for d in calls[0].ledger}["reasoning.effort"] == "reasoning_effort"
    assert r.choices[0].reasoning is UNSET and r.usage.reasoning_tokens is UNSET
    return "reasoning_effort sent; no reasoning text, reasoning_tokens not reported (not 0)"


TOP2 = Scoring(sampled_logprobs=True, sampled_top_k=2)
TOOL_TURNS = (
    user(CALL_TEXT),
    Message(
        role="assistant",
        content=(ToolCallPart(call_id="call_1", name="get_weather", arguments={"city": "Paris"}),),
    ),
    Message(role="tool", content=(ToolResultPart(call_id="call_1", result={"temperature_c": 18}),)),
)
HI = user("Hi")

CASES: list[ProbeCase] = [
    ProbeCase("plain chat, greedy", "ok", (chat(user(CAPITAL), sampling=greedy(8)),), _plain),
    ProbeCase(
        "system, user, assistant, user",
        "ok",
        (
            chat(
                Message(role="system", content=(TextPart(text="Answer in one word."),)),
                HI,
                Message(role="assistant", content=(TextPart(text="Hello! How can I help?"),)),
                user(CAPITAL),
                sampling=greedy(8),
            ),
        ),
        _plain,
    ),
    ProbeCase(
        "seed repeat at temperature 1",
        "ok",
        tuple(
            chat(user("Tell me a story."), sampling=Sampling(temperature=1.0, seed=s, max_tokens=8))
            for s in (11, 11, 12)
        ),
        _seed,
    ),
    ProbeCase(
        "n = 2 with per-choice top-2",
        "ok",
        (
            chat(
                user("Tell me a story."),
                sampling=Sampling(n=2, temperature=1.0, seed=7, max_tokens=6),
                scoring=TOP2,
            ),
        ),
        _n2,
    ),
    ProbeCase(
        "sampled top-3 exact from a sampled-first list",
        "ok",
        (
            chat(
                user("Tell me a story."),
                sampling=Sampling(temperature=1.0, seed=7, max_tokens=6),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
            ),
        ),
        _top3,
    ),
    ProbeCase(
        "tokens spell a byte-fallback text",
        "ok",
        (chat(user("𝔘𝔫𝔦 ꙮ 𐍈"), sampling=greedy(10), scoring=Scoring(sampled_logprobs=True)),),
        _bytes,
    ),
    ProbeCase(
        "JSON schema output parses",
        "ok",
        (
            chat(
                user(PERSON_TEXT),
                sampling=greedy(60),
                structured_output=StructuredOutput(
                    format="json_schema", schema=PERSON, name="person", strict=True
                ),
            ),
        ),
        _json,
    ),
    ProbeCase(
        "JSON cut at max_tokens is not believed",
        "ContractViolation",
        (
            chat(
                user(PERSON_TEXT),
                sampling=greedy(3),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
    ),
    ProbeCase(
        "forced tool call (tool_choice required)",
        "ok",
        (chat(user(CALL_TEXT), sampling=greedy(40), tools=FORCED),),
        _tool,
    ),
    ProbeCase(
        "forced call cut at max_tokens is not believed",
        "ContractViolation",
        (chat(user(CALL_TEXT), sampling=greedy(3), tools=FORCED),),
    ),
    ProbeCase(
        "tool result turn",
        "ok",
        (chat(*TOOL_TURNS, sampling=greedy(12), tools=Tools(functions=(WEATHER_CHAT,))),),
        _follow_up,
    ),
    ProbeCase(
        "stream and non-stream give the same Response",
        "ok",
        (
            chat(user(CAPITAL), sampling=greedy(8), scoring=TOP2),
            chat(
                user(CAPITAL),
                sampling=greedy(8),
                scoring=TOP2,
                scheduling=Scheduling(stream=True),
            ),
        ),
        _stream,
    ),
    ProbeCase(
        "reasoning effort without a reasoning parser",
        "ok",
        (chat(user(CAPITAL), sampling=greedy(8), reasoning=Reasoning(effort="low")),),
        _reasoning,
    ),
    ProbeCase(
        "image part on a text-only model",
        "ServerRejected",
        (
            chat(
                Message(
                    role="user",
                    content=(
                        TextPart(text="What is this?"),
                        ImagePart(data=PNG_1X1, media_type="image/png", detail="low"),
                    ),
                ),
                sampling=Sampling(max_tokens=4),
            ),
        ),
    ),
    ProbeCase(
        "context overflow", "ServerRejected", (chat(user("hello " * 4200), sampling=greedy(4)),)
    ),
    ProbeCase("top_k", "Refused", (chat(HI, sampling=Sampling(top_k=5)),)),
    ProbeCase("input scoring", "Refused", (chat(HI, scoring=Scoring(input_logprobs=True)),)),
    ProbeCase("token ids", "Refused", (chat(HI, scoring=Scoring(token_ids=True)),)),
    ProbeCase(
        "top-k 20 (k + 1 > OpenAI's 20)",
        "Refused",
        (chat(HI, scoring=Scoring(sampled_logprobs=True, sampled_top_k=20)),),
    ),
    ProbeCase("reasoning budget", "Refused", (chat(HI, reasoning=Reasoning(budget_tokens=64)),)),
    ProbeCase("reasoning summary", "Refused", (chat(HI, reasoning=Reasoning(summary="auto")),)),
    ProbeCase("completion input", "Refused", (Request.completion(CAPITAL),)),
    ProbeCase("vLLM option min_p", "Refused", (chat(HI, options={"min_p": 0.1}),)),
    ProbeCase(
        "tool result with an error flag",
        "Refused",
        (
            chat(
                *TOOL_TURNS[:2],
                Message(
                    role="tool",
                    content=(ToolResultPart(call_id="call_1", result="down", is_error=True),),
                ),
            ),
        ),
    ),
]
