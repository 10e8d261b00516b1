"""Checks of an OpenAI-shaped completions reply, shared by openai_completions and vllm_native.

Everything here trusts nothing: choice indices complete and unique, echoed positions split at
``usage.prompt_tokens`` and counted twice, the first input position unscored, offsets re-based on
the text and each token checked against the slice it claims, top-k exact, values finite.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.request import CompletionInput, Request
from ..ir.response import Token, Usage
from ._openai_common import (
    WireUsage,
    check_finite,
    decode_json,
    lift_usage,
    parse_sse,
    reply_error,
    top_entries,
)
from .plane import Lowered, Parsed, ParsedChoice

__all__ = ["Choice", "Chunk", "Lifted", "Logprobs", "Reply", "assemble_stream", "check_reply"]

_SPECIAL = re.compile(r"^<[^<>\s]+>$")  # e.g. <bos>, <eos>, <end_of_turn>


class Lifted(msgspec.Struct):
    """Dialect-private material the channel lifters read."""

    input_tokens: Any
    sampled_tokens: list[Any]
    usage: Usage


def check_reply(dialect: str, lowered: Lowered, reply: Reply) -> Parsed:
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
    dialect: str, request: Request, choices: list[Choice], sampled: list[Any], usage: Usage
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


def _ordered_choices(dialect: str, choices: list[Choice], n: int) -> list[Choice]:
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


def _check_echo_counts(dialect: str, choices: list[Choice], usage: Usage, req: Request) -> None:
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


def _offsets(dialect: str, choice: Choice, text: str, lp: Logprobs, base: int) -> list[int]:
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


def _position_lists_agree(dialect: str, choice: Choice, lp: Logprobs) -> None:
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


def _token(dialect: str, lp: Logprobs, i: int, k: int, offset: int | Any, where: str) -> Token:
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
    dialect: str, choice: Choice, usage: Usage, prompt: str | Any, k: int
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


def _sampled_tokens(dialect: str, choice: Choice, text: str, k: int) -> tuple[Token, ...]:
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


def assemble_stream(dialect: str, body: bytes) -> Reply:
    """Fold SSE chunks into one reply: text and logprob lists concatenate per choice index."""
    choices: dict[int, Choice] = {}
    reply = Reply(choices=[])
    for payload in parse_sse(dialect, body):
        chunk = decode_json(dialect, payload, Chunk)
        if chunk.error is not None:
            raise reply_error(dialect, int(chunk.error.get("code") or 500), payload)
        reply.model = chunk.model or reply.model
        reply.system_fingerprint = chunk.system_fingerprint or reply.system_fingerprint
        reply.usage = chunk.usage or reply.usage
        for delta in chunk.choices:
            current = choices.setdefault(delta.index, Choice(index=delta.index, text=""))
            current.text += delta.text
            current.finish_reason = delta.finish_reason or current.finish_reason
            current.stop_reason = delta.stop_reason or current.stop_reason
            if delta.logprobs is not None:
                if current.logprobs is None:
                    current.logprobs = Logprobs(tokens=[], token_logprobs=[], text_offset=[])
                    current.logprobs.top_logprobs = []
                _extend(current.logprobs, delta.logprobs)
    reply.choices = list(choices.values())
    return reply


def _extend(into: Logprobs, more: Logprobs) -> None:
    into.tokens += more.tokens
    into.token_logprobs += more.token_logprobs
    into.text_offset += more.text_offset
    assert into.top_logprobs is not None
    into.top_logprobs += more.top_logprobs or [None] * len(more.tokens)


# -- wire Structs (only the fields sieval reads) --------------------------------------------------


class Logprobs(msgspec.Struct):
    tokens: list[str]
    token_logprobs: list[float | None]
    text_offset: list[int]
    top_logprobs: list[dict[str, float] | None] | None = None


class Choice(msgspec.Struct):
    index: int
    text: str
    logprobs: Logprobs | None = None
    finish_reason: str | None = None
    stop_reason: str | int | None = None


class Reply(msgspec.Struct):
    choices: list[Choice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None


class Chunk(msgspec.Struct):
    choices: list[Choice] = []
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None
