"""The Responses reply's Structs (``POST /v1/responses``, wire reference section 3), and the
untagged decode that types its items and parts.

Split from ``wire/openai_responses.py``, which reads them. Items and parts are a tagged union
on ``type``; the non-stream reply is decoded untagged (``WireReply``) and typed by ``typed``,
because vLLM writes ``type`` after an item's ``content`` (and a part's ``text``) and a tagged
union must find its tag before it decodes the rest, so it would scan every logprob twice.
"""

from __future__ import annotations

import msgspec

from ..reply_checks import Checker
from .numbers import Count

__all__ = [
    "FunctionCallItem",
    "Incomplete",
    "Item",
    "Logprob",
    "MessageItem",
    "OutputText",
    "ReasoningItem",
    "Refusal",
    "Reply",
    "ReplyError",
    "Text",
    "TopLogprob",
    "WireReply",
    "WireUsage",
    "typed",
]


class TopLogprob(msgspec.Struct, gc=False):  # scalars only: the collector need not track them
    token: str
    logprob: float


class Logprob(msgspec.Struct):
    token: str
    logprob: float
    top_logprobs: list[TopLogprob] = []


class OutputText(msgspec.Struct, tag="output_text", tag_field="type"):
    text: str
    logprobs: list[Logprob] | None = None


class Refusal(msgspec.Struct, tag="refusal", tag_field="type"):
    refusal: str


class MessageItem(msgspec.Struct, tag="message", tag_field="type"):
    content: list[OutputText | Refusal] = []


class FunctionCallItem(msgspec.Struct, tag="function_call", tag_field="type"):
    call_id: str
    name: str
    arguments: str


class Text(msgspec.Struct):
    text: str


class ReasoningItem(msgspec.Struct, tag="reasoning", tag_field="type"):
    summary: list[Text] = []
    content: list[Text] | None = None


Item = MessageItem | FunctionCallItem | ReasoningItem


class _InputDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _OutputDetails(msgspec.Struct):
    reasoning_tokens: int | None = None


class WireUsage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    input_tokens_details: _InputDetails | None = None
    output_tokens_details: _OutputDetails | None = None


class Incomplete(msgspec.Struct):
    reason: str | None = None


class ReplyError(msgspec.Struct):
    code: str | int | None = None
    message: str = ""


class Reply(msgspec.Struct):
    status: str | None = None
    output: list[Item] = []
    model: str | None = None
    incomplete_details: Incomplete | None = None
    error: ReplyError | None = None
    usage: WireUsage | None = None
    max_output_tokens: Count | None = None
    """The server's echo of the budget it applied (vLLM shortens it to fit the context)."""


class _WirePart(msgspec.Struct):
    type: str = ""
    text: str | None = None
    logprobs: list[Logprob] | None = None
    refusal: str | None = None


class _WireItem(msgspec.Struct):
    type: str
    content: list[_WirePart] | None = None
    summary: list[Text] | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None


class WireReply(msgspec.Struct):
    """The non-stream reply as decoded: items and parts untagged, then typed by ``typed``."""

    status: str | None = None
    output: list[_WireItem] = []
    model: str | None = None
    incomplete_details: Incomplete | None = None
    error: ReplyError | None = None
    usage: WireUsage | None = None
    max_output_tokens: Count | None = None


def typed(check: Checker, reply: WireReply | Reply) -> Reply:
    """The reply with its items and parts as their types, or a violation naming the first that
    is not one of them (or lacks a field its type requires)."""
    if isinstance(reply, Reply):
        return reply
    items: list[Item] = []
    for i, w in enumerate(reply.output):
        where = f"output[{i}]"
        if w.type == "message":
            items.append(
                MessageItem(
                    content=[
                        _part(check, f"{where}.content[{j}]", p)
                        for j, p in enumerate(w.content or [])
                    ]
                )
            )
        elif w.type == "function_call":
            if w.call_id is None or w.name is None or w.arguments is None:
                raise check.violation(
                    where, f"{where} is a function_call without call_id, name and arguments"
                )
            items.append(FunctionCallItem(call_id=w.call_id, name=w.name, arguments=w.arguments))
        elif w.type == "reasoning":
            content = (
                None
                if w.content is None
                else [
                    _reasoning_text(check, f"{where}.content[{j}]", p)
                    for j, p in enumerate(w.content)
                ]
            )
            items.append(ReasoningItem(summary=w.summary or [], content=content))
        else:
            raise check.violation(
                f"{where}.type",
                f"the reply does not have the expected shape: {where}.type is {w.type!r}, not "
                "message, function_call or reasoning",
            )
    return Reply(
        status=reply.status,
        output=items,
        model=reply.model,
        incomplete_details=reply.incomplete_details,
        error=reply.error,
        usage=reply.usage,
        max_output_tokens=reply.max_output_tokens,
    )


def _part(check: Checker, where: str, p: _WirePart) -> OutputText | Refusal:
    if p.type == "output_text" and p.text is not None:
        return OutputText(text=p.text, logprobs=p.logprobs)
    if p.type == "refusal" and p.refusal is not None:
        return Refusal(refusal=p.refusal)
    raise check.violation(
        where,
        f"the reply does not have the expected shape: {where} is a {p.type!r} part without its "
        "text (output_text) or refusal (refusal)",
    )


def _reasoning_text(check: Checker, where: str, p: _WirePart) -> Text:
    if p.text is None:
        raise check.violation(
            where, f"the reply does not have the expected shape: {where} has no text"
        )
    return Text(text=p.text)
