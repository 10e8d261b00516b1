"""Rolling log-likelihood of a whole document: the windows it is scored in, and each window's score.

The windows follow lm-evaluation-harness 0.4.13 (``lm_eval/utils.py``,
``get_rolling_token_windows`` then ``make_disjoint_window``, with ``context_len=1``): the first
window predicts the document's first ``max_seq_len`` tokens after a prefix token (the BOS); each
later one predicts the next at most ``max_seq_len`` tokens after as many of the tokens just before
them as fill the window. So every token of the document is predicted exactly once, each window's
prompt (context + predicted tokens) is at most ``max_seq_len + 1`` tokens, and all but the first
token of the document are predicted from at least one token before them. lm-eval's API models use
``max_seq_len = max_length - 2`` (``TemplateAPI``: one position kept for the generated token, one
for the context), so a server of context ``max_length`` takes every window with ``max_tokens=1``.

A window's score is the sum of the last ``len(continuation)`` prompt positions' log-probabilities,
in order (lm-eval sums the same positions of the echoed prompt); the token ids the server scored
must be the ids sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.response import Response

__all__ = ["Window", "rolling_windows", "window_logprob"]

Window = tuple[list[int], list[int]]
"""(context tokens, predicted tokens): the prompt is their concatenation."""


def rolling_windows(tokens: Sequence[int], prefix: int, max_seq_len: int) -> Iterator[Window]:
    """The disjoint windows of ``tokens`` (lm-eval's rules with ``context_len=1``)."""
    if max_seq_len < 1:
        raise ValueError(f"max_seq_len must be >= 1, got {max_seq_len}")
    tokens = list(tokens)
    if not tokens:
        return
    first = min(max_seq_len, len(tokens))
    yield [prefix], tokens[:first]
    predicted = first
    while predicted < len(tokens):
        length = min(len(tokens) - predicted, max_seq_len)
        end = predicted + length
        window = tokens[end - max_seq_len - 1 : end - 1]
        yield window[: len(window) - (length - 1)], tokens[end - length : end]
        predicted += length


def window_logprob(response: Response, sent: Sequence[int], predicted: int) -> float:
    """The summed log-probabilities of the last ``predicted`` of the ``sent`` prompt tokens."""
    tokens = response.input_tokens
    if tokens is UNSET or len(tokens) != len(sent):
        got = 0 if tokens is UNSET else len(tokens)
        raise ContractViolation(
            f"the reply scores {got} prompt tokens but {len(sent)} were sent; the window cannot "
            "be scored (the server must return every prompt position: input scoring on a token "
            "prompt)",
            path="input_tokens",
            expected=len(sent),
            received=got,
        )
    total = 0.0
    for i in range(len(sent) - predicted, len(sent)):
        token = tokens[i]
        if isinstance(token.token_id, int) and token.token_id != sent[i]:
            raise ContractViolation(
                f"prompt position {i} was scored as token {token.token_id}, but {sent[i]} was "
                "sent: the server re-tokenised the prompt",
                path=f"input_tokens[{i}].token_id",
                expected=sent[i],
                received=token.token_id,
            )
        if not isinstance(token.logprob, float | int):
            raise ContractViolation(
                f"prompt position {i} of a window has no logprob", path=f"input_tokens[{i}].logprob"
            )
        total += token.logprob
    return total
