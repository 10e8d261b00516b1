"""Response channels: what a request asks for, and where the answer lives in a ``Response``.

A channel is *requested* when its trigger leaf is active. Each dialect gives every channel a
guarantee (``present_or_error``, ``best_effort``, ``never``); the plane checks replies against it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from msgspec import UNSET

from .request import Request
from .response import Choice, Response

__all__ = ["CHANNELS", "Channel", "Guarantee", "requested_channels"]


class Guarantee(StrEnum):
    PRESENT_OR_ERROR = "present_or_error"
    BEST_EFFORT = "best_effort"
    NEVER = "never"


@dataclass(frozen=True)
class Channel:
    name: str
    requested: Callable[[Request], bool]
    present: Callable[[Response], bool]
    doc: str


def _every_choice(check: Callable[[Choice], bool]) -> Callable[[Response], bool]:
    return lambda r: bool(r.choices) and all(check(c) for c in r.choices)


def _any_choice(check: Callable[[Choice], bool]) -> Callable[[Response], bool]:
    return lambda r: any(check(c) for c in r.choices)


def _has_top(tokens: object) -> bool:
    return isinstance(tokens, tuple) and any(t.top is not UNSET for t in tokens)


def _has_ids(tokens: object) -> bool:
    return isinstance(tokens, tuple) and all(t.token_id is not UNSET for t in tokens)


_CHANNEL_LIST = (
    Channel(
        "input_logprobs",
        lambda q: q.scoring.input_logprobs,
        lambda r: r.input_tokens is not UNSET,
        "log-probabilities of the input tokens, with offsets into the prompt",
    ),
    Channel(
        "input_top_k",
        lambda q: q.scoring.input_logprobs and q.scoring.input_top_k > 0,
        lambda r: _has_top(r.input_tokens),
        "top-k alternatives at each input position",
    ),
    Channel(
        "sampled_logprobs",
        lambda q: q.scoring.sampled_logprobs,
        _every_choice(lambda c: c.tokens is not UNSET),
        "log-probabilities of the sampled tokens, per choice",
    ),
    Channel(
        "sampled_top_k",
        lambda q: q.scoring.sampled_logprobs and q.scoring.sampled_top_k > 0,
        _every_choice(lambda c: c.tokens is not UNSET and (not c.tokens or _has_top(c.tokens))),
        "top-k alternatives at each sampled position, per choice",
    ),
    Channel(
        "token_ids",
        lambda q: q.scoring.token_ids,
        _every_choice(lambda c: c.token_ids is not UNSET),
        "token ids of sampled tokens (and of input tokens when they are scored)",
    ),
    Channel(
        "structured_output",
        lambda q: q.structured_output.format != "text",
        _every_choice(lambda c: c.structured_output is not UNSET),
        "the parsed structured output, per choice",
    ),
    Channel(
        "reasoning",
        lambda q: q.reasoning.summary is not UNSET,
        _any_choice(lambda c: c.reasoning is not UNSET),
        "reasoning text, per choice",
    ),
    Channel(
        "tool_calls",
        lambda q: False,  # offering tools never obliges the model to call one
        _any_choice(lambda c: c.tool_calls is not UNSET),
        "function calls the model made, per choice",
    ),
    Channel(
        "usage",
        lambda q: False,
        lambda r: r.usage.input_tokens is not UNSET or r.usage.output_tokens is not UNSET,
        "token counts as the server reported them",
    ),
)

CHANNELS: dict[str, Channel] = {c.name: c for c in _CHANNEL_LIST}


def requested_channels(request: Request) -> tuple[str, ...]:
    return tuple(name for name, c in CHANNELS.items() if c.requested(request))
