"""Log-likelihood of a continuation from the scored input tokens of ``context + continuation``.

Token spans come from the character offsets the dialect returns: a token starts at its
``offset`` and ends where the next token starts (the last one at the end of the prompt). A
token belongs to the continuation when it starts at or after ``context_chars``; a BOS covers no
text (it shares its offset with the next token) and so stays in the context. A token that starts
in the context and ends in the continuation means the tokenizer merged the two; its logprob
cannot be split, so the score is refused rather than guessed.

An empty context (``context_chars == 0``: lm-eval's unconditional ``("", continuation)``, scored
after the model's BOS alone) leaves the prompt's first token in the continuation; a BOS there
covers no text and is skipped, while a first token that is text has nothing before it to be
predicted from, and the score is refused.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.response import Response, Token

__all__ = ["ContinuationScore", "continuation_score"]


class ContinuationScore(msgspec.Struct, frozen=True, kw_only=True):
    logprob_sum: float
    """Sum of the natural-log probabilities of the continuation's tokens."""
    n_tokens: int
    n_chars: int
    """Characters of the continuation text as scored, delimiter included (``" fire"``: 5). Not
    the acc_norm denominator, which is the choice without its delimiter (see ``choice.py``)."""
    n_bytes: int
    """UTF-8 bytes of the continuation text as scored, delimiter included: the bytes the summed
    logprobs cover (the bits-per-byte denominator)."""
    is_greedy: bool | None
    """Every continuation token was the top-1 alternative; None when no top-k was returned."""


def _offsets(tokens: tuple[Token, ...], prompt_chars: int) -> list[int]:
    offsets: list[int] = []
    for i, token in enumerate(tokens):
        if token.offset is UNSET:
            raise ContractViolation(
                f"input token {i} ({token.text!r}) has no character offset, so the continuation "
                "cannot be located; use a dialect that returns input token offsets",
                path=f"input_tokens[{i}].offset",
            )
        previous = offsets[-1] if offsets else 0
        if not previous <= token.offset <= prompt_chars or (i == 0 and token.offset != 0):
            raise ContractViolation(
                f"input token {i} ({token.text!r}) has offset {token.offset}, but offsets must "
                f"start at 0, never decrease and stay within the prompt (0..{prompt_chars})",
                path=f"input_tokens[{i}].offset",
                received=token.offset,
            )
        offsets.append(token.offset)
    return offsets


def continuation_score(
    response: Response, context_chars: int, continuation: str
) -> ContinuationScore:
    """Score ``continuation`` given that the request's prompt was ``context + continuation`` and
    the context is ``context_chars`` characters long.

    Raises ``ContractViolation`` when the input tokens are missing, lack offsets or a logprob
    inside the continuation, or when a token straddles the context/continuation boundary.
    """
    if not continuation:
        raise ValueError("continuation_score needs a non-empty continuation")
    tokens = response.input_tokens
    if tokens is UNSET or not tokens:
        raise ContractViolation(
            "the response has no scored input tokens; the request must set "
            "scoring.input_logprobs=True on a dialect that supports input scoring",
            path="input_tokens",
        )
    prompt_chars = context_chars + len(continuation)
    offsets = _offsets(tokens, prompt_chars)
    ends = [*offsets[1:], prompt_chars]
    total, count = 0.0, 0
    greedy: bool | None = True
    for i, (token, start, end) in enumerate(zip(tokens, offsets, ends, strict=True)):
        if start < context_chars < end:
            raise ContractViolation(
                f"input token {i} ({token.text!r}) spans characters {start}..{end}, across the "
                f"context/continuation boundary at {context_chars}: the tokenizer merged them; "
                "end the context so the continuation starts a token (e.g. give the continuation "
                "a leading space)",
                path=f"input_tokens[{i}]",
                expected=context_chars,
                received=(start, end),
            )
        if start < context_chars or start == prompt_chars:
            continue
        if i == 0 and start == end:  # the BOS before an empty context
            continue
        if not isinstance(token.logprob, float | int):
            if i == 0:
                raise ContractViolation(
                    f"the continuation starts the prompt and its first token ({token.text!r}) has "
                    "no log-probability (nothing precedes it): the server added no BOS; make it "
                    "add special tokens to text prompts",
                    path="input_tokens[0].logprob",
                )
            raise ContractViolation(
                f"input token {i} ({token.text!r}) inside the continuation has no logprob",
                path=f"input_tokens[{i}].logprob",
            )
        total += token.logprob
        count += 1
        if token.top is UNSET or token.scored_rank is UNSET:
            greedy = None
        elif greedy is not None:
            # a tie with the top-1 is greedy, as lm-eval's is_greedy (the token's value equals
            # the top value): which of two equal tokens a server lists first is arbitrary
            tied = bool(token.top) and token.logprob >= token.top[0].logprob
            greedy = greedy and (token.scored_rank == 0 or tied)
    # count >= 1 here: some token covers character context_chars, and it either starts there
    # (counted) or started earlier (a straddle, raised above).
    return ContinuationScore(
        logprob_sum=total,
        n_tokens=count,
        n_chars=len(continuation),
        n_bytes=len(continuation.encode("utf-8")),
        is_greedy=greedy,
    )
