"""The OpenAI family's channels: echo scoring and sampled tokens on completions
(``openai_completions``, ``vllm_native``), vLLM's ``prompt_logprobs`` and token ids, and chat's
``logprobs.content``.

Wire truth: ``shared/reference/wire-reference.md`` sections 1, 2 and 7.
"""

from __future__ import annotations

import itertools
from itertools import accumulate
from typing import Any

import msgspec
from msgspec import UNSET

from ...ir.request import CompletionInput
from ...ir.response import Token
from ..channels import (
    by_bytes,
    covered,
    located,
    mapped_tokens,
    place,
    ranked_by_id,
    run_on_stop,
    top_k,
)
from ..reply import InputRead, Read
from ..reply_checks import Checker
from ..wire.openai_chat import ChatChoice, LogprobEntry
from ..wire.openai_completions import Choice
from ..wire.vllm import VllmChoice

__all__ = [
    "chat_reasoning",
    "chat_sampled",
    "completion_sampled",
    "echo",
    "prompt_logprobs",
    "sampled_with_ids",
    "token_ids",
]

# -- completions: echo scoring and sampled tokens -------------------------------------------------


def echo(r: Read) -> InputRead:
    """Echoed choices split at ``usage.prompt_tokens`` into the scored prompt and each choice's
    generated tokens and text. Prompt + completion tokens must equal the echoed positions
    (``max_tokens: 0``: vLLM's hidden token is counted in usage, not echoed); the first position
    is unscored; offsets are re-based on the prompt (wire reference 1.4)."""
    check, request = r.check, r.request
    inp = request.input
    prompt = inp.text if isinstance(inp, CompletionInput) and isinstance(inp.text, str) else None
    p = _echo_counts(r, request.sampling.max_tokens == 0)
    k, texts, generated = request.scoring.input_top_k, [], []
    scored: tuple[Token, ...] = ()
    for c in r.choices:
        text, lp, where = c.text, c.logprobs, f"choices[{c.index}].logprobs"
        if prompt is not None and not text.startswith(prompt):
            raise check.violation(
                f"choices[{c.index}].text",
                f"choice {c.index} does not echo the prompt at the start of its text",
            )
        _lists_agree(check, where, lp)
        check.first_unscored(f"{where}.token_logprobs", lp.token_logprobs, p)
        offsets: list[Any] = [UNSET] * len(lp.tokens)
        if prompt is not None:
            offsets = located(check, where, lp.tokens, lp.text_offset, text, 0)
            end = offsets[p] if p < len(lp.tokens) else len(text)
            if end != len(prompt):
                raise check.violation(
                    "usage.prompt_tokens",
                    f"the {p} prompt tokens cover {end} characters but the prompt has "
                    f"{len(prompt)}: usage.prompt_tokens does not match the echo",
                )
            offsets[p:] = [o - len(prompt) for o in offsets[p:]]
            text = text[len(prompt) :]
        tokens = mapped_tokens(check, f"{where}.top_logprobs", lp, offsets, k)
        scored = scored or tokens[:p]
        texts.append(text)
        generated.append(tokens[p:])
    return InputRead(scored, texts, generated)


def _echo_counts(r: Read, prompt_only: bool) -> int:
    check, prompt = r.check, r.usage.input_tokens
    if not isinstance(prompt, int) or prompt <= 0:
        raise check.violation(
            "usage.prompt_tokens",
            "echo scoring needs usage.prompt_tokens to split prompt from completion, and the "
            f"reply gives {prompt!r}",
        )
    generated = 0
    for c in r.choices:
        lp = check.present(
            c.logprobs, f"choices[{c.index}].logprobs", "although echo scoring asked for them"
        )
        if len(lp.tokens) < prompt:
            raise check.violation(
                f"choices[{c.index}].logprobs.tokens",
                f"choice {c.index} echoes {len(lp.tokens)} positions but usage.prompt_tokens is "
                f"{prompt}: the prompt scores are short",
                expected=prompt,
                received=len(lp.tokens),
            )
        generated += len(lp.tokens) - prompt
    completion, n = r.usage.output_tokens, len(r.choices)
    if not (generated == 0 if prompt_only else completion is not UNSET and completion == generated):
        raise check.violation(
            "usage",
            f"usage says {prompt} prompt + {completion} completion tokens but the choices echo "
            f"{prompt * n + generated} positions ({n} choice(s)): the split between prompt and "
            "completion is not trusted",
            expected=prompt * n + generated,
            received=completion,
        )
    return prompt


def completion_sampled(r: Read, c: Choice, i: int) -> tuple[Token, ...]:
    """The choice's sampled tokens with offsets into its text (which they must spell without a
    gap: a position whose logprobs went missing leaves text no token covers) and exact top-k."""
    check, where = r.check, f"choices[{c.index}].logprobs"
    lp = check.present(c.logprobs, where, "although logprobs were requested")
    _lists_agree(check, where, lp)
    check.all_scored(f"{where}.token_logprobs", lp.token_logprobs)
    base = lp.text_offset[0] if lp.text_offset else 0
    offsets = located(check, where, lp.tokens, lp.text_offset, c.text, base)
    reached = covered(lp.tokens, offsets, c.text)
    if reached < len(c.text):
        raise check.violation(
            where,
            f"choice {c.index}'s sampled tokens spell its text only up to character {reached} "
            f"of {len(c.text)} ({c.text[reached:][:20]!r} has no logprob): the logprobs are short",
        )
    return mapped_tokens(
        check, f"{where}.top_logprobs", lp, offsets, r.request.scoring.sampled_top_k
    )


def _lists_agree(check: Checker, where: str, lp: Any) -> None:
    n = len(lp.tokens)
    lengths = {
        "token_logprobs": len(lp.token_logprobs),
        "text_offset": len(lp.text_offset),
        "top_logprobs": len(lp.top_logprobs) if lp.top_logprobs is not None else n,
    }
    bad = {name: size for name, size in lengths.items() if size != n}
    if bad:
        raise check.violation(where, f"{where} has {n} tokens but {bad}")
    check.logprobs(f"{where}.token_logprobs", lp.token_logprobs)


# -- vLLM: prompt_logprobs and token ids ----------------------------------------------------------


def prompt_logprobs(r: Read) -> InputRead:
    """``prompt_logprobs`` of the first choice as the scored prompt: counted three ways, null at
    position 0 only, top-k exact and ranked, the first token's text recovered as the prompt prefix
    the decoded tokens leave (a BOS leaves "")."""
    check, c = r.check, r.choices[0]
    where = f"choices[{c.index}]"
    entries, ids = c.prompt_logprobs, c.prompt_token_ids
    if entries is None or ids is None:
        raise check.violation(
            f"{where}.prompt_logprobs",
            f"{where} has no prompt_logprobs/prompt_token_ids although both were requested",
        )
    counts = {
        "prompt_logprobs": len(entries),
        "prompt_token_ids": len(ids),
        "usage.prompt_tokens": r.usage.input_tokens,
    }
    check.agree(f"{where}.prompt_logprobs", counts, "the prompt")
    rows = entries[1:]
    if entries[0] is not None or None in rows:
        raise check.violation(
            f"{where}.prompt_logprobs", f"{where}.prompt_logprobs must be null at position 0 only"
        )
    k, scored_ids = r.request.scoring.input_top_k, ids[1:]
    scored, tops, ranks = ranked_by_id(
        check, f"{where}.prompt_logprobs[{{i}}]", rows, scored_ids, k
    )
    texts = [e.decoded_token for e in scored]
    inp = r.request.input
    prompt = inp.text if isinstance(inp, CompletionInput) and isinstance(inp.text, str) else None
    first, offsets = "", None
    if prompt is not None:
        tail = "".join(texts)
        if not prompt.endswith(tail):
            raise check.violation(
                f"{where}.prompt_logprobs",
                f"the decoded prompt tokens {tail[-40:]!r} do not end the prompt; the token "
                "texts cannot be placed in the prompt",
            )
        first = prompt[: len(prompt) - len(tail)]
        offsets = list(accumulate(map(len, texts), initial=len(first)))
        offsets.pop()
    at: Any = offsets if offsets is not None else itertools.repeat(UNSET)
    head = Token(text=first, logprob=None, token_id=ids[0], offset=0 if offsets else UNSET)
    if tops is None or ranks is None:
        return InputRead((head, *map(_scored, scored, scored_ids, at)))
    return InputRead((head, *map(_ranked, scored, scored_ids, at, tops, ranks)))


def _scored(e: Any, token_id: int, offset: Any) -> Token:
    return Token(text=e.decoded_token, logprob=e.logprob, token_id=token_id, offset=offset)


def _ranked(e: Any, tid: int, offset: Any, top: Any, rank: int) -> Token:
    text, logprob = e.decoded_token, e.logprob
    return Token(text=text, logprob=logprob, token_id=tid, offset=offset, top=top, scored_rank=rank)


def token_ids(r: Read, c: VllmChoice, i: int) -> tuple[int, ...] | Any:
    if not r.request.scoring.token_ids:
        return UNSET
    where = f"choices[{c.index}].token_ids"
    return tuple(r.check.present(c.token_ids, where, "although return_token_ids was sent"))


def sampled_with_ids(r: Read, c: VllmChoice, i: int) -> tuple[Token, ...]:
    """openai_completions' sampled tokens, with the ids of ``return_token_ids`` when asked."""
    tokens = completion_sampled(r, c, i)
    if not r.request.scoring.token_ids:
        return tokens
    ids = token_ids(r, c, i)
    if len(tokens) != len(ids):
        raise r.check.violation(
            "choices[].token_ids",
            f"{len(ids)} sampled token ids for {len(tokens)} sampled logprobs",
        )
    return tuple(msgspec.structs.replace(t, token_id=n) for t, n in zip(tokens, ids, strict=True))


# -- chat: logprobs.content -----------------------------------------------------------------------


def chat_sampled(r: Read, c: ChatChoice, i: int) -> tuple[Token, ...]:
    """``logprobs.content`` as tokens with offsets into the content and the exact top-k. The tokens
    must spell the content: a special token (``<eos>``) covers no text, a stop string cuts the
    text but not the logprobs (their offsets run on), and ``bytes`` is read only when the token
    texts do not spell it. Tool-call markup or reasoning they also spell leaves no offsets."""
    check, k = r.check, r.request.scoring.sampled_top_k
    where = f"choices[{i}].logprobs.content"
    entries = c.logprobs.content if c.logprobs is not None else None
    m = c.message
    if entries is None:
        if not m.content and m.refusal is not None:
            return ()
        raise check.violation(where, f"{where} is missing although logprobs were requested")
    check.logprobs(where, [e.logprob for e in entries], ".logprob")
    n = len(entries)
    tops: list[Any] = [UNSET] * n
    ranks: list[Any] = [UNSET] * n
    if k > 0:
        lists = [e.top_logprobs for e in entries]
        tops, ranks = top_k(check, where + "[{i}].top_logprobs", entries, lists, k, r.top_k)
    texts = [e.token for e in entries]
    if not m.tool_calls and chat_reasoning(c) is None:
        offsets: list[Any] = _chat_offsets(r, c, i, entries, texts)
    else:
        offsets = [UNSET] * n
        r.warnings.append(
            f"{r.dialect}: choice {i}'s sampled tokens also spell text its content does not hold "
            "(tool-call markup or reasoning), so they carry no offsets"
        )
    return tuple(
        Token(
            text=texts[j], logprob=e.logprob, offset=offsets[j], top=tops[j], scored_rank=ranks[j]
        )
        for j, e in enumerate(entries)
    )


def _chat_offsets(
    r: Read, c: ChatChoice, i: int, entries: list[LogprobEntry], texts: list[str]
) -> list[int]:
    content = c.message.content or ""
    placed = place(texts, content)
    if placed.stopped == len(texts) and placed.end == len(content):
        return placed.offsets
    if placed.stopped < len(texts):
        run = run_on_stop(texts, content, placed, c.stop_reason)
        if run is not None:
            r.warnings.append(
                f"{r.dialect}: choice {i}'s last {len(texts) - placed.stopped} sampled token(s) "
                "run past its text: the server cut the text at the stop string "
                f"{c.stop_reason!r} and kept their logprobs"
            )
            return run
    raw = by_bytes(texts, [e.bytes for e in entries], content)
    if raw is not None:
        return raw
    pos = placed.end
    if placed.stopped < len(texts):
        bad = placed.stopped
        raise r.check.violation(
            f"choices[{i}].logprobs.content[{bad}]",
            f"choice {i}'s sampled token {bad} {texts[bad]!r} is not the text at character {pos} "
            f"({content[pos : pos + 12]!r}): the logprobs do not spell the content",
        )
    raise r.check.violation(
        f"choices[{i}].logprobs.content",
        f"choice {i}'s {len(texts)} sampled tokens spell {pos} of the content's {len(content)} "
        "characters: the logprobs are short",
        expected=len(content),
        received=pos,
    )


def chat_reasoning(c: ChatChoice) -> str | None:
    m = c.message
    return m.reasoning if m.reasoning is not None else m.reasoning_content
