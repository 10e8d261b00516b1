"""The reply declaration: where a wire keeps each value of a ``Response``, and the rules to read
it by (``reading.py`` is the one walker that reads it, as ``table.py`` walks request rows).

A dialect declares ``Reply(type=..., ...)``:

* ``type``: the reply Struct (only the fields read; a stream folds into it);
* ``choices``: where the choices are (``Choices``: ordered by index, 0..n-1 each once), or a
  wire's own function (one answer per reply, SGLang's list-or-object);
* per choice, accessors: ``text``, ``finish``, ``stop``, ``reasoning``; ``calls`` (``ToolCalls``:
  where each call's id, name and arguments sit); the channel readers ``sampled`` and
  ``token_ids``, and ``top_k`` (``channels.TopK``: the wire's top-k rule, which they apply);
  ``structured`` (``Structured``: the path named and the finish that cuts it);
* per reply: ``usage`` (``channels.UsageAt``, or a wire's function), ``model``, ``fingerprint``,
  the channel reader ``input``, ``clamp`` (``Clamp``: how the wire shows a shortened budget);
* ``checks``: the wire's own checks and notes, at named points (``Checks``).

A channel reader is a function of the ``Read`` (what the walker knows so far) built on
``channels.py``'s primitives: the primitives hold every rule several wires share; what is left in
a reader is the wire's own shape (echoed prompts, ``prompt_logprobs``, SGLang's triples).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from msgspec import UNSET

from ..ir.request import Request
from ..ir.response import Choice, Token, Usage
from .channels import TopK, UsageAt
from .reply_checks import Checker
from .vocabulary import Lowered

__all__ = [
    "Checks",
    "Choices",
    "Clamp",
    "InputRead",
    "Read",
    "Reply",
    "Structured",
    "ToolCalls",
    "nothing",
    "unset",
]


def nothing(value: Any) -> Any:
    """The accessor of a value the wire does not have."""
    return None


def unset(value: Any) -> Any:
    """The accessor of a stop reason the wire does not have (``None`` would say it has one)."""
    return UNSET


@dataclass(slots=True)
class Read:
    """What the walker knows of one reply so far, handed to every reader and check."""

    check: Checker
    lowered: Lowered
    reply: Any
    choices: Sequence[Any] = ()
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)
    inputs: InputRead | None = None
    top_k: TopK = field(default_factory=TopK)
    """The wire's top-k rule (``Reply.top_k``), for the channel readers."""

    @property
    def request(self) -> Request:
        return self.lowered.request

    @property
    def dialect(self) -> str:
        return self.check.dialect


@dataclass(frozen=True)
class InputRead:
    """What an ``input`` reader found: the scored prompt, and (echo scoring, where the prompt and
    the generations share one list) each choice's text and sampled tokens."""

    tokens: tuple[Token, ...]
    texts: list[str] | None = None
    sampled: list[tuple[Token, ...]] | None = None


@dataclass(frozen=True)
class Choices:
    """The reply's choices at ``of(reply)``, ordered by ``.index``: exactly 0..n-1, each once
    (``path`` names them in the refusal)."""

    of: Callable[[Any], Sequence[Any]] = attrgetter("choices")
    path: str = "choices[].index"


def itself(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class ToolCalls:
    """Where a choice's tool calls are: ``call`` of each item of ``of`` (``None`` for an item
    that is not a call: a text part), and each call's id, name and arguments (JSON text, parsed
    by ``channels.tool_arguments``, or already an object). ``id`` gets the call and its position
    among the calls (Google's calls carry no id). ``path`` names item ``j`` of choice ``i``."""

    of: Callable[[Any], Sequence[Any] | None]
    path: str
    id: Callable[[Any, int], str]
    call: Callable[[Any], Any] = itself
    name: Callable[[Any], str] = attrgetter("name")
    arguments: Callable[[Any], Any] = attrgetter("arguments")


@dataclass(frozen=True)
class Structured:
    """The structured output is the choice's text, parsed (``Checker.json_value``): ``path``
    names it for choice ``i``; a choice that ended with ``cut`` (its finish) was cut at the
    budget, which the refusal says."""

    path: str
    cut: str
    refusal: Callable[[Any], str | None] = nothing
    """The choice's refusal text, where the wire has one: a refusal with no text is refused as
    what came in place of the structured output."""


@dataclass(frozen=True)
class Clamp:
    """How the wire shows a budget it shortened to fit its context window.

    By its finish (``finish``, before the asked budget): the count of tokens made is ``made`` of
    the choice when the wire gives one, else the sampled tokens read, else the usage's output
    when there is one choice. Or by echoing the budget it applied (``echo`` of the reply: Responses'
    ``max_output_tokens``). ``who``, ``server`` and ``field`` word the warning; ``prompt`` says
    whether it names the prompt's size."""

    finish: str = "length"
    made: Callable[[Any], int | None] = nothing
    echo: Callable[[Any], int | None] | None = None
    who: str = "choice {i}"
    server: str = "the server"
    field: str = "max_tokens"
    prompt: bool = True


def _never(read: Read, *args: Any) -> None:
    return None


@dataclass(frozen=True)
class Checks:
    """A wire's own checks and notes, at the walker's named points; each may raise through
    ``read.check`` or append to ``read.warnings``.

    ``before(read)``: the reply as a whole, before its choices are read;
    ``choice(read, choice, i, calls)``: one choice, its tool calls parsed, before its text;
    ``after(read, lifted)``: the lifted choices, before the clamp warning.
    """

    before: Callable[[Read], None] = _never
    choice: Callable[[Read, Any, int, tuple[Any, ...]], None] = _never
    after: Callable[[Read, list[Choice]], None] = _never


SampledReader = Callable[[Read, Any, int], "tuple[Token, ...] | Any"]
"""A choice's sampled tokens (``Read``, the choice, its position): the tuple, or ``UNSET``."""


@dataclass(frozen=True)
class Reply:
    """Where each value of a ``Response`` sits in a wire's reply, and how it is read."""

    type: Any
    text: Callable[[Any], str]
    finish: Callable[[Any], Any]
    usage: UsageAt | Callable[[Read], Usage]
    usage_of: Callable[[Any], Any] = attrgetter("usage")
    """Where the usage Struct is in the reply (for a ``UsageAt``)."""
    choices: Choices | Callable[[Read], Sequence[Any]] = Choices()
    prepare: Callable[[Checker, Any], Any] | None = None
    """The decoded reply made readable before anything else (Responses' untagged decode)."""
    stop: Callable[[Any], Any] = unset
    """The stop reason as the Response keeps it (``None`` is kept: the wire said null)."""
    reasoning: Callable[[Any], Any] = nothing
    calls: ToolCalls | None = None
    sampled: SampledReader | None = None
    top_k: TopK = field(default_factory=TopK)
    """What makes the wire's list of alternatives an exact top-k (``channels.TopK``): k + 1 on
    vLLM's chat and responses routes, at least k on Google, exactly k sorted on SGLang."""
    token_ids: Callable[[Read, Any, int], tuple[int, ...] | Any] | None = None
    """The choice's token ids, or ``UNSET``; asked or not (SGLang gives them unasked)."""
    structured: Structured | None = None
    input: Callable[[Read], InputRead] | None = None
    model: Callable[[Any], Any] = nothing
    fingerprint: Callable[[Any], Any] = nothing
    clamp: Clamp | None = None
    checks: Checks = Checks()
