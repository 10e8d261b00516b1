"""The requests the probe cases and the dialect tests share: prompts, tools, schemas, an image.

A probe case (``audit/cases/``) asks a live server what a dialect test asks a recorded reply of the
same server, so both build their requests from here. Where the recordings of two wires were taken
with different values (a tool's description, the image), each value is kept under a name that says
whose recordings used it: a recorded request body must stay the body the dialect lowers.
"""

from __future__ import annotations

from typing import Any

from ..ir.request import ChatInput, FunctionTool, Message, Request, Sampling, TextPart

__all__ = [
    "CALL_TEXT",
    "CAPITAL",
    "CAPITAL_ONE_WORD",
    "GREEDY_1",
    "HERMES_CALL",
    "PERSON",
    "PERSON_OPEN",
    "PERSON_TEXT",
    "PNG_1X1",
    "PNG_1X1_RED",
    "QA",
    "TOOL_PROMPT",
    "WEATHER",
    "WEATHER_CHAT",
    "WEATHER_RESPONSES",
    "chat",
    "greedy",
    "turn",
    "user",
]

CAPITAL = "What is the capital of France?"
CAPITAL_ONE_WORD = f"{CAPITAL} Answer in one word."
"""The Gemini-wire recordings' question (LiteLLM's proxy in front of vLLM)."""
QA = "Question: What is the capital of France?\nAnswer: Paris"
"""A completion prompt whose every position is scored."""
GREEDY_1 = Sampling(temperature=0.0, max_tokens=1)
"""One greedy token: what a scoring request generates."""

CALL_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
"""A call a tiny model copies whole when asked, so a forced tool call completes."""
HERMES_CALL = f"<tool_call>\n{CALL_TEXT}\n</tool_call>"
"""The call as vLLM's hermes tool parser reads it from the text."""
TOOL_PROMPT = f"Repeat exactly: {HERMES_CALL}"
"""A tiny model loops inside free-form tool arguments; asked to repeat a call it completes one."""
PERSON_TEXT = '{"name": "Bob", "adult": true}'

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "enum": ["Ann", "Bob", "Eve"]},
        "adult": {"type": "boolean"},
    },
    "required": ["name", "adult"],
    "additionalProperties": False,
}
"""A closed JSON schema: three names, one boolean, nothing else."""
PERSON_OPEN: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "adult": {"type": "boolean"}},
    "required": ["name", "adult"],
}
"""The schema of the Gemini-wire recordings: any name, other keys allowed."""

PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
"""A 1x1 half-transparent green RGBA PNG (base64): the OpenAI chat and Responses recordings."""
PNG_1X1_RED = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 opaque red RGBA PNG (base64): the Anthropic and Gemini-wire recordings."""

_CITY: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
WEATHER = FunctionTool(
    name="get_weather", description="Get the current weather for a city.", parameters=_CITY
)
"""The tool of the Anthropic and Gemini-wire recordings."""
WEATHER_CHAT = FunctionTool(name="get_weather", description="Weather for a city", parameters=_CITY)
"""The tool of the OpenAI chat recordings."""
WEATHER_RESPONSES = FunctionTool(
    name="get_weather",
    description="Get the weather for a city",
    parameters={**_CITY, "additionalProperties": False},
)
"""The tool of the OpenAI Responses recordings (a closed schema, as strict tools need)."""


def turn(role: str, *parts: Any, **extra: Any) -> Message:
    """A message of ``role``; each part a ``TextPart`` when given as a string."""
    content = tuple(TextPart(text=p) if isinstance(p, str) else p for p in parts)
    return Message(role=role, content=content, **extra)  # type: ignore[arg-type]


def user(text: str) -> Message:
    return Message(role="user", content=(TextPart(text=text),))


def chat(*messages: Message, **groups: Any) -> Request:
    """A chat request of these messages; ``groups`` are the request's other fields."""
    return Request(input=ChatInput(messages=messages), **groups)


def greedy(max_tokens: int) -> Sampling:
    return Sampling(temperature=0.0, max_tokens=max_tokens)
