"""The Responses reply (``POST /v1/responses``): the typed SSE events and their fold, and reading.

Wire reference sections 3.2, 3.3 and 3.5. The reply's Structs are in ``responses_reply.py``;
only the fields sieval reads are declared, extra ones are accepted. Output items and their
content parts are typed on ``type``: an item kind sieval never asked for (a hosted tool call)
is refused.

The fold keeps the terminal event's ``response`` (it carries the whole output) and checks it
against what was streamed: the text deltas of each part must concatenate to the part's text, and
the logprobs that rode on the deltas must be the part's logprobs. A stream whose final response
disagrees with its own deltas is not believed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import msgspec
from msgspec import UNSET

from ...errors import SievalError
from ...ir.response import Token, ToolCall, TopEntry, Usage
from ..channels import UsageAt
from ..checks import Checker, best_first, sound
from .openai import in_band_error
from .responses_reply import (
    FunctionCallItem,
    Item,
    Logprob,
    MessageItem,
    OutputText,
    ReasoningItem,
    Refusal,
    Reply,
    ReplyError,
    TopLogprob,
    WireReply,
    typed,
)
from .sse import SseEvent, event_type

__all__ = [
    "TERMINALS",
    "FunctionCallItem",
    "MessageItem",
    "OutputText",
    "ReasoningItem",
    "Refusal",
    "Reply",
    "WireReply",
    "clamp_warning",
    "failure",
    "fold",
    "message_text",
    "positions_complete",
    "reasoning_text",
    "sampled_tokens",
    "tool_calls",
    "typed",
]

TERMINALS = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The events that end a Responses stream (vLLM 0.32 only ever sends ``response.completed``,
with ``status: "incomplete"`` inside when ``max_output_tokens`` was reached)."""

_SPECIAL = re.compile(r"^<[^<>\s]+>$")  # e.g. <eos>, <end_of_turn>: listed, not in the text

# -- streamed events ----------------------------------------------------------------------------


class _TextDelta(msgspec.Struct, tag="response.output_text.delta", tag_field="type"):
    output_index: int
    content_index: int
    delta: str
    logprobs: list[Logprob] | None = None


class _ItemDone(msgspec.Struct, tag="response.output_item.done", tag_field="type"):
    output_index: int
    item: Item


class _Completed(msgspec.Struct, tag="response.completed", tag_field="type"):
    response: Reply


class _Incompleted(msgspec.Struct, tag="response.incomplete", tag_field="type"):
    response: Reply


class _Failed(msgspec.Struct, tag="response.failed", tag_field="type"):
    response: Reply


class _ErrorEvent(msgspec.Struct, tag="error", tag_field="type"):
    code: str | int | None = None
    message: str = ""


Event = _TextDelta | _ItemDone | _Completed | _Incompleted | _Failed | _ErrorEvent
_READ = frozenset({"response.output_text.delta", "response.output_item.done", "error", *TERMINALS})


class _Peek(msgspec.Struct):
    type: str = ""


_event = msgspec.json.Decoder(Event)
_peek = msgspec.json.Decoder(_Peek)


def fold(events: list[SseEvent], check: Checker) -> Reply:
    """The terminal event's response, checked against the deltas streamed before it."""
    texts: dict[tuple[int, int], list[str]] = {}
    streamed: dict[tuple[int, int], list[Logprob]] = {}
    done: dict[int, Item] = {}
    final: Reply | None = None
    for i, event in enumerate(events):
        peek = check.decode(event.data, _peek)
        name = event_type(event)
        if event.event and peek.type and event.event != peek.type:
            raise check.violation(
                f"events[{i}]",
                f"event {i} is named {event.event!r} but its data says type {peek.type!r}",
            )
        if name not in _READ:
            continue
        typed = check.decode(event.data, _event)
        if isinstance(typed, _ErrorEvent):
            raise _error(check, {"code": typed.code, "message": typed.message})
        if isinstance(typed, _TextDelta):
            key = (typed.output_index, typed.content_index)
            texts.setdefault(key, []).append(typed.delta)
            streamed.setdefault(key, []).extend(typed.logprobs or [])
        elif isinstance(typed, _ItemDone):
            done[typed.output_index] = typed.item
        else:
            final = typed.response
    if final is None:  # pragma: no cover - the Terminal framing ends every list on a terminal
        raise check.violation("", "the stream has no terminal event")
    if not final.output and done:
        final.output = [done[i] for i in sorted(done)]
    _agree(check, final, texts, streamed)
    return final


def _agree(
    check: Checker,
    final: Reply,
    texts: dict[tuple[int, int], list[str]],
    streamed: dict[tuple[int, int], list[Logprob]],
) -> None:
    parts = {
        (i, j): part
        for i, item in enumerate(final.output)
        if isinstance(item, MessageItem)
        for j, part in enumerate(item.content)
        if isinstance(part, OutputText)
    }
    for key in sorted(set(parts) | set(texts)):
        where = f"output[{key[0]}].content[{key[1]}]"
        part = parts.get(key)
        sent = "".join(texts.get(key, []))
        if part is None or part.text != sent:
            final_text = part.text if part is not None else None
            raise check.violation(
                where,
                f"the stream's text deltas for {where} give {sent[:60]!r} but its final response "
                f"says {final_text if final_text is None else final_text[:60]!r}: the stream "
                "disagrees with itself",
            )
        if part.logprobs is not None and [(e.token, e.logprob) for e in part.logprobs] != [
            (e.token, e.logprob) for e in streamed.get(key, [])
        ]:
            raise check.violation(
                f"{where}.logprobs",
                f"{where}.logprobs in the final response ({len(part.logprobs)} tokens) are not "
                f"the {len(streamed.get(key, []))} that rode on the text deltas",
            )


# -- reading ------------------------------------------------------------------------------------


def _error(check: Checker, error: dict[str, Any]) -> SievalError:
    payload = msgspec.json.encode({"error": error})
    return in_band_error(check.dialect, error, payload)


def failure(check: Checker, reply: Reply) -> SievalError:
    """The error a ``status: "failed"`` response reports (its ``error`` object)."""
    error = reply.error or ReplyError(message="the response failed without an error object")
    return _error(check, {"code": error.code, "message": error.message})


def message_text(reply: Reply) -> tuple[str, list[str]]:
    """The answer (the ``output_text`` parts of every message item, in order; the SDK's
    ``output_text`` is not on the wire) and the refusal texts."""
    texts: list[str] = []
    refusals: list[str] = []
    for item in reply.output:
        if isinstance(item, MessageItem):
            for part in item.content:
                if isinstance(part, OutputText):
                    texts.append(part.text)
                else:
                    refusals.append(part.refusal)
    return "".join(texts), refusals


def sampled_tokens(check: Checker, reply: Reply, k: int) -> tuple[Token, ...] | Any:
    """The sampled tokens of the answer with offsets into it and the exact top-k.

    Each part's tokens must rebuild its text; a special token the text leaves out (``<eos>``)
    covers no text, and one that ends the answer is dropped: vLLM lists the stop token in a
    non-stream reply and never streams it, and the Response is the same either way. ``UNSET``
    when the output holds a function call and no text (its tokens have no logprobs here).
    """
    tokens: list[Token] = []
    base = 0
    parts = 0
    for i, item in enumerate(reply.output):
        if not isinstance(item, MessageItem):
            continue
        for j, part in enumerate(item.content):
            if not isinstance(part, OutputText):
                continue
            parts += 1
            where = f"output[{i}].content[{j}].logprobs"
            if part.logprobs is None:
                raise check.violation(where, f"{where} is missing although logprobs were requested")
            tokens += _part_tokens(check, part, k, base, where)
            base += len(part.text)
    if not parts and any(isinstance(item, FunctionCallItem) for item in reply.output):
        return UNSET
    while tokens and tokens[-1].offset == base and _SPECIAL.match(tokens[-1].text):
        tokens.pop()
    return tuple(tokens)


def _part_tokens(check: Checker, part: OutputText, k: int, base: int, where: str) -> list[Token]:
    assert part.logprobs is not None
    entries = part.logprobs
    check.logprobs(where, [e.logprob for e in entries], ".logprob")
    lists = [e.top_logprobs for e in entries]
    flat = [a.logprob for alts in lists for a in alts]
    if k and (list(map(len, lists)).count(k + 1) != len(lists) or not sound(flat)):
        # a short or unsound list somewhere: walked position by position, for the error
        return _part_tokens_one_by_one(check, part, k, base, where)
    offsets = _offsets(check, entries, part.text, base, where)
    if not k:
        return [
            Token(text=e.token, logprob=e.logprob, offset=o)
            for e, o in zip(entries, offsets, strict=True)
        ]
    check.lists_agree(where, entries, lists)
    ranked = best_first(lists, flat, k + 1, k, _LOGPROB)
    return [
        Token(
            text=e.token,
            logprob=e.logprob,
            offset=o,
            top=tuple([TopEntry(token=a.token, logprob=a.logprob) for a in r]),
            scored_rank=0 if r[0].token == e.token and r[0].logprob == e.logprob else _rank(e, r),
        )
        for e, r, o in zip(entries, ranked, offsets, strict=True)
    ]


def _rank(e: Logprob, ranked: Sequence[TopLogprob]) -> int:
    """Where the sampled token is among the top-k, or -1."""
    return next(
        (j for j, a in enumerate(ranked) if a.token == e.token and a.logprob == e.logprob), -1
    )


_LOGPROB = attrgetter("logprob")


def _offsets(
    check: Checker, entries: Sequence[Logprob], text: str, base: int, where: str
) -> list[int]:
    """Where each entry starts (from ``base``), checked: the entries spell ``text`` (a special
    token such as ``<eos>`` may add nothing to it)."""
    pos = 0
    offsets: list[int] = []
    for n, entry in enumerate(entries):
        token = entry.token
        offsets.append(base + pos)
        if token and text.startswith(token, pos):
            pos += len(token)
        elif token and not _SPECIAL.match(token):
            raise check.violation(
                f"{where}[{n}]",
                f"{where}[{n}] is {token!r} but the text continues {text[pos : pos + 12]!r}: the "
                "logprobs do not spell the answer",
            )
    if pos != len(text):
        raise check.violation(
            where,
            f"{where} spell {pos} of the {len(text)} characters of the answer: positions are "
            "missing",
            expected=len(text),
            received=pos,
        )
    return offsets


def _part_tokens_one_by_one(
    check: Checker, part: OutputText, k: int, base: int, where: str
) -> list[Token]:
    assert part.logprobs is not None
    check.logprobs(where, [e.logprob for e in part.logprobs], ".logprob")  # again: walked alone
    offsets = _offsets(check, part.logprobs, part.text, base, where)
    out: list[Token] = []
    for n, (entry, offset) in enumerate(zip(part.logprobs, offsets, strict=True)):
        top: Any = UNSET
        rank: Any = UNSET
        if k:
            if len(entry.top_logprobs) != k + 1:
                raise check.violation(
                    f"{where}[{n}].top_logprobs",
                    f"{where}[{n}].top_logprobs lists {len(entry.top_logprobs)} alternatives; "
                    f"{k + 1} were asked: the reply is short and its top-{k} is not exact",
                    expected=k + 1,
                    received=len(entry.top_logprobs),
                )
            entries = [TopEntry(token=e.token, logprob=e.logprob) for e in entry.top_logprobs]
            scored = TopEntry(token=entry.token, logprob=entry.logprob)
            top, rank = check.top_list(f"{where}[{n}].top_logprobs", entries, k, scored)
        out.append(
            Token(text=entry.token, logprob=entry.logprob, offset=offset, top=top, scored_rank=rank)
        )
    return out


def positions_complete(check: Checker, reply: Reply, usage: Usage, streamed: bool) -> None:
    """The logprobs cover every output token (counted against ``usage.output_tokens``, less its
    reasoning tokens). A stream may lack one, the stop token, when the response completed: vLLM
    streams no event, and so no logprob, for a token that adds no text, which also loses every
    byte-fallback piece that decodes to "" (they are all in a non-stream reply)."""
    if not isinstance(usage.output_tokens, int):
        return
    listed = sum(
        len(part.logprobs or [])
        for item in reply.output
        if isinstance(item, MessageItem)
        for part in item.content
        if isinstance(part, OutputText)
    )
    reasoning = usage.reasoning_tokens if isinstance(usage.reasoning_tokens, int) else 0
    expected = usage.output_tokens - reasoning
    allowed = {expected, expected - 1} if streamed and reply.status == "completed" else {expected}
    if listed not in allowed:
        fix = " (vLLM streams no logprob for a token without text: ask without streaming)"
        raise check.violation(
            "output[].content[].logprobs",
            f"the reply lists logprobs for {listed} positions but generated {expected} output "
            f"tokens: positions are missing or extra{fix if streamed else ''}",
            expected=expected,
            received=listed,
        )


def tool_calls(check: Checker, reply: Reply) -> tuple[ToolCall, ...] | Any:
    """The ``function_call`` items, arguments parsed (a JSON object, or the reply is refused)."""
    calls = []
    for i, item in enumerate(reply.output):
        if not isinstance(item, FunctionCallItem):
            continue
        where = f"output[{i}].arguments"
        try:
            arguments = msgspec.json.decode(item.arguments)
        except msgspec.DecodeError as exc:
            raise check.violation(
                where,
                f"{where} of the call to {item.name!r} is not valid JSON: {item.arguments[:80]!r}",
            ) from exc
        if not isinstance(arguments, dict):
            raise check.violation(
                where, f"{where} of the call to {item.name!r} is not a JSON object: {arguments!r}"
            )
        calls.append(ToolCall(call_id=item.call_id, name=item.name, arguments=arguments))
    return tuple(calls) if calls else UNSET


def reasoning_text(reply: Reply) -> str | Any:
    """Reasoning items as text: the raw ``reasoning_text`` content when present (vLLM), else the
    summary (OpenAI); never part of the answer. ``UNSET`` without reasoning items."""
    texts = []
    seen = False
    for item in reply.output:
        if isinstance(item, ReasoningItem):
            seen = True
            pieces = item.content if item.content else item.summary
            texts += [p.text for p in pieces if p.text]
    return "\n\n".join(texts) if seen else UNSET


USAGE = UsageAt(
    input="input_tokens",
    output="output_tokens",
    cached="input_tokens_details.cached_tokens",
    reasoning="output_tokens_details.reasoning_tokens",
    total="total_tokens",
)
"""Where the Responses usage keeps each count."""


def clamp_warning(check: Checker, requested: Any, reply: Reply, usage: Usage) -> Sequence[str]:
    """vLLM shortens ``max_output_tokens`` to the room the prompt leaves (wire reference 3.5) and
    echoes the value it applied: an echo below the request is that clamp, and the reader must
    know."""
    applied = reply.max_output_tokens
    if requested is UNSET or applied is None or applied >= requested:
        return ()
    return (
        f"{check.dialect}: the server shortened max_output_tokens from {requested} to {applied} "
        f"to fit its context window (prompt {usage.input_tokens} tokens), so this generation is "
        "cut by the context",
    )
