"""Live probe cases for google_genai (``sieval probe --dialect google_genai``).

Each case is a claim about Google's ``generateContent`` wire, checked against the server the probe
is pointed at: the reference server speaks the whole wire, so every case holds there. On LiteLLM's
proxy (the real Gemini-wire server of ``docs/evidence/google_genai.md``) the cases whose field the
proxy drops have their own expected outcome, listed in ``PROXY_OUTCOMES``: a requested channel that
does not come back is a ContractViolation, a claim that needs a dropped field fails, and a field the
reference refuses to honour is accepted there because it never reaches the model.
"""

from __future__ import annotations

from ...ir.request import (
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
from ...model import Call
from ..corpus import CAPITAL_ONE_WORD, PERSON, QA, WEATHER
from ..probe import ProbeCase

__all__ = ["CASES", "PROXY_OUTCOMES", "chat"]

STORY = "Tell me a story about a dragon."
GREEDY = Sampling(temperature=0.0, top_p=1.0, max_tokens=8)
GREEDY_12 = Sampling(temperature=0.0, top_p=1.0, max_tokens=12)


def chat(*turns: str, system: str | None = None) -> ChatInput:
    """User and model turns in turn, starting with the user; an optional system message first."""
    messages = [Message(role="system", content=(TextPart(text=system),))] if system else []
    for i, text in enumerate(turns):
        content = (TextPart(text=text),)
        messages.append(
            Message(role="user", content=content)
            if i % 2 == 0
            else Message(role="assistant", content=content)
        )
    return ChatInput(messages=tuple(messages))


def _plain(calls: list[Call]) -> str:
    r = calls[0].result()
    c = r.choices[0]
    assert c.text and c.finish_reason in ("STOP", "MAX_TOKENS"), c
    assert isinstance(r.usage.input_tokens, int) and isinstance(r.usage.output_tokens, int)
    assert 0 < r.usage.output_tokens <= 8, r.usage
    return f"{c.text!r}, {c.finish_reason}, usage {r.usage.input_tokens} + {r.usage.output_tokens}"


def _system(calls: list[Call]) -> str:
    r = calls[0].result()
    ledger = {d.leaf: d.detail for d in calls[0].ledger}
    assert ledger["input.chat.messages[0].content[0].text"] == "systemInstruction.parts[0]"
    assert ledger["input.chat.messages[2]"] == "contents[1]"
    assert r.choices[0].text
    return f"systemInstruction + 3 turns (model turn as role model); text {r.choices[0].text!r}"


def _stream_equals_plain(calls: list[Call]) -> str:
    plain, streamed = (call.result() for call in calls)
    assert plain.choices[0].text == streamed.choices[0].text
    assert plain.choices[0].finish_reason == streamed.choices[0].finish_reason
    assert plain.usage == streamed.usage
    return f"same text {plain.choices[0].text!r}, finish and usage, streamed or not"


def _json(calls: list[Call]) -> str:
    value = calls[0].result().choices[0].structured_output
    data = getattr(value, "value", None)
    assert isinstance(data, dict) and data.get("name") in ("Ann", "Bob", "Eve"), data
    return f"parsed {data}"


def _json_object(calls: list[Call]) -> str:
    value = getattr(calls[0].result().choices[0].structured_output, "value", None)
    assert isinstance(value, dict), value
    return f"parsed an object with keys {sorted(value)}"


def _stop(calls: list[Call]) -> str:
    c = calls[0].result().choices[0]
    assert "," not in c.text and c.finish_reason == "STOP", c
    return f"{c.text!r} ends before the stop string, finish STOP"


def _logprobs(calls: list[Call]) -> str:
    r = calls[0].result()
    tokens = r.choices[0].tokens
    assert isinstance(tokens, tuple) and tokens
    assert all(isinstance(t.top, tuple) and len(t.top) == 3 for t in tokens)
    assert "".join(t.text for t in tokens) == r.choices[0].text
    return f"{len(tokens)} steps = usage.output_tokens, top-3 each, tokens rebuild the text"


def _ids(calls: list[Call]) -> str:
    c = calls[0].result().choices[0]
    assert isinstance(c.token_ids, tuple) and c.token_ids, c
    return f"{len(c.token_ids)} token ids from chosenCandidates[].tokenId"


def _n2(calls: list[Call]) -> str:
    choices = calls[0].result().choices
    assert [c.index for c in choices] == [0, 1], choices
    return f"2 candidates; texts differ: {choices[0].text != choices[1].text}"


def _seed(calls: list[Call]) -> str:
    a, b, c = (call.result().choices[0].text for call in calls)
    assert a == b, (a, b)
    assert a != c, (a, c)
    return f"seed 7 twice: {a!r} == {b!r}; seed 8: {c!r}"


def _top_k(calls: list[Call]) -> str:
    greedy, top1 = (call.result().choices[0].text for call in calls)
    assert greedy == top1, (greedy, top1)
    return f"topK 1 at temperature 1 gives the greedy text {greedy!r}"


def _forced_call(calls: list[Call]) -> str:
    c = calls[0].result().choices[0]
    assert isinstance(c.tool_calls, tuple) and c.tool_calls[0].name == "get_weather", c
    return f"functionCall {c.tool_calls[0].name}({c.tool_calls[0].arguments})"


def _history(calls: list[Call]) -> str:
    r = calls[0].result()
    ledger = {d.leaf: d.detail for d in calls[0].ledger}
    assert ledger["input.chat.messages[1].content[0].tool_call"] == "contents[1].parts[0]"
    assert ledger["input.chat.messages[2].content[0].tool_result"] == "contents[2].parts[0]"
    return f"functionCall + functionResponse turns accepted; text {r.choices[0].text!r}"


HISTORY = ChatInput(
    messages=(
        Message(role="user", content=(TextPart(text="What is the weather in Paris?"),)),
        Message(
            role="assistant",
            content=(ToolCallPart(call_id="c1", name="get_weather", arguments={"city": "Paris"}),),
        ),
        Message(
            role="tool",
            content=(ToolResultPart(call_id="c1", result={"temperature_c": 18, "sky": "sunny"}),),
        ),
    )
)

TOP_1 = Sampling(temperature=1.0, top_p=1.0, top_k=1, max_tokens=12)
SEEDED = [
    Request(input=chat(STORY), sampling=Sampling(temperature=1.0, top_p=1.0, max_tokens=12, seed=s))
    for s in (7, 7, 8)
]

CASES: list[ProbeCase] = [
    ProbeCase(
        "chat turn, greedy", "ok", (Request(input=chat(CAPITAL_ONE_WORD), sampling=GREEDY),), _plain
    ),
    ProbeCase(
        "system instruction and a model turn",
        "ok",
        (
            Request(
                input=chat(
                    "My name is Ann.",
                    "Hello Ann! How can I help you?",
                    "What is my name?",
                    system="Answer briefly.",
                ),
                sampling=GREEDY,
            ),
        ),
        _system,
    ),
    ProbeCase(
        "stream and non-stream give the same Response",
        "ok",
        (
            Request(input=chat(CAPITAL_ONE_WORD), sampling=GREEDY),
            Request(
                input=chat(CAPITAL_ONE_WORD), sampling=GREEDY, scheduling=Scheduling(stream=True)
            ),
        ),
        _stream_equals_plain,
    ),
    ProbeCase(
        "stop sequence",
        "ok",
        (
            Request(
                input=chat("Continue the list: 1, 2, 3, 4, 5,"),
                sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=30, stop=(",",)),
            ),
        ),
        _stop,
    ),
    ProbeCase(
        "JSON schema output",
        "ok",
        (
            Request(
                input=chat('Return this JSON: {"name": "Ann", "adult": true}'),
                sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=40),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
        _json,
    ),
    ProbeCase(
        "function call and its response in the history",
        "ok",
        (
            Request(
                input=HISTORY,
                sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=12),
                tools=Tools(functions=(WEATHER,)),
            ),
        ),
        _history,
    ),
    ProbeCase(
        "JSON object output (MIME type, no schema)",
        "ok",
        (
            Request(
                input=chat('Return this JSON: {"name": "Ann", "adult": true}'),
                sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=40),
                structured_output=StructuredOutput(format="json_object"),
            ),
        ),
        _json_object,
    ),
    ProbeCase(
        "sampled logprobs with top-3",
        "ok",
        (
            Request(
                input=chat(CAPITAL_ONE_WORD),
                sampling=GREEDY,
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=3),
            ),
        ),
        _logprobs,
    ),
    ProbeCase(
        "token ids",
        "ok",
        (Request(input=chat(CAPITAL_ONE_WORD), sampling=GREEDY, scoring=Scoring(token_ids=True)),),
        _ids,
    ),
    ProbeCase(
        "candidateCount 2",
        "ok",
        (
            Request(
                input=chat(STORY),
                sampling=Sampling(temperature=1.0, top_p=1.0, max_tokens=8, n=2, seed=3),
            ),
        ),
        _n2,
    ),
    ProbeCase("seed repeat at temperature 1", "ok", tuple(SEEDED), _seed),
    ProbeCase(
        "topK 1 at temperature 1 is greedy",
        "ok",
        (
            Request(input=chat(STORY), sampling=GREEDY_12),
            Request(input=chat(STORY), sampling=TOP_1),
        ),
        _top_k,
    ),
    ProbeCase(
        "forced function call (mode ANY)",
        "ok",
        (
            Request(
                input=chat("What is the weather in Paris?"),
                sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=40),
                tools=Tools(functions=(WEATHER,), choice="required"),
            ),
        ),
        _forced_call,
    ),
    ProbeCase(
        "thinking budget on a model that does not think",
        "ServerRejected",
        (
            Request(
                input=chat(CAPITAL_ONE_WORD), sampling=GREEDY, reasoning=Reasoning(budget_tokens=64)
            ),
        ),
    ),
    ProbeCase(
        "temperature 3 (outside Google's [0, 2])",
        "ServerRejected",
        (Request(input=chat(CAPITAL_ONE_WORD), sampling=Sampling(temperature=3.0, max_tokens=4)),),
    ),
    ProbeCase(
        "context overflow",
        "ServerRejected",
        (Request(input=chat("hello " * 4200), sampling=Sampling(temperature=0.0, max_tokens=1)),),
    ),
    ProbeCase(
        "structured output cut at max_tokens",
        "ContractViolation",
        (
            Request(
                input=chat('Return this JSON: {"name": "Ann", "adult": true}'),
                sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=3),
                structured_output=StructuredOutput(format="json_schema", schema=PERSON),
            ),
        ),
    ),
    ProbeCase("raw completion prompt", "Refused", (Request.completion(QA),)),
    ProbeCase(
        "input scoring",
        "Refused",
        (Request(input=chat(CAPITAL_ONE_WORD), scoring=Scoring(input_logprobs=True)),),
    ),
    ProbeCase(
        "top-k 21 > Google's 20",
        "Refused",
        (
            Request(
                input=chat(CAPITAL_ONE_WORD),
                scoring=Scoring(sampled_logprobs=True, sampled_top_k=21),
            ),
        ),
    ),
    ProbeCase(
        "image by URL",
        "Refused",
        (
            Request(
                input=ChatInput(
                    messages=(
                        Message(role="user", content=(ImagePart(url="https://x.test/cat.png"),)),
                    )
                )
            ),
        ),
    ),
    ProbeCase(
        "six stop sequences",
        "Refused",
        (Request(input=chat(CAPITAL_ONE_WORD), sampling=Sampling(stop=tuple("abcdef"))),),
    ),
    ProbeCase(
        "engine option", "Refused", (Request(input=chat(CAPITAL_ONE_WORD), options={"min_p": 0.1}),)
    ),
]

PROXY_OUTCOMES: dict[str, tuple[str, str]] = {
    "JSON object output (MIME type, no schema)": (
        "ContractViolation",
        "the proxy drops responseMimeType without a schema: the text is not JSON",
    ),
    "sampled logprobs with top-3": (
        "ContractViolation",
        "the proxy drops responseLogprobs/logprobs: no logprobsResult comes back",
    ),
    "token ids": ("ContractViolation", "the proxy drops responseLogprobs: no tokenId comes back"),
    "candidateCount 2": ("ContractViolation", "the proxy drops candidateCount: one candidate"),
    "seed repeat at temperature 1": (
        "claim failed",
        "the proxy drops seed: two seeded samples differ",
    ),
    "topK 1 at temperature 1 is greedy": (
        "claim failed",
        "the proxy drops topK: temperature 1 samples freely",
    ),
    "forced function call (mode ANY)": (
        "claim failed",
        "vLLM's hermes parser gets no complete call from Gemma 3 270M under tool_choice=required",
    ),
    "thinking budget on a model that does not think": (
        "ok",
        "the proxy drops thinkingConfig, so the request is answered as if it were not set",
    ),
}
"""Case -> (outcome on LiteLLM 1.108.7's proxy in front of vLLM 0.32.0, why) where it differs from
the case's ``expect`` (what Google's wire, as the reference server speaks it, gives)."""
