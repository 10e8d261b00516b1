"""vLLM's own fields on its OpenAI routes, as rows that compose with an OpenAI table.

vLLM 0.32.0 (wire reference section 7): ``prompt_logprobs`` (keyed by token id, complete or
refused), ``return_token_ids``, ``structured_outputs``, ``top_k`` and a few engine options. vLLM
accepts and ignores an unknown field (0.3), so an option is forwarded only when it is on the list
below, and never when it names a body field the IR already owns.
"""

from __future__ import annotations

from msgspec import UNSET

from ...ir.request import Scoring, StructuredOutput
from ..vocabulary import (
    Evidence,
    Field,
    Group,
    GroupInput,
    NoOp,
    Options,
    Outcome,
    Refuse,
    Row,
    Write,
    at_least,
)

__all__ = ["FORWARDED_OPTIONS", "OPTIONS", "extra_rows"]

FORWARDED_OPTIONS = frozenset({"min_p", "repetition_penalty", "stop_token_ids"})


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """``prompt_logprobs`` for the input (with ``return_token_ids``, so completeness is counted
    against the prompt's ids) and ``logprobs`` for sampled positions: separate counts."""
    s: Scoring = group.value
    out: dict[str, Outcome] = {}
    if s.input_logprobs:
        out["scoring.input_logprobs"] = Write(
            "prompt_logprobs", s.input_top_k, also={"return_token_ids": True}
        )
    if s.input_top_k:
        out["scoring.input_top_k"] = Write("prompt_logprobs", s.input_top_k)
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("logprobs", s.sampled_top_k)
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = Write("logprobs", s.sampled_top_k)
    return out


def _structured(group: GroupInput) -> dict[str, Outcome]:
    """``structured_outputs.json`` (the schema) or ``structured_outputs.json_object``."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    if o.format == "json_object":
        out["structured_output.format"] = Write("structured_outputs.json_object", True)
    elif o.format == "json_schema":
        out["structured_output.format"] = Evidence("structured_outputs.json")
        out["structured_output.schema"] = Write("structured_outputs.json", o.schema)
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("structured_outputs takes no name")
    if o.strict is not UNSET:
        out["structured_output.strict"] = (
            NoOp("vLLM's grammar is always strict")
            if o.strict
            else Refuse("vLLM's structured decoding is always strict; drop strict=false")
        )
    return out


OPTIONS = Options(
    dict.fromkeys(FORWARDED_OPTIONS),
    "vLLM silently ignores unknown fields, so only {allowed} are forwarded",
    "min_p, repetition_penalty, stop_token_ids",
    # OpenAI's fields the table leaves to other leaves (echo scoring, FIM, stream usage) are
    # still the route's: an option must not set them behind those leaves' back
    reserved=frozenset({"echo", "suffix", "stream", "stream_options"}),
)
"""``options.*`` on vLLM's OpenAI routes: a top-level field, from the allow-list only."""


def extra_rows() -> dict[str, Row]:
    """vLLM's rows over an OpenAI route's table."""
    return {
        "sampling.top_k": Field("top_k"),
        "sampling.max_tokens": at_least(
            "max_tokens",
            1,
            "vLLM answers 400 to max_tokens=0 on this route; ask for 1 and ignore it",
            "max_tokens, at least 1",
        ),
        "scoring.*": Group(
            _scoring,
            ("prompt_logprobs", "logprobs", "return_token_ids"),
            "prompt_logprobs (+ return_token_ids) for input, logprobs for sampled positions",
        ),
        "scoring.token_ids": Field("return_token_ids"),
        "structured_output.*": Group(
            _structured, ("structured_outputs",), "structured_outputs.json / .json_object"
        ),
        "options.*": OPTIONS,
    }
