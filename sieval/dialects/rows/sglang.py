"""SGLang's rows: ``sampling_params``, the scoring fields of ``/generate`` and the engine
options it takes (SGLang 0.5.23, wire reference section 6)."""

from __future__ import annotations

import json
from typing import Any

from msgspec import UNSET

from ...ir.request import Scoring, StructuredOutput
from ..vocabulary import (
    Evidence,
    GroupInput,
    Leaf,
    NoOp,
    Options,
    OptionValue,
    Outcome,
    Refuse,
    Write,
)

__all__ = ["MAX_STOP", "OPTIONS", "SP", "scoring", "structured", "tokenize_body", "top_k"]

MAX_STOP = 32
"""``MAX_STOP_COUNT`` in SGLang 0.5.23's ``sampling_params.py``."""

SP = "sampling_params"


def top_k(leaf: Leaf) -> Outcome:
    """The IR's 0 and -1 both mean "all tokens"; SGLang spells that -1 and answers 400 to 0
    (``top_k must be -1 (disable) or at least 1``, fixture error_top_k_0)."""
    k = leaf.value
    if k < -1:
        return Refuse(f"top_k={k} is not a count; ask for k >= 1, or -1 (or 0) for all tokens")
    return Write(f"{SP}.top_k", -1 if k in (0, -1) else k)


def scoring(group: GroupInput) -> dict[str, Outcome]:
    """``return_logprob`` (with ``return_text_in_logprobs``) for both; ``logprob_start_len: 0``
    for the whole prompt; one ``top_logprobs_num`` for input and sampled positions."""
    s: Scoring = group.value
    texts = {"return_logprob": True, "return_text_in_logprobs": True}
    out: dict[str, Outcome] = {}
    if s.input_logprobs:
        out["scoring.input_logprobs"] = Write("logprob_start_len", 0, also=texts)
    if s.input_top_k:
        out["scoring.input_top_k"] = Write("top_logprobs_num", s.input_top_k)
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("return_logprob", True, also=texts)
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = Write("top_logprobs_num", s.sampled_top_k)
    if s.token_ids:
        out["scoring.token_ids"] = NoOp(
            "SGLang always returns output_ids, and every logprob entry carries its token id"
        )
    if s.candidate_token_ids:
        ids = list(s.candidate_token_ids)
        out["scoring.candidate_token_ids"] = (
            Refuse("candidate token ids must be >= 0 (SGLang indexes the vocabulary with them)")
            if min(ids) < 0
            else Write("token_ids_logprob", ids)
        )
    return out


_OBJECT_SCHEMA = '{"type": "object"}'
"""What SGLang's own OpenAI routes send for ``response_format: json_object`` (its
``serving_completions.py``)."""


def structured(group: GroupInput) -> dict[str, Outcome]:
    """``sampling_params.json_schema``, a JSON string (an object fails SGLang's contract)."""
    o: StructuredOutput = group.value
    out: dict[str, Outcome] = {}
    path = f"{SP}.json_schema"
    if o.format == "json_object":
        out["structured_output.format"] = Write(path, _OBJECT_SCHEMA)
    elif o.format == "json_schema":
        out["structured_output.format"] = Evidence(path)
        out["structured_output.schema"] = Write(path, json.dumps(o.schema))
    if o.name is not UNSET:
        out["structured_output.name"] = NoOp("sampling_params.json_schema takes no name")
    if o.strict is not UNSET:
        out["structured_output.strict"] = (
            NoOp("SGLang's grammar backend always enforces the schema")
            if o.strict
            else Refuse("SGLang's constrained decoding is always strict; drop strict=false")
        )
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pattern(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _ids(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(_integer(x) for x in value)


OPTIONS = Options(
    {
        "min_p": OptionValue(_number, "a number"),
        "repetition_penalty": OptionValue(_number, "a number"),
        "min_new_tokens": OptionValue(_integer, "an integer"),
        "sampling_seed": OptionValue(_integer, "an integer"),
        "regex": OptionValue(_pattern, "a non-empty string"),
        "stop_token_ids": OptionValue(_ids, "a list of token ids"),
    },
    "only {allowed} are forwarded: SGLang answers 400 to an unknown sampling_params key, and its "
    "other keys change what the reply means (no_stop_trim, skip_special_tokens) or were not "
    "verified here",
    "sampling_params.<name> for min_p, min_new_tokens, regex, repetition_penalty, "
    "sampling_seed, stop_token_ids",
    at=f"{SP}.",
    # the sampling_params keys the rows write
    reserved=frozenset(
        {"max_new_tokens", "temperature", "top_p", "top_k", "n", "json_schema"}
        | {"frequency_penalty", "presence_penalty"}
    ),
)
"""``options.*``: ``sampling_params.<name>`` from the allow-list, each value of its type."""


def tokenize_body(model: str, text: str, special: bool) -> dict[str, Any]:
    """SGLang's ``POST /tokenize`` body, as recorded (``fixture:tokenize_letters``): OpenAI style,
    without vLLM's ``return_token_strs``, which SGLang 0.5.23 ignores (measured: its reply has
    the ids, ``count`` and ``max_model_len`` and no token texts either way; the BOS check then
    compares ids)."""
    return {"model": model, "prompt": text, "add_special_tokens": special}
