"""The OpenAI family's rows: the sampling leaves every OpenAI-shaped route takes, and the chat
message converters, ``response_format`` and function tools (wire reference sections 1 to 3).

Used by ``openai_completions``, ``vllm_native``, ``openai_chat`` (and the Responses dialect's
top-k); vLLM 0.32.0 facts are named where they matter.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from msgspec import UNSET

from ...ir.request import (
    ImagePart,
    Message,
    StructuredOutput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ..parts import Append, PartRow, Slot
from ..vocabulary import (
    Encode,
    Evidence,
    Field,
    GroupInput,
    Leaf,
    NoOp,
    Outcome,
    Refuse,
    Row,
    Write,
    at_most,
)

__all__ = [
    "DEFAULT_SCHEMA_NAME",
    "MAX_STOP",
    "MAX_TOP_LOGPROBS",
    "PARTS",
    "SAMPLING",
    "STREAM",
    "function_tools",
    "place",
    "response_format",
    "stop",
    "top_k_plus_one",
]

# -- sampling ---------------------------------------------------------------------------------

MAX_STOP = 4
"""OpenAI and vLLM 0.32 (``VLLM_MAX_STOP_STRINGS``) both cap ``stop`` at 4 strings."""


def stop(limit: int = MAX_STOP) -> Encode:
    return at_most(
        "stop",
        limit,
        f"the wire takes at most {limit} stop strings; pass {limit} or fewer",
        f"stop, at most {limit} strings",
        items=True,
    )


def _stream(leaf: Leaf) -> Outcome:
    return Write("stream", True, also={"stream_options": {"include_usage": True}})


STREAM = Encode(
    _stream, ("stream", "stream_options"), "stream with stream_options.include_usage (usage last)"
)
"""``scheduling.stream``: SSE, with usage in the last chunk (otherwise a stream has none)."""

SAMPLING: dict[str, Row] = {
    "sampling.temperature": Field("temperature"),
    "sampling.top_p": Field("top_p"),
    "sampling.seed": Field("seed"),
    "sampling.n": Field("n"),
    "sampling.frequency_penalty": Field("frequency_penalty"),
    "sampling.presence_penalty": Field("presence_penalty"),
    "sampling.stop": stop(),
}
"""The sampling leaves every OpenAI-shaped route takes under the same names (``max_tokens`` and
``top_k`` differ by route and server, so each dialect decides them)."""


MAX_TOP_LOGPROBS = 20
"""OpenAI's cap on ``top_logprobs``, on chat and on responses (vLLM's is ``--max-logprobs``)."""


def top_k_plus_one(k: int, field: str = "top_logprobs") -> Outcome:
    """``field`` = k + 1 for a sampled top-k of k, or the refusal when that passes the cap: vLLM
    lists the sampled token first and cuts at ``field`` (wire reference 2.4, 3.5), so the k best
    of k + 1 are exact either way, and the wire serves k <= 19."""
    if k + 1 > MAX_TOP_LOGPROBS:
        return Refuse(
            f"this wire returns at most {MAX_TOP_LOGPROBS} alternatives and sieval asks for "
            f"k + 1 (vLLM lists the sampled token first and drops the k-th best), so k <= "
            f"{MAX_TOP_LOGPROBS - 1}; lower it or use vllm_native"
        )
    return Write(field, k + 1)


# -- chat messages and parts ------------------------------------------------------------------

_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DEFAULT_SCHEMA_NAME = "response"
"""``json_schema.name`` is required by OpenAI; sent when the request names no schema."""

# -- messages and parts -------------------------------------------------------------------------


def place(index: int, message: Message) -> Slot | Refuse:
    """Every role is an element of ``messages``; a tool message carries its call id."""
    if not message.content:
        return Refuse("this wire needs at least one part in every message")
    fields: dict[str, Any] = {"role": message.role}
    name: Outcome | None = None
    if message.name is not UNSET:
        if message.role == "tool":
            name = Refuse("OpenAI's tool messages take no name; drop it")
        else:
            fields["name"] = message.name
            name = Evidence(f"messages[{index}].name")
    if message.role == "tool":
        first = message.content[0]
        if len(message.content) != 1 or not isinstance(first, ToolResultPart):
            return Refuse(
                "an OpenAI tool message carries exactly one tool result; put each result in its "
                "own tool message"
            )
        fields["tool_call_id"] = first.call_id
    return Slot("messages", fields, name=name)


def _text(part: TextPart, message: Message) -> Append:
    return Append({"type": "text", "text": part.text})


def _image(part: ImagePart, message: Message) -> Append | Refuse:
    if message.role != "user":
        return Refuse("OpenAI takes image parts in user messages only")
    if isinstance(part.url, str):
        url = part.url
    elif isinstance(part.media_type, str):
        url = f"data:{part.media_type};base64,{part.data}"
    else:
        return Refuse("a base64 image needs media_type to be sent as a data URI")
    image: dict[str, Any] = {"url": url}
    if part.detail is not UNSET:
        image["detail"] = part.detail
    at = "image_url.url"
    return Append(
        {"type": "image_url", "image_url": image},
        fields={"url": at, "data": at, "media_type": at, "detail": "image_url.detail"},
    )


def _tool_call(part: ToolCallPart, message: Message) -> Append | Refuse:
    if message.role != "assistant":
        return Refuse("OpenAI takes tool calls in assistant messages only")
    arguments = msgspec.json.encode(part.arguments).decode()  # the wire wants JSON text
    function = {"name": part.name, "arguments": arguments}
    return Append(
        {"id": part.call_id, "type": "function", "function": function}, target=".tool_calls"
    )


def _tool_result(part: ToolResultPart, message: Message) -> Append | Refuse:
    if message.role != "tool":
        return Refuse("OpenAI takes tool results in tool messages only (role 'tool')")
    result = part.result
    text = result if isinstance(result, str) else msgspec.json.encode(result).decode()
    return Append(
        {"type": "text", "text": text},
        fields={
            "is_error": Refuse("OpenAI's tool messages have no error flag; say it in the result")
        },
    )


PARTS: dict[str, PartRow | Refuse] = {
    "text": _text,
    "image": _image,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
}
"""The part converters of ``parts.conversation`` for chat messages."""

# -- structured output and tools ----------------------------------------------------------------


def response_format(group: GroupInput) -> dict[str, Outcome]:
    """``response_format``: ``json_object``, or ``json_schema`` with name, schema and strict."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format == "json_object":
        out["structured_output.format"] = Write("response_format", {"type": "json_object"})
    elif o.format == "json_schema":
        name = o.name if isinstance(o.name, str) else DEFAULT_SCHEMA_NAME
        if not _SCHEMA_NAME.match(name):
            out["structured_output.name"] = Refuse(
                "OpenAI takes schema names of 1-64 letters, digits, '_' or '-'; rename it"
            )
            name = DEFAULT_SCHEMA_NAME
        elif o.name is not UNSET:
            out["structured_output.name"] = Evidence("response_format.json_schema.name")
        spec = {"name": name, "schema": o.schema}
        out["structured_output.format"] = Write(
            "response_format", {"type": "json_schema", "json_schema": spec}
        )
        out["structured_output.schema"] = Evidence("response_format.json_schema.schema")
        if o.strict is not UNSET:
            out["structured_output.strict"] = Write("response_format.json_schema.strict", o.strict)
    without = "json_object has no schema" if o.format == "json_object" else "no format is asked"
    if o.format != "json_schema":
        if o.name is not UNSET:
            out["structured_output.name"] = NoOp(f"a name labels a json_schema; {without}")
        if o.strict is not UNSET:
            out["structured_output.strict"] = NoOp(f"strict applies to a json_schema; {without}")
    return out


def function_tools(group: GroupInput) -> dict[str, Outcome]:
    """``tools[].function``, ``tool_choice`` and ``parallel_tool_calls``.

    An empty ``tools`` is a 400 on vLLM 0.32; the IR's empty tuple is not active, so it is never
    sent, and a choice without functions is decided here before I/O.
    """
    t: Tools = group.value
    out: dict[str, Outcome] = {}
    if t.functions:
        tools = []
        for f in t.functions:
            function: dict[str, Any] = {"name": f.name, "parameters": f.parameters}
            if f.description is not UNSET:
                function["description"] = f.description
            tools.append({"type": "function", "function": function})
        out["tools.functions"] = Write("tools", tools)
        described = [i for i, f in enumerate(t.functions) if f.description is not UNSET]
        if described:
            out["tools.functions.description"] = Evidence(
                f"tools[{described[0]}].function.description"
            )
    if t.choice is not UNSET:
        if t.functions:
            out["tools.choice"] = Write("tool_choice", t.choice)
        elif t.choice == "none":
            out["tools.choice"] = NoOp("no tools are offered, so no tool can be called anyway")
        else:
            out["tools.choice"] = Refuse(
                f"tool_choice={t.choice!r} needs tools.functions (vLLM answers 400 without them)"
            )
    if t.parallel is not UNSET:
        out["tools.parallel"] = (
            Write("parallel_tool_calls", t.parallel)
            if t.functions
            else NoOp("no tools are offered, so there are no calls to run in parallel")
        )
    return out
