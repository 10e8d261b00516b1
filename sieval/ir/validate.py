"""Request invariants that a single field type cannot express; each error names its leaf."""

from __future__ import annotations

from msgspec import UNSET

from ..errors import Refused
from .ranges import RANGES, out_of_range
from .request import ChatInput, CompletionInput, ImagePart, Request

__all__ = ["validate"]


def _refuse(path: str, received: object, why: str) -> Refused:
    return Refused(f"invalid request: {path}={received!r} {why}", path=path, received=received)


def validate(request: Request) -> None:
    """Raise ``Refused`` naming the first leaf that breaks an invariant; return None otherwise."""
    _validate_input(request)
    _validate_ranges(request)
    s = request.sampling
    if s.stop is not UNSET and any(stop == "" for stop in s.stop):
        raise _refuse("sampling.stop", s.stop, "must not contain an empty string")
    if s.n > 1 and s.temperature == 0:
        raise _refuse("sampling.n", s.n, "needs temperature > 0: greedy choices are all equal")
    c = request.scoring
    if c.input_top_k and not c.input_logprobs:
        raise _refuse("scoring.input_top_k", c.input_top_k, "needs scoring.input_logprobs=true")
    if c.candidate_token_ids and not c.sampled_logprobs:
        raise _refuse(
            "scoring.candidate_token_ids",
            c.candidate_token_ids,
            "needs scoring.sampled_logprobs=true",
        )
    if c.sampled_top_k and not c.sampled_logprobs:
        raise _refuse(
            "scoring.sampled_top_k", c.sampled_top_k, "needs scoring.sampled_logprobs=true"
        )
    o = request.structured_output
    if o.format == "json_schema" and o.schema is UNSET:
        raise _refuse("structured_output.schema", UNSET, "is required with format json_schema")
    if o.format != "json_schema" and o.schema is not UNSET:
        raise _refuse("structured_output.schema", "<schema>", "is only valid with json_schema")
    r = request.reasoning
    if r.effort is not UNSET and r.budget_tokens is not UNSET:
        raise _refuse("reasoning.budget_tokens", r.budget_tokens, "excludes reasoning.effort")


def _validate_ranges(request: Request) -> None:
    """Every numeric leaf that is set, against its range (``ranges.py``)."""
    for leaf in RANGES:
        head, _, name = leaf.partition(".")
        value = getattr(getattr(request, head), name)
        if value is UNSET:
            continue
        why = out_of_range(leaf, value)
        if why is not None:
            raise _refuse(leaf, value, why)


def _validate_input(request: Request) -> None:
    inp = request.input
    if isinstance(inp, CompletionInput):
        has_text, has_ids = inp.text is not UNSET, inp.token_ids is not UNSET
        if has_text == has_ids:
            raise _refuse(
                "input.completion.text", inp.text, "and input.completion.token_ids: set exactly one"
            )
        if has_ids and not inp.token_ids:
            raise _refuse("input.completion.token_ids", (), "must not be empty")
        return
    assert isinstance(inp, ChatInput)
    if not inp.messages:
        raise _refuse("input.chat.messages", (), "must hold at least one message")
    for message in inp.messages:
        for part in message.content:
            if isinstance(part, ImagePart) and (part.url is UNSET) == (part.data is UNSET):
                raise _refuse("input.chat.messages.content.image", part, "needs url xor data")
