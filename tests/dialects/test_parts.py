"""Chat input as a table: each message placed, each part converted where it stands, every element
in the ledger with an indexed evidence path."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sieval.dialects.parts import Append, Slot, conversation
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lower
from sieval.dialects.vocabulary import NoOp, Refuse
from sieval.errors import Refused
from sieval.ir.request import (
    ChatInput,
    ImagePart,
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

BASE = get_dialect("openai_completions")


def openai_like(i: int, message: Message) -> Slot | Refuse:
    if message.role == "developer":
        return Refuse("no developer role here")
    return Slot("messages", {"role": message.role}, name=NoOp("names are dropped here"))


def text(part: TextPart, message: Message) -> Append:
    return Append({"type": "text", "text": part.text})


def image(part: ImagePart, message: Message) -> Append | Refuse:
    if part.url is msgspec_unset():
        return Refuse("only image URLs")
    fields: dict[str, Any] = {"url": "image_url.url", "detail": "image_url.detail"}
    value = {"type": "image_url", "image_url": {"url": part.url}}
    if part.detail is not msgspec_unset():
        value["image_url"]["detail"] = part.detail
    return Append(value, fields=fields)


def tool_call(part: ToolCallPart, message: Message) -> Append:
    return Append({"id": part.call_id, "name": part.name}, target=".tool_calls")


def msgspec_unset() -> Any:
    import msgspec

    return msgspec.UNSET


def dialect(place=openai_like, **parts: Any):
    table = {
        "text": text,
        "image": image,
        "tool_call": tool_call,
        "tool_result": Refuse("no tool results here"),
        **parts,
    }
    rows = dict(BASE.rows)
    rows["input.chat.*"] = conversation(
        place, table, keys=("messages", "system", "input"), doc="test"
    )
    return dataclasses.replace(BASE, rows=rows)


def chat(*messages: Message) -> Request:
    return Request(input=ChatInput(messages=messages))


def test_messages_and_parts_land_at_indexed_paths_with_their_own_ledger_entries() -> None:
    request = chat(
        Message(role="system", content=(TextPart(text="be brief"),)),
        Message(
            role="user",
            content=(
                TextPart(text="what is this?"),
                ImagePart(url="http://x/cat.png", detail="low"),
            ),
        ),
        Message(
            role="assistant",
            content=(
                TextPart(text="let me look"),
                ToolCallPart(call_id="c1", name="zoom", arguments={}),
            ),
        ),
    )
    lowered = lower(dialect(), request, "m")
    assert lowered.body["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "be brief"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "http://x/cat.png", "detail": "low"}},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "let me look"}],
            "tool_calls": [{"id": "c1", "name": "zoom"}],
        },
    ]
    ledger = {d.leaf: (d.outcome, d.path) for d in lowered.ledger}
    assert ledger["input.chat.messages"] == ("consumed", "messages")
    assert ledger["input.chat.messages[1]"] == ("consumed", "messages[1]")
    assert ledger["input.chat.messages[1].content[1].image"] == (
        "consumed",
        "messages[1].content[1]",
    )
    assert ledger["input.chat.messages[1].content[1].image.url"] == (
        "consumed",
        "messages[1].content[1].image_url.url",
    )
    assert ledger["input.chat.messages[1].content[1].image.detail"] == (
        "consumed",
        "messages[1].content[1].image_url.detail",
    )
    assert ledger["input.chat.messages[2].content[1].tool_call"] == (
        "consumed",
        "messages[2].tool_calls[0]",
    )


def test_a_message_without_an_element_puts_its_parts_in_a_body_list() -> None:
    def anthropic_like(i: int, message: Message) -> Slot:
        if message.role == "system":
            return Slot(None, content="system")
        return Slot("messages", {"role": message.role})

    request = chat(
        Message(role="system", content=(TextPart(text="a"), TextPart(text="b"))),
        Message(role="user", content=(TextPart(text="hi"),)),
    )
    lowered = lower(dialect(anthropic_like), request, "m")
    assert lowered.body["system"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert lowered.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["input.chat.messages[0]"] == "system"
    assert ledger["input.chat.messages[0].content[1].text"] == "system[1]"
    assert ledger["input.chat.messages"] == "system"


def test_an_absolute_target_shares_the_body_list_with_the_messages() -> None:
    def responses_like(i: int, message: Message) -> Slot:
        return Slot("input", {"type": "message", "role": message.role})

    def call_item(part: ToolCallPart, message: Message) -> Append:
        return Append({"type": "function_call", "call_id": part.call_id}, target="input")

    request = chat(
        Message(role="user", content=(TextPart(text="hi"),)),
        Message(role="assistant", content=(ToolCallPart(call_id="c9", name="f", arguments={}),)),
        Message(role="user", content=(TextPart(text="again"),)),
    )
    lowered = lower(dialect(responses_like, tool_call=call_item), request, "m")
    assert [item.get("type") for item in lowered.body["input"]] == [
        "message",
        "message",
        "function_call",
        "message",
    ]
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["input.chat.messages[1].content[0].tool_call"] == "input[2]"
    assert ledger["input.chat.messages[2]"] == "input[3]"


@pytest.mark.parametrize(
    ("message", "leaf", "why"),
    [
        (
            Message(role="developer", content=(TextPart(text="x"),)),
            "input.chat.messages[0]",
            "developer",
        ),
        (
            Message(role="tool", content=(ToolResultPart(call_id="c", result=1),)),
            "input.chat.messages[0].content[0].tool_result",
            "no tool results",
        ),
        (
            Message(role="user", content=(ImagePart(data="AAAA", media_type="image/png"),)),
            "input.chat.messages[0].content[0].image",
            "only image URLs",
        ),
    ],
)
def test_what_a_table_refuses_is_refused_at_its_element(
    message: Message, leaf: str, why: str
) -> None:
    with pytest.raises(Refused, match=why) as info:
        lower(dialect(), chat(message), "m")
    assert info.value.path == leaf


def test_an_optional_field_without_a_decision_is_refused() -> None:
    def bare_image(part: ImagePart, message: Message) -> Append:
        return Append({"type": "image_url", "image_url": {"url": part.url}})  # no field decisions

    request = chat(Message(role="user", content=(ImagePart(url="http://x", detail="high"),)))
    with pytest.raises(Refused, match="cannot express url") as info:
        lower(dialect(image=bare_image), request, "m")
    assert info.value.received == [
        "input.chat.messages[0].content[0].image.url",
        "input.chat.messages[0].content[0].image.detail",
    ]


def test_a_message_name_is_decided_by_its_slot() -> None:
    request = chat(Message(role="user", name="ann", content=(TextPart(text="x"),)))
    ledger = {d.leaf: d.outcome for d in lower(dialect(), request, "m").ledger}
    assert ledger["input.chat.messages[0].name"] == "noop"


def test_parts_must_decide_every_kind() -> None:
    with pytest.raises(AssertionError, match="must decide exactly"):
        conversation(openai_like, {"text": text}, keys=("messages",), doc="x")
