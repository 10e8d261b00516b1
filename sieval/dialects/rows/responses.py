"""The Responses wire's rows: input items (messages, ``function_call``, ``function_call_output``
with ``store: false`` on the first), ``text.format`` and flat function tools (wire reference 3).
"""

from __future__ import annotations

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
from ..parts import Append, Slot, conversation
from ..vocabulary import Evidence, GroupInput, NoOp, Outcome, Refuse, Write

__all__ = ["CONVERSATION", "input_items", "structured", "tools"]

_MEDIA = ("user", "system", "developer")


def _place(index: int, message: Message) -> Slot | Refuse:
    if not message.content:
        return Refuse("an input item needs content; drop the empty message or give it text")
    if all(isinstance(p, ToolCallPart | ToolResultPart) for p in message.content):
        return Slot(None, content="input")  # each call / result is an input item of its own
    if message.role == "tool":
        return Refuse("a tool message carries only tool results here; put its text elsewhere")
    if message.role == "assistant":
        fields = {"type": "message", "role": "assistant", "id": f"msg_{index}"}
        return Slot("input", {**fields, "status": "completed"})
    return Slot("input", {"type": "message", "role": message.role})


def _text(part: TextPart, message: Message) -> Append | Refuse:
    if message.role != "assistant":
        return Append({"type": "input_text", "text": part.text})
    first = next(p for p in message.content if isinstance(p, TextPart))
    if first is not part:  # vLLM reads only content[0] of an assistant output message
        return Refuse("vLLM keeps only the first output_text of an assistant item; join the texts")
    return Append({"type": "output_text", "text": part.text, "annotations": []})


def _image(part: ImagePart, message: Message) -> Append | Refuse:
    if message.role not in _MEDIA:
        return Refuse(f"a {message.role} message has no input_image parts; send images as the user")
    detail = part.detail if part.detail is not UNSET else "auto"  # the wire requires a detail
    if part.url is not UNSET:
        value = {"type": "input_image", "image_url": part.url, "detail": detail}
        return Append(value, fields={"url": "image_url", "detail": "detail"})
    if part.media_type is UNSET:
        return Refuse("a base64 image needs media_type for its data: URI; set it")
    url = f"data:{part.media_type};base64,{part.data}"
    return Append(
        {"type": "input_image", "image_url": url, "detail": detail},
        fields={"data": "image_url", "media_type": "image_url", "detail": "detail"},
    )


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _tool_call(part: ToolCallPart, message: Message) -> Append | Refuse:
    if message.role != "assistant":
        return Refuse("only an assistant message makes tool calls")
    value = {
        "type": "function_call",
        "call_id": part.call_id,
        "name": part.name,
        "arguments": _json_text(part.arguments),
    }
    return Append(value, target="input")


def _tool_result(part: ToolResultPart, message: Message) -> Append | Refuse:
    if message.role not in ("tool", "user"):
        return Refuse("a tool result comes from a tool or user message")
    if not all(isinstance(p, ToolResultPart) for p in message.content):
        return Refuse("a function_call_output is an item of its own: give tool results a message")
    output = _json_text(part.result)
    value = {"type": "function_call_output", "call_id": part.call_id, "output": output}
    no_flag = Refuse("function_call_output has no error flag; say so in the result text")
    return Append(value, target="input", fields={"is_error": no_flag})


CONVERSATION = conversation(
    _place,
    {"text": _text, "image": _image, "tool_call": _tool_call, "tool_result": _tool_result},
    keys=("input", "store"),
    doc="input items (messages, function_call, function_call_output); store: false",
)


def input_items(group: GroupInput) -> dict[str, Outcome]:
    """The conversation's items, ``store: false`` with the first."""
    out = dict(CONVERSATION.fn(group))
    first = next((k for k, o in out.items() if isinstance(o, Write)), None)
    if first is not None:
        write = out[first]
        assert isinstance(write, Write)
        out[first] = Write(write.path, write.value, also={"store": False})
    return out


def structured(group: GroupInput) -> dict[str, Outcome]:
    """``text.format``: the schema directly in the format, with a name the wire requires."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    schema = o.format == "json_schema"
    if o.format == "json_object":
        out["structured_output.format"] = Write("text.format", {"type": "json_object"})
    elif schema:
        fmt: dict[str, Any] = {"type": "json_schema", "name": "output", "schema": o.schema}
        if o.name is not UNSET:
            fmt["name"] = o.name
            out["structured_output.name"] = Evidence("text.format.name")
        if o.strict is True:
            fmt["strict"] = True
        out["structured_output.format"] = Write("text.format", fmt)
        out["structured_output.schema"] = Evidence("text.format.schema")
    if o.name is not UNSET and not schema:
        out["structured_output.name"] = NoOp("only a json_schema format has a name")
    if o.strict is False:
        out["structured_output.strict"] = Refuse(
            "vLLM's structured decoding is always strict; drop strict=false"
        )
    elif o.strict is True:
        out["structured_output.strict"] = (
            Evidence("text.format.strict") if schema else NoOp("json_object has no schema")
        )
    return out


def tools(group: GroupInput) -> dict[str, Outcome]:
    """Flat function tools, each ``strict: true``; ``tool_choice``; ``parallel_tool_calls``."""
    t: Tools = group.value
    out: dict[str, Outcome] = {}
    if t.functions:
        tools = []
        for i, f in enumerate(t.functions):
            tool: dict[str, Any] = {"type": "function", "name": f.name}
            if f.description is not UNSET:
                tool["description"] = f.description
                out[f"tools.functions[{i}].description"] = Evidence(f"tools[{i}].description")
            tools.append({**tool, "parameters": f.parameters, "strict": True})
        out["tools.functions"] = Write("tools", tools)
    if t.choice is not UNSET:
        out["tools.choice"] = Write("tool_choice", t.choice)
    if t.parallel is not UNSET:
        out["tools.parallel"] = Write("parallel_tool_calls", t.parallel)
    return out
