"""Response channels: what a request asks for, and where the answer lives in a ``Response``.

A channel is *requested* when its trigger leaf is active (``scoring.input_logprobs`` asks for
``input_logprobs``). Each dialect gives every channel a guarantee (``present_or_error``,
``best_effort``, ``never``); ``dialects/table.py`` refuses a requested channel the wire never
returns before any I/O, and checks every reply against the guarantees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from msgspec import UNSET

from .response import Choice, Response

__all__ = ["CHANNELS", "Channel", "Guarantee", "requested_channels"]


class Guarantee(StrEnum):
    PRESENT_OR_ERROR = "present_or_error"
    """Requested and missing is a contract violation."""
    BEST_EFFORT = "best_effort"
    """Lifted when the reply carries it; its absence is not an error."""
    NEVER = "never"
    """The wire cannot return it: requesting it is refused before I/O."""


@dataclass(frozen=True)
class Channel:
    name: str
    trigger: str | None
    """The request leaf whose activity asks for this channel (None: never asked for)."""
    present: Callable[[Response], bool]
    doc: str


def _every_choice(check: Callable[[Choice], bool]) -> Callable[[Response], bool]:
    return lambda r: bool(r.choices) and all(check(c) for c in r.choices)


def _any_choice(check: Callable[[Choice], bool]) -> Callable[[Response], bool]:
    return lambda r: any(check(c) for c in r.choices)


def _has_top(tokens: object) -> bool:
    return isinstance(tokens, tuple) and any(t.top is not UNSET for t in tokens)


_CHANNEL_LIST = (
    Channel(
        "input_logprobs",
        "scoring.input_logprobs",
        lambda r: r.input_tokens is not UNSET,
        "log-probabilities of the input tokens, with offsets into the prompt",
    ),
    Channel(
        "input_top_k",
        "scoring.input_top_k",
        lambda r: _has_top(r.input_tokens),
        "top-k alternatives at each input position",
    ),
    Channel(
        "sampled_logprobs",
        "scoring.sampled_logprobs",
        _every_choice(lambda c: c.tokens is not UNSET),
        "log-probabilities of the sampled tokens, per choice",
    ),
    Channel(
        "sampled_top_k",
        "scoring.sampled_top_k",
        _every_choice(lambda c: c.tokens is not UNSET and (not c.tokens or _has_top(c.tokens))),
        "top-k alternatives at each sampled position, per choice",
    ),
    Channel(
        "token_ids",
        "scoring.token_ids",
        _every_choice(lambda c: c.token_ids is not UNSET),
        "token ids of sampled tokens (and of input tokens when they are scored)",
    ),
    Channel(
        "candidates",
        "scoring.candidate_token_ids",
        _every_choice(
            lambda c: (
                isinstance(c.tokens, tuple) and all(t.candidates is not UNSET for t in c.tokens)
            )
        ),
        "log-probabilities of requested candidate token ids at each sampled position, per choice",
    ),
    Channel(
        "structured_output",
        "structured_output.format",
        _every_choice(lambda c: c.structured_output is not UNSET),
        "the parsed structured output, per choice",
    ),
    Channel(
        "reasoning",
        "reasoning.summary",
        _any_choice(lambda c: c.reasoning is not UNSET),
        "reasoning text, per choice, never mixed into the answer text",
    ),
    Channel(
        "tool_calls",
        None,  # offering tools never obliges the model to call one
        _any_choice(lambda c: c.tool_calls is not UNSET),
        "function calls the model made, per choice",
    ),
    Channel(
        "usage",
        None,
        lambda r: r.usage.input_tokens is not UNSET or r.usage.output_tokens is not UNSET,
        "token counts as the server reported them",
    ),
)

CHANNELS: dict[str, Channel] = {c.name: c for c in _CHANNEL_LIST}
_BY_TRIGGER = {c.trigger: c.name for c in _CHANNEL_LIST if c.trigger is not None}


def requested_channels(active: Iterable[str]) -> frozenset[str]:
    """The channels the active leaves ask for (``active``: leaf paths of ``active_leaves``)."""
    return frozenset(_BY_TRIGGER[leaf] for leaf in active if leaf in _BY_TRIGGER)
