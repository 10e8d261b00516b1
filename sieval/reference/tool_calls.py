"""Deterministic tool calls: which tools a conversation calls, written as the live server writes
them and read back by a hermes-style parser (with the parser faults a real server can have).

Every chat wire turns its body into the chat template's message list (``{"role", "content"}``,
plus ``tool_calls`` ``[{"id", "name", "arguments"}]`` on an assistant turn and ``tool_call_id`` /
``name`` on a ``tool`` turn) and its tool fields into an :class:`Offer`. Then:

**Which tools** (:func:`decide`), read from the latest user turn:

* a tool whose name appears in that turn is called, once per mention, in the order of the
  mentions; the words after a mention (up to the next one) are that call's own text, so
  ``get_weather for Paris and get_weather for London`` makes two calls with different cities;
* when no name appears, the tool sharing the most content words with the turn (its name's parts
  and its description) is called, if it shares any; otherwise ``auto`` calls nothing;
* calls already made since that turn (assistant turns after it) are not made again, so a loop
  that answers one call per turn walks through the mentions and then gets a text answer;
* ``required`` (``any``, ``ANY``) calls what ``auto`` would, else the tools named in the turn
  again, else the first tool; a named choice calls exactly that tool once; ``none`` nothing;
* when parallel calls are not allowed, only the first is made.

**Arguments**: :func:`sieval.reference.arguments.arguments` from the call's text.

**Generated, then parsed**: a reply that calls writes each call's arguments as JSON, token by
token like any answer (so ``max_tokens`` and stop strings cut it, and a cut call is left as
text, as on vLLM); the name and the hermes ``<tool_call>`` markup around the arguments are
structure that costs no tokens (the live vLLM's structural tag forces them, and they would cost
the reference's character-level tokenizer some 60 tokens a call). :func:`extract` is the parser
every wire reads its calls back with; a server's parser fault (:data:`PARSER_FAULTS`) changes
what it returns. Call ids are ``chatcmpl-tool-`` plus 16 hex digits, as vLLM's, but derived
from the conversation (the same request gets the same ids).

**After tool results** (:func:`follow_up`): when the conversation ends with tool turns and no
call is made, the answer quotes each result: ``get_weather returned {"temperature_c": 18}.``
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .arguments import arguments, content_words
from .chat_template import message_text

__all__ = [
    "PARSER_FAULTS",
    "Call",
    "Mode",
    "Offer",
    "Tool",
    "call_id",
    "decide",
    "extract",
    "follow_up",
    "markup",
    "script",
]

Mode = Literal["none", "auto", "required", "named"]
"""How a request lets its tools be called (each wire's words mapped onto these)."""

PARSER_FAULTS = frozenset({"tool-calls-as-text", "tool-call-dropped", "tool-calls-empty"})
"""The fault modes of a server whose tool parser loses calls (``faults.py`` lists them)."""

_START, _END = "<tool_call>", "</tool_call>"


@dataclass(frozen=True)
class Tool:
    """One function tool as offered: its name, description and JSON schema."""

    name: str
    description: str = ""
    schema: Any = None


@dataclass(frozen=True)
class Offer:
    """The tools of a request and how it lets them be called."""

    tools: tuple[Tool, ...]
    mode: Mode = "auto"
    named: str | None = None
    """The tool a named choice names."""
    parallel: bool = True
    """Whether more than one call may be made in one reply."""
    allowed: tuple[str, ...] | None = None
    """Google's ``allowedFunctionNames``: the only tools that may be called (None: all)."""

    @property
    def active(self) -> bool:
        """Whether the reply is read for calls (tools offered and a choice other than none)."""
        return bool(self.tools) and self.mode != "none"


@dataclass(frozen=True)
class Call:
    """One call: the tool's name and its arguments (a JSON value, an object when generated)."""

    name: str
    arguments: Any

    @property
    def arguments_json(self) -> str:
        """The arguments as vLLM's hermes parser writes them (``json.dumps``, non-ASCII kept)."""
        return json.dumps(self.arguments, ensure_ascii=False)


# -- which tools ----------------------------------------------------------------------------------


def _latest_user(messages: Sequence[dict[str, Any]]) -> tuple[str, int]:
    """The text of the latest user turn and the index after it (0 and "" when none)."""
    for at in range(len(messages) - 1, -1, -1):
        if messages[at].get("role") == "user":
            return message_text(messages[at].get("content")), at + 1
    return "", 0


def _called(messages: Sequence[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            name = str(call.get("name"))
            counts[name] = counts.get(name, 0) + 1
    return counts


def _mentions(text: str, tools: Sequence[Tool]) -> list[tuple[Tool, str]]:
    """Each mention of a tool's name, in order, with the words that follow it."""
    found: list[tuple[int, int, Tool]] = []
    for tool in tools:
        pattern = rf"(?<![\w.]){re.escape(tool.name)}(?![\w])"
        found += [(m.start(), m.end(), tool) for m in re.finditer(pattern, text, re.IGNORECASE)]
    found.sort(key=lambda f: (f[0], -f[1]))
    out = []
    for i, (_, end, tool) in enumerate(found):
        stop = found[i + 1][0] if i + 1 < len(found) else len(text)
        out.append((tool, text[end:stop]))
    return out


def _closest(text: str, tools: Sequence[Tool]) -> Tool | None:
    """The tool sharing the most content words with ``text`` (the first on a tie), if any."""
    words = set(content_words(text))
    best, score = None, 0
    for tool in tools:
        name = re.sub(r"([a-z])([A-Z])", r"\1 \2", tool.name).replace("_", " ").replace(".", " ")
        shared = len(words & set(content_words(f"{name} {tool.description}")))
        if shared > score:
            best, score = tool, shared
    return best


def decide(messages: Sequence[dict[str, Any]], offer: Offer) -> tuple[Call, ...]:
    """The calls the reply makes (none: a text answer); see the module docstring."""
    if not offer.active:
        return ()
    tools = [t for t in offer.tools if offer.allowed is None or t.name in offer.allowed]
    if not tools:
        return ()
    text, after = _latest_user(messages)
    if offer.mode == "named":
        picked = [(t, text) for t in tools if t.name == offer.named][:1]
    else:
        mentioned = _mentions(text, tools)
        if not mentioned:
            closest = _closest(text, tools)
            mentioned = [(closest, text)] if closest is not None else []
        made = _called(messages[after:])
        fresh = []
        for tool, segment in mentioned:
            if made.get(tool.name, 0) > 0:
                made[tool.name] -= 1
            else:
                fresh.append((tool, segment))
        picked = fresh
        if offer.mode == "required" and not picked:
            picked = mentioned or [(tools[0], text)]
    if not offer.parallel:
        picked = picked[:1]
    return tuple(Call(tool.name, arguments(tool.schema, seg, text)) for tool, seg in picked)


# -- the calls as generated text, and read back ---------------------------------------------------


def script(calls: Sequence[Call], fault: str | None = None) -> str:
    """The text a reply generates for its calls: each call's arguments as JSON, one line per
    call (the name and the ``<tool_call>`` markup around each are the structure vLLM's
    structural tag forces; here they cost no tokens). On a server whose parser fails
    (``tool-calls-as-text``) the model writes the whole hermes markup, which stays text."""
    if fault == "tool-calls-as-text":
        return markup(calls)
    return "\n".join(json.dumps(call.arguments, ensure_ascii=False) for call in calls)


def markup(calls: Sequence[Call]) -> str:
    """The calls as a hermes-template model writes them."""
    blocks = []
    for call in calls:
        body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
        blocks.append(f"{_START}\n{body}\n{_END}")
    return "\n".join(blocks)


def extract(text: str, calls: Sequence[Call], fault: str | None = None) -> tuple[Call, ...] | None:
    """The calls read back from a reply's generated ``text`` (:func:`script` of ``calls``), as a
    parser does: ``None`` when there were none or one does not parse (cut by ``max_tokens`` or a
    stop string): the text is then the answer, as on vLLM. ``fault`` (:data:`PARSER_FAULTS`):
    the calls stay text, the last of two or more is dropped, or none come back."""
    if not calls or fault == "tool-calls-as-text":
        return None
    lines = text.split("\n")
    if len(lines) != len(calls):
        return None
    try:
        read = tuple(Call(c.name, json.loads(line)) for c, line in zip(calls, lines, strict=True))
    except ValueError:
        return None
    if fault == "tool-call-dropped" and len(read) > 1:
        return read[:-1]
    if fault == "tool-calls-empty":
        return ()
    return read


def call_id(
    messages: Sequence[dict[str, Any]], index: int, prefix: str = "chatcmpl-tool-", choice: int = 0
) -> str:
    """A call's id: vLLM's form (``chatcmpl-tool-`` and 16 hex digits) from a hash of the
    conversation and the call's place (its index, and its choice's), so a repeated request gets
    the same ids."""
    seed = json.dumps([list(messages), index, prefix, choice], sort_keys=True, default=str)
    return prefix + hashlib.sha256(seed.encode()).hexdigest()[:16]


# -- after tool results ---------------------------------------------------------------------------


def follow_up(messages: Sequence[dict[str, Any]]) -> str | None:
    """The answer to a conversation that ends with tool results: each result quoted after the
    name of the tool that gave it (the turn's own name, else the call its id answers); None when
    the last turn is not a tool result."""
    results = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.append(message)
    if not results:
        return None
    names = {
        str(call["id"]): str(call.get("name"))
        for message in messages
        for call in message.get("tool_calls") or []
        if call.get("id") is not None
    }
    said = []
    for message in reversed(results):
        known = names.get(str(message.get("tool_call_id")))
        name = message.get("name") or known or "the tool"
        said.append(f"{name} returned {message_text(message.get('content')).strip()}.")
    return " ".join(said)
