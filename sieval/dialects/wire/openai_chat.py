"""Chat-shaped OpenAI pieces: message and part converters, ``response_format``, function tools,
the chat reply Structs, the SSE fold, sampled tokens and tool calls.

Used by ``openai_chat`` (and meant for the Responses dialect). Wire truth:
``shared/reference/wire-reference.md`` section 2; vLLM 0.32.0 facts are named where they matter.
Nothing in a reply is trusted: choice indices, top-k lengths, logprobs finite and <= 0, each top-k
agreeing with its sampled token, the tokens against the text they claim to spell, tool-call
arguments as JSON objects.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
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
from ...ir.response import Token, ToolCall, TopEntry
from ..checks import Checker, best_first, sound
from ..parts import Append, PartRow, Slot
from ..spec import Evidence, GroupInput, NoOp, Outcome, Refuse, Write
from .openai import MAX_TOP_LOGPROBS, WireUsage, in_band_error
from .sse import SseEvent

__all__ = [
    "MAX_TOP_LOGPROBS",
    "PARTS",
    "ChatChoice",
    "ChatReply",
    "Sampled",
    "fold",
    "function_tools",
    "place",
    "response_format",
    "sampled_tokens",
    "tool_calls",
]


_SPECIAL = re.compile(r"^<[^<>\s]+>$")  # <eos>, <end_of_turn>: sampled, never in the content
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


# -- the reply ----------------------------------------------------------------------------------


class TopLogprob(msgspec.Struct, gc=False):  # scalars only: the collector need not track them
    token: str
    logprob: float


class LogprobEntry(msgspec.Struct):
    token: str
    logprob: float
    bytes: list[int] | None = None
    top_logprobs: list[TopLogprob] = []


class ChoiceLogprobs(msgspec.Struct):
    content: list[LogprobEntry] | None = None


class FunctionCall(msgspec.Struct):
    name: str
    arguments: str


class WireToolCall(msgspec.Struct):
    id: str
    function: FunctionCall


class WireMessage(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None  # the name before vLLM 0.32 (and other servers)
    tool_calls: list[WireToolCall] | None = None


class ChatChoice(msgspec.Struct):
    index: int
    message: WireMessage
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


class ChatReply(msgspec.Struct):
    choices: list[ChatChoice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None


class _FunctionDelta(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallDelta(msgspec.Struct):
    index: int
    id: str | None = None
    function: _FunctionDelta | None = None


class _Delta(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[_ToolCallDelta] | None = None


class _ChunkChoice(msgspec.Struct):
    index: int
    delta: _Delta | None = None
    logprobs: ChoiceLogprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


class _Chunk(msgspec.Struct):
    choices: list[_ChunkChoice] = []
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(_Chunk)


def _join(a: str | None, b: str | None) -> str | None:
    return b if a is None else a + (b or "")


def fold(events: list[SseEvent], check: Checker) -> ChatReply:
    """``chat.completion.chunk`` events as one reply: per choice index, text fragments and
    logprob lists concatenate; tool calls gather by their own index (id and name once, argument
    pieces concatenated); usage comes from the last chunk (``choices: []``)."""
    reply = ChatReply(choices=[])
    choices: dict[int, ChatChoice] = {}
    calls: dict[int, dict[int, WireToolCall]] = {}
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
        reply.model = chunk.model or reply.model
        reply.system_fingerprint = chunk.system_fingerprint or reply.system_fingerprint
        reply.usage = chunk.usage or reply.usage
        for part in chunk.choices:
            into = choices.setdefault(part.index, ChatChoice(part.index, WireMessage()))
            into.finish_reason = part.finish_reason or into.finish_reason
            into.stop_reason = (
                part.stop_reason if part.stop_reason is not None else into.stop_reason
            )
            if part.logprobs is not None and part.logprobs.content is not None:
                if into.logprobs is None or into.logprobs.content is None:
                    into.logprobs = ChoiceLogprobs(content=[])
                assert into.logprobs.content is not None
                into.logprobs.content += part.logprobs.content
            d = part.delta
            if d is None:
                continue
            m = into.message
            m.content = _join(m.content, d.content)
            m.refusal = _join(m.refusal, d.refusal)
            m.reasoning = _join(m.reasoning, d.reasoning)
            m.reasoning_content = _join(m.reasoning_content, d.reasoning_content)
            for piece in d.tool_calls or ():
                _add_call(check, calls.setdefault(part.index, {}), piece, part.index)
    for index, gathered in calls.items():
        choices[index].message.tool_calls = [gathered[i] for i in sorted(gathered)]
    reply.choices = list(choices.values())
    return reply


def _add_call(
    check: Checker, calls: dict[int, WireToolCall], piece: _ToolCallDelta, choice: int
) -> None:
    fn = piece.function or _FunctionDelta()
    call = calls.get(piece.index)
    if call is None:
        if piece.id is None or fn.name is None:
            raise check.violation(
                f"choices[{choice}].delta.tool_calls[{piece.index}]",
                f"tool call {piece.index} of choice {choice} starts without its id and name: the "
                "stream is missing its first fragment",
            )
        calls[piece.index] = WireToolCall(piece.id, FunctionCall(fn.name, fn.arguments or ""))
        return
    call.function.arguments += fn.arguments or ""


# -- sampled tokens -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sampled:
    """One choice's sampled tokens, and what a reader must know about them."""

    tokens: tuple[Token, ...]
    warning: str | None = None


def sampled_tokens(
    check: Checker, choice: ChatChoice, k: int, asked: int, covers_text: bool
) -> Sampled:
    """The choice's ``logprobs.content`` as tokens with offsets into its text and exact top-k.

    ``asked`` is the ``top_logprobs`` sent (k + 1 for k > 0: vLLM 0.32 lists the sampled token
    first and cuts at ``top_logprobs``, so the k best of k + 1 are exact either way; wire
    reference 2.4); each list must hold exactly that many. ``covers_text`` is false when the
    tokens also spell text the content does not hold (tool-call markup, reasoning): they are kept
    without offsets.
    """
    where = f"choices[{choice.index}].logprobs.content"
    entries = choice.logprobs.content if choice.logprobs is not None else None
    if entries is None:
        if not choice.message.content and choice.message.refusal is not None:
            return Sampled(())
        raise check.violation(where, f"{where} is missing although logprobs were requested")
    check.logprobs(where, [e.logprob for e in entries], ".logprob")
    tops: list[Any] = [UNSET] * len(entries)
    ranks: list[Any] = [UNSET] * len(entries)
    if k > 0:
        tops, ranks = _top_k(check, where, entries, k, asked)
    texts = [e.token for e in entries]
    warning = None
    if covers_text:
        offsets, warning = _offsets(check, choice, entries, texts)
    else:
        offsets = [UNSET] * len(entries)
        warning = (
            f"{check.dialect}: choice {choice.index}'s sampled tokens also spell text its content "
            "does not hold (tool-call markup or reasoning), so they carry no offsets"
        )
    tokens = tuple(
        Token(
            text=texts[i], logprob=e.logprob, offset=offsets[i], top=tops[i], scored_rank=ranks[i]
        )
        for i, e in enumerate(entries)
    )
    return Sampled(tokens, warning)


def _top_k(
    check: Checker, where: str, entries: Sequence[LogprobEntry], k: int, asked: int
) -> tuple[list[Any], list[Any]]:
    """Each position's exact top-k, most likely first, and the sampled token's rank in it. The
    channel is checked whole (every list of ``asked`` alternatives, every logprob sound, each
    list agreeing with its sampled token); a reply that fails is walked position by position,
    for the error to name the first one."""
    lists = [e.top_logprobs for e in entries]
    whole = list(map(len, lists)).count(asked) == len(lists)
    flat = [a.logprob for alts in lists for a in alts]
    if not whole or not sound(flat):
        return _top_k_one_by_one(check, where, entries, k, asked)
    check.lists_agree(where, entries, lists)
    ranked = best_first(lists, flat, asked, k, _LOGPROB)
    tops = [tuple([TopEntry(token=a.token, logprob=a.logprob) for a in r]) for r in ranked]
    ranks = [
        0 if r[0].token == e.token and r[0].logprob == e.logprob else _rank(e, r)
        for e, r in zip(entries, ranked, strict=True)
    ]
    return tops, ranks


def _rank(e: LogprobEntry, ranked: Sequence[TopLogprob]) -> int:
    """Where the sampled token is among the top-k, or -1."""
    return next(
        (j for j, a in enumerate(ranked) if a.token == e.token and a.logprob == e.logprob), -1
    )


def _top_k_one_by_one(
    check: Checker, where: str, entries: Sequence[LogprobEntry], k: int, asked: int
) -> tuple[list[Any], list[Any]]:
    tops: list[Any] = [UNSET] * len(entries)
    ranks: list[Any] = [UNSET] * len(entries)
    for i, e in enumerate(entries):
        if len(e.top_logprobs) != asked:
            raise check.violation(
                f"{where}[{i}].top_logprobs",
                f"{where}[{i}].top_logprobs lists {len(e.top_logprobs)} alternatives; "
                f"top_logprobs={asked} was sent: the list is short and its top-{k} is not "
                "exact",
                expected=asked,
                received=len(e.top_logprobs),
            )
        alts = [TopEntry(token=t.token, logprob=t.logprob) for t in e.top_logprobs]
        scored = TopEntry(token=e.token, logprob=e.logprob)
        tops[i], ranks[i] = check.top_list(f"{where}[{i}].top_logprobs", alts, k, scored)
    return tops, ranks


_LOGPROB = attrgetter("logprob")


def _offsets(
    check: Checker, choice: ChatChoice, entries: Sequence[LogprobEntry], texts: list[str]
) -> tuple[list[Any], str | None]:
    """Where each token starts in the content; the tokens must spell it exactly.

    vLLM decodes a byte-fallback piece that is half a character to "" (the completing piece
    carries the whole character): such a token covers no text. A special token (``<eos>``)
    is sampled but never in the content. A matched stop string cuts the content but not the
    logprobs: the tokens then run past the text, from the stop string on.
    """
    content = choice.message.content or ""
    out: list[Any] = []
    pos = 0
    for i, text in enumerate(texts):
        if content.startswith(text, pos):
            out.append(pos)
            pos += len(text)
        elif _SPECIAL.match(text):
            out.append(pos)
        else:
            return _past_the_stop(check, choice, texts, out, pos, i)
    if pos != len(content):
        by_bytes = _by_bytes(entries, content)
        if by_bytes is not None:
            return by_bytes, None
        raise check.violation(
            f"choices[{choice.index}].logprobs.content",
            f"choice {choice.index}'s {len(texts)} sampled tokens spell {pos} of the content's "
            f"{len(content)} characters: the logprobs are short",
            expected=len(content),
            received=pos,
        )
    return out, None


def _past_the_stop(
    check: Checker, choice: ChatChoice, texts: list[str], out: list[Any], pos: int, i: int
) -> tuple[list[Any], str | None]:
    content = choice.message.content or ""
    rest = "".join(texts[i:])
    stop = choice.stop_reason
    tail = content[pos:]
    if isinstance(stop, str) and rest.startswith(tail) and rest[len(tail) :].startswith(stop):
        for text in texts[i:]:
            out.append(pos)
            pos += len(text)
        return out, (
            f"{check.dialect}: choice {choice.index}'s last {len(texts) - i} sampled token(s) run "
            f"past its text: the server cut the text at the stop string {stop!r} and kept their "
            "logprobs"
        )
    entries = choice.logprobs.content if choice.logprobs is not None else None
    by_bytes = _by_bytes(entries or [], content)
    if by_bytes is not None:
        return by_bytes, None
    raise check.violation(
        f"choices[{choice.index}].logprobs.content[{i}]",
        f"choice {choice.index}'s sampled token {i} {texts[i]!r} is not the text at character "
        f"{pos} ({content[pos : pos + 12]!r}): the logprobs do not spell the content",
    )


def _by_bytes(entries: Sequence[LogprobEntry], content: str) -> list[Any] | None:
    """Offsets from ``bytes`` when those are a token's true bytes (OpenAI's split characters):
    joined, they must decode to the content, and a token whose bytes decode alone must read as
    its text. vLLM's bytes encode the decoded text instead, so they never help there."""
    raw: list[bytes] = []
    for e in entries:
        if e.bytes is None or not all(0 <= b < 256 for b in e.bytes):
            return None
        piece = bytes(e.bytes)
        try:
            if piece.decode("utf-8") != e.token:
                return None
        except UnicodeDecodeError:
            pass  # part of a character: its text is the server's escape
        raw.append(piece)
    try:
        if not raw or b"".join(raw).decode("utf-8") != content:
            return None
    except UnicodeDecodeError:
        return None
    out: list[Any] = []
    done = b""
    for piece in raw:
        out.append(len(done.decode("utf-8", "ignore")))
        done += piece
    return out


# -- tool calls ---------------------------------------------------------------------------------


def tool_calls(check: Checker, choice: ChatChoice) -> tuple[ToolCall, ...]:
    """The choice's tool calls, arguments parsed from their JSON text into an object."""
    out = []
    for j, call in enumerate(choice.message.tool_calls or ()):
        where = f"choices[{choice.index}].message.tool_calls[{j}].function.arguments"
        try:
            arguments = msgspec.json.decode(call.function.arguments)
        except msgspec.DecodeError as exc:
            raise check.violation(
                where,
                f"{where} is not valid JSON ({call.function.arguments[:60]!r}): the call "
                f"{call.function.name!r} cannot be run",
            ) from exc
        if not isinstance(arguments, dict):
            raise check.violation(
                where,
                f"{where} is JSON but not an object ({call.function.arguments[:60]!r}): a "
                "function takes named arguments",
                received=type(arguments).__name__,
            )
        out.append(ToolCall(call_id=call.id, name=call.function.name, arguments=arguments))
    return tuple(out)
