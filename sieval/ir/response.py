"""The provider-neutral response: per-choice channels plus per-request provenance.

Absent, null and zero stay distinct: a channel the server did not return is ``UNSET``, and a
usage count the server did not report is ``UNSET``, never 0.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from .request import IRStruct

__all__ = [
    "LENGTH_FINISHES",
    "Choice",
    "Decision",
    "Response",
    "StructuredValue",
    "Token",
    "ToolCall",
    "TopEntry",
    "Usage",
    "ended_for_length",
]

LENGTH_FINISHES = frozenset({"length", "max_output_tokens", "max_tokens", "MAX_TOKENS"})
"""Each wire's word for an answer its token budget ended (``Choice.finish_reason`` keeps the
server's own): ``length`` (OpenAI's completions and chat, vLLM's and SGLang's native routes),
``max_output_tokens`` (OpenAI's responses), ``max_tokens`` (Anthropic's messages),
``MAX_TOKENS`` (Google's generateContent). A dialect's reply declaration names its word; a test
checks that each is here."""


def ended_for_length(finish: object) -> bool:
    """Whether a finish reason (a server's own word, or none) says the token budget ended the
    answer, on any wire: what "cut", "truncated" and "censored" are read from."""
    return isinstance(finish, str) and finish in LENGTH_FINISHES


# A reply holds thousands of these (a token per position, k alternatives each), and they hold
# nothing that could refer back to them: untracked by the cycle collector (gc=False), which
# would otherwise walk every one of them on each collection during a lift.
class TopEntry(IRStruct, frozen=True, gc=False):
    """One alternative at a position."""

    token: str
    logprob: float
    token_id: int | UnsetType = UNSET


class Token(IRStruct, frozen=True, gc=False):  # untracked, as TopEntry
    """One input or sampled token."""

    text: str
    """The token as the server decoded it (a BOS reads e.g. ``<bos>`` and covers no text)."""
    logprob: float | UnsetType | None = UNSET
    """Natural-log probability; ``None`` only for the unscored first input position."""
    token_id: int | UnsetType = UNSET
    offset: int | UnsetType = UNSET
    """Character offset where the token starts in its text (the prompt for input tokens, the
    choice's text for sampled ones); a token spans up to the next token's offset."""
    top: tuple[TopEntry, ...] | UnsetType = UNSET
    """The top-k alternatives, most likely first; the scored token is marked by ``scored_rank``."""
    scored_rank: int | UnsetType = UNSET
    """Index in ``top`` of this token, or -1 when it is not among the top-k."""
    candidates: tuple[TopEntry, ...] | UnsetType = UNSET
    """The requested candidate ids' logprobs at this position (``scoring.candidate_token_ids``),
    in the order asked."""


class StructuredValue(IRStruct, frozen=True):
    """A parsed structured output; the wrapper keeps JSON ``null`` apart from "absent"."""

    value: Any


class ToolCall(IRStruct, frozen=True):
    call_id: str
    name: str
    arguments: dict[str, Any]


class Choice(IRStruct, frozen=True):
    index: int
    text: str
    """The generated text only (never the echoed prompt)."""
    finish_reason: str | UnsetType = UNSET
    """The server's own word (``stop``, ``length``, ...), not normalised."""
    stop_reason: str | int | UnsetType | None = UNSET
    tokens: tuple[Token, ...] | UnsetType = UNSET
    """Sampled tokens with logprobs (and top-k, ids) when requested."""
    token_ids: tuple[int, ...] | UnsetType = UNSET
    structured_output: StructuredValue | UnsetType = UNSET
    reasoning: str | UnsetType = UNSET
    tool_calls: tuple[ToolCall, ...] | UnsetType = UNSET


class Usage(IRStruct, frozen=True):
    input_tokens: int | UnsetType = UNSET
    output_tokens: int | UnsetType = UNSET
    cached_tokens: int | UnsetType = UNSET
    reported_total_tokens: int | UnsetType = UNSET
    """The server's own total, kept only when it disagrees with input + output."""
    reasoning_tokens: int | UnsetType = UNSET
    """Output tokens spent on reasoning, when the server reports them (part of output_tokens)."""

    @property
    def total_tokens(self) -> int | UnsetType:
        if self.input_tokens is UNSET or self.output_tokens is UNSET:
            return UNSET
        return self.input_tokens + self.output_tokens


class Decision(IRStruct, frozen=True):
    """What a dialect did with one request leaf, before any I/O."""

    leaf: str
    """The leaf, dotted; list elements carry their index
    (``input.chat.messages[2].content[0].image``)."""
    outcome: Literal["consumed", "noop", "refused", "defaulted"]
    """``consumed``: written to ``path``; ``noop``: dropping it changes nothing (``reason``);
    ``refused``: it cannot be honoured (``reason``); ``defaulted``: the request left it unset and
    the wire requires it, so ``path`` was filled (``reason`` says with what and why)."""
    path: str | UnsetType = UNSET
    """The wire body path written (list indices included), for consumed and defaulted leaves."""
    reason: str | UnsetType = UNSET
    """Why, for noop, refused and defaulted leaves."""

    @property
    def detail(self) -> str:
        """The path when consumed, else the reason: one line for a table."""
        if self.outcome == "consumed":
            return str(self.path)
        if self.outcome == "defaulted":
            return f"{self.path} ({self.reason})"
        return str(self.reason)


class Response(IRStruct, frozen=True):
    """What the server answered, checked. What was sent and how long it took is in ``Call``."""

    choices: tuple[Choice, ...]
    input_tokens: tuple[Token, ...] | UnsetType = UNSET
    """Scored input tokens, first unscored, with offsets into the prompt text."""
    usage: Usage = msgspec.field(default_factory=Usage)
    model: str | UnsetType = UNSET
    """The model id the server reported."""
    system_fingerprint: str | UnsetType = UNSET
    dialect: str | UnsetType = UNSET
    warnings: tuple[str, ...] = ()
    """Facts about this reply a reader must know (e.g. the server shortened max_tokens)."""
