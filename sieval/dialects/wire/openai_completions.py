"""The OpenAI completions reply (``POST /v1/completions``): Structs, echo scoring, sampled tokens.

Shared by ``openai_completions`` and ``vllm_native`` (wire reference 1.3-1.5). Nothing is trusted:
echoed positions are split at ``usage.prompt_tokens`` and counted twice, the first input position
must be unscored, offsets are re-based on the text with each token checked against the slice it
claims, top-k maps are exact and agree with the scored token, values finite and <= 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import UNSET

from ...ir.response import Token, Usage
from ..checks import Checker
from .openai import WireUsage, in_band_error
from .sse import SseEvent

__all__ = [
    "Choice",
    "Chunk",
    "Logprobs",
    "Reply",
    "clamp_warnings",
    "fold",
    "sampled_tokens",
    "split_echo",
]

_SPECIAL = re.compile(r"^<[^<>\s]+>$")  # e.g. <bos>, <eos>, <end_of_turn>


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


C = TypeVar("C", bound=Choice)


class Reply(msgspec.Struct, Generic[C]):
    choices: list[C]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None


class Chunk(msgspec.Struct):
    choices: list[Choice] = []
    model: str | None = None
    system_fingerprint: str | None = None
    usage: WireUsage | None = None
    error: dict[str, Any] | None = None


_chunk = msgspec.json.Decoder(Chunk)


def fold(events: list[SseEvent], check: Checker) -> Reply[Choice]:
    """SSE chunks as one reply: text and logprob lists concatenate per choice index."""
    choices: dict[int, Choice] = {}
    reply: Reply[Choice] = Reply(choices=[])
    for event in events:
        chunk = check.decode(event.data, _chunk)
        if chunk.error is not None:
            raise in_band_error(check.dialect, chunk.error, event.data)
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


# -- echo scoring -------------------------------------------------------------------------------


def split_echo(
    check: Checker,
    choices: Sequence[Choice],
    usage: Usage,
    prompt: str | None,
    k: int,
    prompt_only: bool,
) -> tuple[tuple[Token, ...], list[tuple[Token, ...]], list[str]]:
    """Echoed choices split into the scored prompt, each choice's generated tokens and text.

    prompt + completion tokens must equal the echoed positions (``prompt_only``: vLLM's hidden
    token under ``max_tokens: 0`` is counted in usage, not echoed); else refused.
    """
    _check_echo_counts(check, choices, usage, prompt_only)
    scored: tuple[Token, ...] = ()
    generated: list[tuple[Token, ...]] = []
    texts: list[str] = []
    for i, choice in enumerate(choices):
        text = choice.text
        if prompt is not None:
            if not text.startswith(prompt):
                raise check.violation(
                    f"choices[{choice.index}].text",
                    f"choice {choice.index} does not echo the prompt at the start of its text",
                )
            text = text[len(prompt) :]
        inputs, outputs = _split(check, choice, usage, prompt, k)
        if i == 0:
            scored = inputs
        generated.append(outputs)
        texts.append(text)
    return scored, generated, texts


def _check_echo_counts(
    check: Checker, choices: Sequence[Choice], usage: Usage, prompt_only: bool
) -> None:
    if usage.input_tokens is UNSET or usage.input_tokens <= 0:
        raise check.violation(
            "usage.prompt_tokens",
            "echo scoring needs usage.prompt_tokens to split prompt from completion, and the "
            f"reply gives {usage.input_tokens!r}",
        )
    prompt_tokens = usage.input_tokens
    generated = 0
    for c in choices:
        if c.logprobs is None:
            raise check.violation(
                f"choices[{c.index}].logprobs",
                f"choice {c.index} has no logprobs although echo scoring asked for them",
            )
        positions = len(c.logprobs.tokens)
        if positions < prompt_tokens:
            raise check.violation(
                f"choices[{c.index}].logprobs.tokens",
                f"choice {c.index} echoes {positions} positions but usage.prompt_tokens is "
                f"{prompt_tokens}: the prompt scores are short",
                expected=prompt_tokens,
                received=positions,
            )
        generated += positions - prompt_tokens
    completion = usage.output_tokens
    ok = generated == 0 if prompt_only else completion is not UNSET and completion == generated
    if not ok:
        raise check.violation(
            "usage",
            f"usage says {prompt_tokens} prompt + {completion} completion tokens but the choices "
            f"echo {prompt_tokens * len(choices) + generated} positions ({len(choices)} "
            "choice(s)): the split between prompt and completion is not trusted",
            expected=prompt_tokens * len(choices) + generated,
            received=completion,
        )


def _split(
    check: Checker, choice: Choice, usage: Usage, prompt: str | None, k: int
) -> tuple[tuple[Token, ...], tuple[Token, ...]]:
    lp = choice.logprobs
    assert lp is not None and isinstance(usage.input_tokens, int)
    where = f"choices[{choice.index}].logprobs"
    p = usage.input_tokens
    _position_lists_agree(check, choice, lp)
    values = lp.token_logprobs
    if values[0] is not None:
        raise check.violation(
            f"{where}.token_logprobs[0]",
            f"{where}.token_logprobs[0] is {values[0]}; the first prompt position has "
            "no condition and must be null: the echo is misaligned",
        )
    if None in values[1:p]:
        unscored = [i for i in range(1, p) if values[i] is None]
        raise check.violation(
            f"{where}.token_logprobs[{unscored[0]}]",
            f"{where}.token_logprobs has null at prompt positions {unscored[:5]}: only the first "
            "position may be unscored",
        )
    offsets: list[Any] = [UNSET] * len(lp.tokens)
    if prompt is not None:
        full = choice.text
        offsets = _offsets(check, choice, full, lp, 0)
        prompt_end = offsets[p] if p < len(lp.tokens) else len(full)
        if prompt_end != len(prompt):
            raise check.violation(
                "usage.prompt_tokens",
                f"the {p} prompt tokens cover {prompt_end} characters but the prompt has "
                f"{len(prompt)}: usage.prompt_tokens does not match the echo",
            )
        offsets[p:] = [o - len(prompt) for o in offsets[p:]]
    tokens = _tokens(check, lp, k, offsets, where)
    return tokens[:p], tokens[p:]


# -- sampled tokens -----------------------------------------------------------------------------


def sampled_tokens(check: Checker, choice: Choice, k: int) -> tuple[Token, ...]:
    """The choice's sampled tokens with offsets into its text and exact top-k."""
    lp = choice.logprobs
    where = f"choices[{choice.index}].logprobs"
    if lp is None:
        raise check.violation(where, f"{where} is missing although logprobs were requested")
    _position_lists_agree(check, choice, lp)
    if None in lp.token_logprobs:
        raise check.violation(
            f"{where}.token_logprobs", f"{where}.token_logprobs holds null for a sampled token"
        )
    base = lp.text_offset[0] if lp.text_offset else 0
    offsets = _offsets(check, choice, choice.text, lp, base)
    _covers_the_text(check, choice, lp, offsets, where)
    return _tokens(check, lp, k, offsets, where)


def _covers_the_text(
    check: Checker, choice: Choice, lp: Logprobs, offsets: list[int], where: str
) -> None:
    """The sampled tokens spell the text without a gap: a position whose logprobs went missing
    (a stream chunk without them, a list one short) leaves text no token covers, which the
    offsets alone, checking only the tokens that are there, do not see. Byte pieces (``""``,
    U+FFFD) have no length to add up, so a reply holding one is not judged."""
    text = choice.text
    if any(t == "" or "\ufffd" in t for t in lp.tokens) or not text:
        return
    covered = 0
    for offset, token in zip(offsets, lp.tokens, strict=False):
        if _SPECIAL.match(token) and not text.startswith(token, offset):
            continue  # a special token the text leaves out covers nothing
        if offset != covered:
            break
        covered = offset + len(token)
    if covered < len(text):
        raise check.violation(
            where,
            f"choice {choice.index}'s sampled tokens spell its text only up to character "
            f"{covered} of {len(text)} ({text[covered:][:20]!r} has no logprob): the logprobs "
            "are short",
        )


def _offsets(check: Checker, choice: Choice, text: str, lp: Logprobs, base: int) -> list[int]:
    """``text_offset`` re-based on ``text``, each token checked against the slice it claims.

    vLLM counts offsets over token strings, so a special token the text leaves out (``<bos>``
    before an echoed prompt, ``<eos>`` after a completion) shifts every later offset by its length
    (wire reference 1.4): such a token covers no text here.
    """
    tokens = lp.tokens
    # the usual reply, checked whole: the tokens spell the text (after a leading special token
    # the text leaves out, the echoed BOS) and each offset is where the token before it ends
    lead = 1 if tokens and _SPECIAL.match(tokens[0]) and not text.startswith(tokens[0]) else 0
    if "".join(tokens[lead:]) == text:
        lengths = list(map(len, tokens))
        ends = list(accumulate(lengths, initial=base))
        ends.pop()
        if lp.text_offset == ends:
            if not lead and not base:
                return ends
            inner = list(accumulate(lengths[lead:], initial=0))
            inner.pop()
            return [0, *inner] if lead else inner
    return _offsets_one_by_one(check, choice, text, lp, base)


def _offsets_one_by_one(
    check: Checker, choice: Choice, text: str, lp: Logprobs, base: int
) -> list[int]:
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
            raise check.violation(
                f"{where}.text_offset[{i}]",
                f"{where}.text_offset[{i}]={lp.text_offset[i]} does not locate token {token!r} in "
                f"the text (found {found!r}): offsets cannot be trusted",
            )
    return out


def _position_lists_agree(check: Checker, choice: Choice, lp: Logprobs) -> None:
    n = len(lp.tokens)
    lengths = {
        "token_logprobs": len(lp.token_logprobs),
        "text_offset": len(lp.text_offset),
        "top_logprobs": len(lp.top_logprobs) if lp.top_logprobs is not None else n,
    }
    bad = {name: size for name, size in lengths.items() if size != n}
    where = f"choices[{choice.index}].logprobs"
    if bad:
        raise check.violation(where, f"{where} has {n} tokens but {bad}")
    check.logprobs(f"{where}.token_logprobs", lp.token_logprobs)


def _tokens(
    check: Checker, lp: Logprobs, k: int, offsets: list[Any], where: str
) -> tuple[Token, ...]:
    """One Token per position, built once; with ``k`` each scored position's top-k checked."""
    if not k:
        return tuple(
            map(
                lambda text, logprob, offset: Token(text=text, logprob=logprob, offset=offset),
                lp.tokens,
                lp.token_logprobs,
                offsets,
            )
        )
    return tuple(_token(check, lp, i, k, offsets[i], where) for i in range(len(lp.tokens)))


def _token(check: Checker, lp: Logprobs, i: int, k: int, offset: Any, where: str) -> Token:
    logprob = lp.token_logprobs[i]
    top: Any = UNSET
    rank: Any = UNSET
    if logprob is not None:
        entries = lp.top_logprobs[i] if lp.top_logprobs is not None else None
        if entries is None:
            raise check.violation(
                f"{where}.top_logprobs[{i}]", f"{where}.top_logprobs[{i}] is missing for top-k={k}"
            )
        top, rank = check.top_map(f"{where}.top_logprobs[{i}]", entries, lp.tokens[i], logprob, k)
    return Token(text=lp.tokens[i], logprob=logprob, offset=offset, top=top, scored_rank=rank)


# -- warnings -----------------------------------------------------------------------------------


def clamp_warnings(
    check: Checker,
    max_tokens: Any,
    choices: Sequence[Choice],
    generated: Sequence[int | None],
    usage: Usage,
) -> tuple[str, ...]:
    """vLLM 0.32 silently shortens max_tokens to max_model_len - prompt_tokens (wire reference
    7.6): a ``length`` finish before max_tokens is that clamp, and the reader must know.

    ``generated`` is each choice's generated-token count where the reply shows it.
    """
    if max_tokens is UNSET or max_tokens == 0:
        return ()
    out: list[str] = []
    for choice, count in zip(choices, generated, strict=True):
        if count is None and len(choices) == 1 and isinstance(usage.output_tokens, int):
            count = usage.output_tokens
        if choice.finish_reason == "length" and count is not None and count < max_tokens:
            out.append(
                f"{check.dialect}: choice {choice.index} ended for length after {count} of "
                f"max_tokens={max_tokens} tokens: the server shortened max_tokens to fit its "
                f"context window (prompt {usage.input_tokens} tokens), so this generation is cut "
                "by the context"
            )
    return tuple(out)
