"""Chat input as a table: where each message goes, and how each part is written.

A chat dialect's ``input.chat.*`` row is ``conversation(place, parts, ...)``: a ``Group`` that
walks the messages and, for each part, calls the converter for its kind. Converters see the
element they decide (the ``TextPart``, the ``ImagePart``, ...) and return an ``Append`` or a
``Refuse``; the walker gives every element its index and its ledger entry, with evidence paths
that index lists (``messages[2].content[0].image_url``).

``place(index, message)`` says where one message goes:

* ``Slot("messages", {"role": "user"})``: a new element of the body list ``messages`` holding
  those fields; its parts go to the list ``content`` inside it (``Slot.content``);
* ``Slot(None, content="system")``: no element of its own; its parts go to the body list
  ``system`` (Anthropic's top-level system prompt; Google's ``systemInstruction.parts``);
* a ``Refuse`` for a role the wire has no place for.

An ``Append`` goes to its message's content list by default; a target starting with ``.`` is
relative to the message's element (OpenAI's ``.tool_calls``), any other target is a body list
(Responses puts a function call in ``input`` beside the messages).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
from msgspec import UNSET

from ..ir.request import ChatInput, Message, Part
from .vocabulary import Evidence, Group, GroupInput, NoOp, Outcome, Refuse, Write

__all__ = ["KINDS", "Append", "PartRow", "Slot", "conversation"]

KINDS = ("text", "image", "tool_call", "tool_result")
"""The part kinds of the IR (their tags)."""


@dataclass(frozen=True)
class Slot:
    """Where one message goes (see the module docstring)."""

    list: str | None
    fields: Mapping[str, Any] = field(default_factory=dict)
    content: str = "content"
    name: Outcome | None = None
    """The outcome for the message's ``name`` when it has one (``None``: refused)."""
    joins: bool = False
    """A message right after another placed with ``joins`` in the same list with the same fields
    adds its parts to that element instead of a new one (Google: every function response of a
    turn in one Content, which Gemini requires after parallel calls)."""


@dataclass(frozen=True)
class Append:
    """A part as the wire writes it, appended to ``target`` ("" = its message's content list).

    ``fields`` decide the part's optional fields that are set: a path inside ``value`` (their
    evidence), or a ``NoOp``/``Refuse``; an optional field without an entry is refused.
    """

    value: Any
    target: str = ""
    fields: Mapping[str, str | NoOp | Refuse] = field(default_factory=dict)


PartRow = Callable[[Any, Message], Append | Refuse]
"""A converter for one part kind: ``(part, its message) -> Append | Refuse``."""


@functools.cache
def _optional(cls: type[msgspec.Struct]) -> tuple[str, ...]:
    return tuple(f.name for f in msgspec.structs.fields(cls) if not f.required)


def _set_fields(part: Part) -> list[str]:
    """The optional fields of a part that are set, named as their leaves are (``detail``)."""
    return [name for name in _optional(type(part)) if getattr(part, name) is not UNSET]


def conversation(
    place: Callable[[int, Message], Slot | Refuse],
    parts: Mapping[str, PartRow | Refuse],
    *,
    keys: tuple[str, ...],
    doc: str,
) -> Group:
    """The ``input.chat.*`` row of a chat dialect.

    ``parts`` maps each part kind of ``KINDS`` to its converter or a refusal; ``keys`` are the
    top-level body keys messages and parts land in.
    """
    if set(parts) != set(KINDS):
        raise AssertionError(f"parts must decide exactly {KINDS}, got {sorted(parts)}")

    def decide(group: GroupInput) -> dict[str, Outcome]:
        chat: ChatInput = group.value
        counters: dict[str, int] = {}
        out: dict[str, Outcome] = {}

        def allocate(target: str) -> str:
            index = counters.get(target, 0)
            counters[target] = index + 1
            return f"{target}[{index}]"

        joined: tuple[Slot, str] | None = None  # the last element a joining message opened
        for i, message in enumerate(chat.messages):
            at = f"input.chat.messages[{i}]"
            slot = place(i, message)
            if isinstance(slot, Refuse):
                out[at] = slot
                joined = None
                _refuse_parts(out, at, message, "its message has no place on this wire")
                continue
            previous, joined = joined, None
            if slot.joins and previous is not None and previous[0] == slot:
                element = previous[1]
                content = f"{element}.{slot.content}"
                out[at] = Evidence(element)
                joined = previous
            elif slot.list is None:
                element, content = "", slot.content
                out[at] = Evidence(content) if message.content else NoOp("a message without parts")
            else:
                element = allocate(slot.list)
                content = f"{element}.{slot.content}"
                out[at] = Write(element, dict(slot.fields))
                joined = (slot, element) if slot.joins else None
            if message.name is not UNSET:
                out[f"{at}.name"] = slot.name or Refuse("this wire has no message names")
            for j, part in enumerate(message.content):
                kind = str(type(part).__struct_config__.tag)
                leaf = f"{at}.content[{j}].{kind}"
                row = parts[kind]
                placed = row if isinstance(row, Refuse) else row(part, message)
                if isinstance(placed, Refuse):
                    out[leaf] = placed
                    for name in _set_fields(part):
                        out[f"{leaf}.{name}"] = Refuse(f"its {kind} part is refused")
                    continue
                target = placed.target or content
                if target.startswith("."):
                    if not element:
                        out[leaf] = Refuse(f"a {message.role} message has no element for a {kind}")
                        continue
                    target = element + target
                path = allocate(target)
                out[leaf] = Write(path, placed.value)
                for name in _set_fields(part):
                    decision = placed.fields.get(name, Refuse(f"this wire cannot express {name}"))
                    if isinstance(decision, str):
                        out[f"{leaf}.{name}"] = Evidence(f"{path}.{decision}")
                    else:
                        out[f"{leaf}.{name}"] = decision
        top = next((target for target in counters if "[" not in target), None)
        out["input.chat.messages"] = Evidence(top) if top else NoOp("each message is refused")
        return out

    return Group(decide, keys, doc)


def _refuse_parts(out: dict[str, Outcome], at: str, message: Message, reason: str) -> None:
    if message.name is not UNSET:
        out[f"{at}.name"] = Refuse(reason)
    for j, part in enumerate(message.content):
        leaf = f"{at}.content[{j}].{type(part).__struct_config__.tag}"
        out[leaf] = Refuse(reason)
        for name in _set_fields(part):
            out[f"{leaf}.{name}"] = Refuse(reason)
