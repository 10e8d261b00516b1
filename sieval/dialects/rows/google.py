"""Google's rows: the parts ``parts.conversation`` writes each IR part as (``text``,
``inlineData``, ``functionCall`` ``{name, args}``, ``functionResponse`` ``{name, response}``),
where each message goes, and the encoders of ``google_genai``' table (wire reference 5.2)."""

from __future__ import annotations

import functools
from typing import Any

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
    "CHAT_DOC",
    "CHAT_KEYS",
    "MAX_STOP",
    "MAX_TOKENS",
    "MAX_TOP_K",
    "NEVER",
    "STOP",
    "THINKING",
    "TOP_K",
    "TOP_LOGPROBS",
    "chat",
    "effort",
    "responses_logprobs",
    "structured",
    "summary",
    "tools",
]

MAX_STOP = 5
"""Google's documented cap on ``stopSequences`` (LiteLLM's proxy keeps only the first 4)."""
MAX_TOP_K = 20
"""Google's range for ``generationConfig.logprobs`` (wire reference 5.2)."""

# -- the decision table: chat input -------------------------------------------------------------

_SYSTEM = frozenset({"system", "developer"})
CHAT_KEYS = ("contents", "systemInstruction")
NEVER: dict[str, Refuse] = {  # leaves the wire never takes, with their own rows
    "input.chat.messages.name": Refuse(
        "Google's Content has no author name; drop name or put it in the text"
    ),
    "input.chat.messages.content.image.url": Refuse(
        "Google takes image bytes inline (inlineData) or a Files API URI, not a URL; pass the "
        "base64 bytes as data with media_type"
    ),
}


def _place(i: int, message: Message) -> Slot | Refuse:
    if message.role in _SYSTEM:
        return Slot(None, content="systemInstruction.parts")
    # roles are user and model; function results go back in a user turn (wire reference 5.2),
    # all of one turn's in one Content (Gemini refuses parallel calls answered apart)
    role = "model" if message.role == "assistant" else "user"
    return Slot("contents", {"role": role}, content="parts", joins=message.role == "tool")


def _text(part: TextPart, message: Message) -> Append:
    return Append({"text": part.text})


def _image(part: ImagePart, message: Message) -> Append | Refuse:
    if part.url is not UNSET:
        return NEVER["input.chat.messages.content.image.url"]
    if part.media_type is UNSET:
        return Refuse("inlineData needs a mimeType; set media_type (e.g. image/png)")
    fields: dict[str, str | NoOp | Refuse] = {
        "data": "inlineData.data",
        "media_type": "inlineData.mimeType",
    }
    if part.detail is not UNSET:
        fields["detail"] = (
            NoOp("auto is the server's own choice of resolution")
            if part.detail == "auto"
            else Refuse("Google's parts have no per-image detail; drop detail")
        )
    return Append({"inlineData": {"mimeType": part.media_type, "data": part.data}}, fields=fields)


def _tool_call(part: ToolCallPart, message: Message) -> Append | Refuse:
    if message.role != "assistant":
        return Refuse("a functionCall belongs to a model turn; put it in an assistant message")
    return Append({"functionCall": {"name": part.name, "args": part.arguments}})


def _tool_result(names: dict[str, str], part: ToolResultPart, message: Message) -> Append | Refuse:
    if message.role not in ("tool", "user"):
        return Refuse("a functionResponse goes back in a user turn; put it in a tool message")
    name = names.get(part.call_id)
    if name is None:
        return Refuse(
            f"Google pairs a functionResponse with its call by name, and no tool_call of this "
            f"conversation has call_id {part.call_id!r}; include the call"
        )
    # "output" and "error" are the documented keys; any other object is the whole output
    if part.is_error is True:
        response: Any = {"error": part.result}
    else:
        response = part.result if isinstance(part.result, dict) else {"output": part.result}
    fields: dict[str, str | NoOp | Refuse] = {}
    if part.is_error is not UNSET:
        fields["is_error"] = (
            "functionResponse.response.error"
            if part.is_error
            else NoOp("a response without an error key is the function's output")
        )
    return Append({"functionResponse": {"name": name, "response": response}}, fields=fields)


def chat(group: GroupInput) -> dict[str, Outcome]:
    """``parts.conversation`` with the function names of this conversation (a response needs its
    call's name), and system messages only before the first turn (``systemInstruction`` is one
    top-level Content)."""
    chat: ChatInput = group.value
    names = {
        p.call_id: p.name for m in chat.messages for p in m.content if isinstance(p, ToolCallPart)
    }
    parts: dict[str, PartRow | Refuse] = {
        "text": _text,
        "image": _image,
        "tool_call": _tool_call,
        "tool_result": functools.partial(_tool_result, names),
    }
    out = dict(conversation(_place, parts, keys=CHAT_KEYS, doc=CHAT_DOC).fn(group))
    turns = False
    for i, message in enumerate(chat.messages):
        if message.role not in _SYSTEM:
            turns = True
        elif turns:
            out[f"input.chat.messages[{i}]"] = Refuse(
                "Google has one systemInstruction before the turns; move system messages to "
                "the start of the conversation"
            )
    return out


CHAT_DOC = (
    "contents (user/model turns; tool results in user turns) + systemInstruction.parts; text, "
    "inlineData, functionCall, functionResponse"
)

# -- generation -------------------------------------------------------------------------------


def responses_logprobs(leaf: Leaf) -> Outcome:
    return Write("generationConfig.responseLogprobs", True)


def structured(group: GroupInput) -> dict[str, Outcome]:
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format != "text":
        out["structured_output.format"] = Write("generationConfig.responseMimeType", _JSON)
    if o.format == "json_schema":
        out["structured_output.schema"] = Write("generationConfig.responseJsonSchema", o.schema)
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("responseJsonSchema takes no name")
    if o.strict is not UNSET:
        out["structured_output.strict"] = Refuse(
            "Google has no strictness switch: the schema constrains decoding, and keywords it "
            "does not support may be simplified; leave strict unset"
        )
    return out


_JSON = "application/json"
THINKING = "generationConfig.thinkingConfig"


def effort(leaf: Leaf) -> Outcome:
    if leaf.value == "none":  # "0 is DISABLED" (thinkingBudget); thinkingLevel has no "off"
        return Write(f"{THINKING}.thinkingBudget", 0)
    return Write(f"{THINKING}.thinkingLevel", str(leaf.value).upper())


def summary(leaf: Leaf) -> Outcome:
    if leaf.value != "auto":
        return Refuse("Google returns thought summaries of its own length; ask summary=auto")
    return Write(f"{THINKING}.includeThoughts", True)


_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}


def tools(group: GroupInput) -> dict[str, Outcome]:
    """One ``functionDeclarations`` tool with JSON Schema parameters; the choice as
    ``toolConfig.functionCallingConfig.mode``."""
    t: Tools = group.value
    out: dict[str, Outcome] = {}
    if t.functions:
        declarations: list[dict[str, Any]] = []
        for i, f in enumerate(t.functions):
            declaration: dict[str, Any] = {"name": f.name, "parametersJsonSchema": f.parameters}
            if f.description is not UNSET:
                declaration["description"] = f.description
                path = f"tools[0].functionDeclarations[{i}].description"
                out[f"tools.functions[{i}].description"] = Evidence(path)
            declarations.append(declaration)
        out["tools.functions"] = Write("tools", [{"functionDeclarations": declarations}])
    if t.choice is not UNSET:
        out["tools.choice"] = Write("toolConfig.functionCallingConfig.mode", _MODES[t.choice])
    if t.parallel is not UNSET:
        out["tools.parallel"] = (
            NoOp("Google may return several function calls in one turn; that is its only mode")
            if t.parallel
            else Refuse("Google has no switch that forbids parallel function calls; drop it")
        )
    return out


# -- bounded leaves ---------------------------------------------------------------------------

TOP_K = at_least(
    "generationConfig.topK",
    1,
    "Google's topK is a positive count; leave top_k unset to disable it",
    "generationConfig.topK, at least 1",
)

MAX_TOKENS = at_least(
    "generationConfig.maxOutputTokens",
    1,
    "generateContent scores no input, so max_tokens=0 asks for nothing; ask for 1",
    "generationConfig.maxOutputTokens, at least 1",
)

STOP = at_most(
    "generationConfig.stopSequences",
    MAX_STOP,
    f"Google takes at most {MAX_STOP} stopSequences; pass {MAX_STOP} or fewer",
    f"generationConfig.stopSequences, at most {MAX_STOP}",
    items=True,
)

TOP_LOGPROBS = at_most(
    "generationConfig.logprobs",
    MAX_TOP_K,
    f"Google returns at most {MAX_TOP_K} alternatives per step; ask for fewer",
    f"generationConfig.logprobs, at most {MAX_TOP_K}",
)
