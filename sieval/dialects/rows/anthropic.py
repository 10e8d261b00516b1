"""Anthropic's rows: the content blocks ``parts.conversation`` writes each IR part as (``text``,
``image`` with a base64 or url source, ``tool_use``, ``tool_result``), where each message goes,
and the encoders of ``anthropic_messages``' table (wire reference 4.2)."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from ...ir.request import (
    ChatInput,
    ImagePart,
    Message,
    StructuredOutput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ..parts import Append, PartRow, Slot, conversation
from ..vocabulary import Evidence, GroupInput, Leaf, NoOp, Outcome, Refuse, Write, at_least, at_most

__all__ = [
    "INSTRUCTION_ROLES",
    "MAX_STOP",
    "MAX_TOKENS",
    "MEDIA_TYPES",
    "MIN_THINKING_BUDGET",
    "PARTS",
    "STOP",
    "TOP_K",
    "budget",
    "chat",
    "effort",
    "place",
    "structured",
    "summary",
    "temperature",
    "tools",
]

MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The media types of Anthropic's base64 image source."""

INSTRUCTION_ROLES = ("system", "developer")
"""The roles whose text goes to the top-level ``system`` blocks."""


def place(index: int, message: Message) -> Slot | Refuse:
    """Where a message goes: instructions to ``system``, a tool turn to a user turn."""
    if message.role in INSTRUCTION_ROLES:
        return Slot(None, content="system")
    role = "user" if message.role == "tool" else message.role
    return Slot("messages", {"role": role})


def _text(part: TextPart, message: Message) -> Append | Refuse:
    if not part.text:
        return Refuse("Anthropic rejects an empty text block (vLLM drops it): leave the part out")
    return Append({"type": "text", "text": part.text})


_DETAIL = Refuse("Anthropic's image blocks have no detail control; drop detail (or use auto)")


def _image(part: ImagePart, message: Message) -> Append | Refuse:
    if message.role not in ("user", "tool"):
        return Refuse(f"Anthropic takes images in user turns only, not in a {message.role} turn")
    detail = (
        NoOp("auto is the only detail Anthropic's images have")
        if part.detail == "auto"
        else _DETAIL
    )
    if isinstance(part.url, str):
        return Append(
            {"type": "image", "source": {"type": "url", "url": part.url}},
            fields={
                "url": "source.url",
                "media_type": NoOp("a URL source has no media type: the server reads the image"),
                "detail": detail,
            },
        )
    if part.media_type not in MEDIA_TYPES:
        allowed = ", ".join(sorted(MEDIA_TYPES))
        return Refuse(f"a base64 image needs media_type, one of {allowed}; got {part.media_type!r}")
    source = {"type": "base64", "media_type": part.media_type, "data": part.data}
    return Append(
        {"type": "image", "source": source},
        fields={"data": "source.data", "media_type": "source.media_type", "detail": detail},
    )


def _tool_call(part: ToolCallPart, message: Message) -> Append | Refuse:
    if message.role != "assistant":
        return Refuse(f"a tool_use block belongs to an assistant turn, not a {message.role} turn")
    return Append(
        {"type": "tool_use", "id": part.call_id, "name": part.name, "input": dict(part.arguments)}
    )


def _tool_result(part: ToolResultPart, message: Message) -> Append | Refuse:
    if message.role not in ("tool", "user"):
        return Refuse(f"a tool_result belongs to a tool or user turn, not a {message.role} turn")
    # a result that is not text goes as its JSON text: the block's content is a string or blocks
    result = part.result
    content = result if isinstance(result, str) else msgspec.json.encode(result).decode()
    value: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id, "content": content}
    if part.is_error is not UNSET:
        value["is_error"] = part.is_error
    return Append(value, fields={"is_error": "is_error"})


PARTS: dict[str, PartRow | Refuse] = {
    "text": _text,
    "image": _image,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
}


# -- the rows -----------------------------------------------------------------------------------

MAX_STOP = 4
"""vLLM 0.32 caps ``stop_sequences`` at 4 (``VLLM_MAX_STOP_STRINGS``; a fifth is a 400)."""
MIN_THINKING_BUDGET = 1024
"""Anthropic and vLLM both reject ``thinking.budget_tokens`` below 1024 (400)."""

_CONVERSATION = conversation(place, PARTS, keys=("messages", "system"), doc="")
_LEADING = (
    "Anthropic's system prompt is one top-level field: move system and developer messages before "
    "the first user turn"
)
_PREFILL = (
    "a trailing assistant turn (prefill) is not continued: vLLM closes it and opens a new turn, "
    "Claude 4.6 and later answer 400; end the conversation with a user turn"
)


def chat(group: GroupInput) -> dict[str, Outcome]:
    """``parts.conversation``, plus what depends on a message's position: instructions lead,
    every turn has a part, and the last turn is not the assistant's."""
    out = dict(_CONVERSATION.fn(group))
    chat: ChatInput = group.value
    messages = chat.messages
    first_turn = next(
        (i for i, m in enumerate(messages) if m.role not in INSTRUCTION_ROLES), len(messages)
    )
    for i, message in enumerate(messages):
        if message.role in INSTRUCTION_ROLES:
            if i > first_turn:
                _refuse_message(out, i, _LEADING)
            elif any(not isinstance(p, TextPart) for p in message.content):
                _refuse_message(out, i, "the system prompt takes text blocks only")
        elif not message.content:
            _refuse_message(out, i, "every turn needs at least one content block on this wire")
    if messages and messages[-1].role == "assistant":
        _refuse_message(out, len(messages) - 1, _PREFILL)
    if first_turn == len(messages):
        out["input.chat.messages"] = Refuse(
            "the Messages wire needs at least one user turn besides the system prompt"
        )
    return out


def _refuse_message(out: dict[str, Outcome], index: int, reason: str) -> None:
    at = f"input.chat.messages[{index}]"
    for leaf in out:
        if leaf == at or leaf.startswith(at + "."):
            out[leaf] = Refuse(reason)
    out[at] = Refuse(reason)


def temperature(leaf: Leaf) -> Outcome:
    if leaf.value > 1:
        return Refuse(
            "Anthropic's temperature is 0..1 (hosted rejects more; vLLM's route takes up to 2): "
            "lower it, or use openai_chat on vLLM"
        )
    return Write("temperature", leaf.value)


def structured(group: GroupInput) -> dict[str, Outcome]:
    """``output_config.format`` with a JSON schema: Anthropic's only structured output."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format == "json_object":
        out["structured_output.format"] = Refuse(
            "the Messages wire has no json_object mode; use format json_schema with a schema"
        )
    elif o.format == "json_schema":
        out["structured_output.format"] = Evidence("output_config.format.type")
        out["structured_output.schema"] = Write(
            "output_config.format.schema",
            o.schema,
            also={"output_config.format.type": "json_schema"},
        )
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("output_config.format has no name: it only labels")
    if o.strict is not UNSET:
        out["structured_output.strict"] = (
            NoOp("Anthropic's structured output is always enforced")
            if o.strict
            else Refuse("output_config.format is always enforced; drop strict=false")
        )
    return out


def effort(leaf: Leaf) -> Outcome:
    if leaf.value == "none":
        return Write("thinking", {"type": "disabled"})
    if leaf.value == "minimal":
        return Refuse("Anthropic's lowest effort is low (low, medium, high); ask for low")
    return Write("output_config.effort", leaf.value)


def budget(leaf: Leaf) -> Outcome:
    if leaf.value < MIN_THINKING_BUDGET:
        return Refuse(
            f"thinking.budget_tokens must be at least {MIN_THINKING_BUDGET} (Anthropic and vLLM "
            "answer 400); raise it, and keep max_tokens above it"
        )
    return Write("thinking", {"type": "enabled", "budget_tokens": leaf.value})


def summary(leaf: Leaf) -> Outcome:
    if leaf.value == "auto":
        return NoOp("thinking blocks come back in the server's default display (vLLM: in full)")
    return Refuse(
        "Anthropic's thinking display is summarized or omitted, with no concise/detailed "
        "choice; use auto"
    )


_CHOICE = {"auto": "auto", "required": "any", "none": "none"}
_NO_TOOLS = "no tools are offered"


def tools(group: GroupInput) -> dict[str, Outcome]:
    """``tools`` and ``tool_choice`` (which also carries ``disable_parallel_tool_use``)."""
    t: Tools = group.value
    out: dict[str, Outcome] = {}
    offered = bool(t.functions)
    if offered:
        tools: list[dict[str, Any]] = []
        for i, f in enumerate(t.functions):
            tool: dict[str, Any] = {"name": f.name, "input_schema": f.parameters}
            if f.description is not UNSET:
                tool["description"] = f.description
                out[f"tools.functions[{i}].description"] = Evidence(f"tools[{i}].description")
            tools.append(tool)
        flat = [f.name for f in t.functions if f.parameters.get("type", "object") != "object"]
        out["tools.functions"] = (
            Refuse(f"Anthropic's input_schema must be an object schema, and {flat} are not")
            if flat
            else Write("tools", tools)
        )
    choice = t.choice
    if choice is not UNSET:
        if offered:
            out["tools.choice"] = Write("tool_choice.type", _CHOICE[choice])
        elif choice == "none":
            out["tools.choice"] = NoOp(f"{_NO_TOOLS}, so none changes nothing")
        else:
            out["tools.choice"] = Refuse(f"tools.choice={choice} needs tools.functions")
    if t.parallel is not UNSET:
        if not offered:
            out["tools.parallel"] = NoOp(f"{_NO_TOOLS}, so no call is made")
        elif choice == "none":
            out["tools.parallel"] = NoOp("tool_choice none makes no call")
        else:
            # tool_choice must name a type: auto is what the wire assumes when tools are offered
            also = {} if choice is not UNSET else {"tool_choice.type": "auto"}
            out["tools.parallel"] = Write(
                "tool_choice.disable_parallel_tool_use", not t.parallel, also=also
            )
    return out


# -- bounded leaves ---------------------------------------------------------------------------

TOP_K = at_least(
    "top_k",
    1,
    "Anthropic's top_k is a positive count with no 'off' value; leave it unset",
    "top_k, a positive count",
)

MAX_TOKENS = at_least(
    "max_tokens",
    1,
    "vLLM answers 400 to max_tokens=0 (hosted Anthropic generates nothing): ask for 1 or more",
    "max_tokens, at least 1",
)

STOP = at_most(
    "stop_sequences",
    MAX_STOP,
    f"vLLM takes at most {MAX_STOP} stop_sequences (400 above); pass fewer",
    f"stop_sequences, at most {MAX_STOP}",
    items=True,
)
