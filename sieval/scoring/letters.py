"""Next-token letter log-probabilities read from the first sampled position's top-k list.

The candidates are the top-k entries plus the scored (sampled) token itself. A candidate spells
a letter when it equals the letter after removing leading whitespace and SentencePiece's word
marker ``▁`` (so ``"A"``, ``" A"`` and ``"▁A"`` all count); when several spellings of one letter
appear, the largest log-probability is taken (the most likely spelling, not a sum: the top-k is
truncated, so a sum would depend on k). A letter missing from the list fails the sample: an argmax
over the letters that happened to make the cut would be a different, easier task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msgspec import UNSET

from ..errors import ContractViolation
from ..ir.response import Response
from ..setting_names import setting

__all__ = ["candidate_letter_logprobs", "letter_logprobs", "spelled_letter"]


def spelled_letter(token: str) -> str:
    """The token text without leading whitespace and ``▁`` markers."""
    return token.lstrip().lstrip("▁").lstrip()


def letter_logprobs(response: Response, letters: Sequence[str]) -> dict[str, float]:
    """``{letter: logprob}`` at the first sampled position, every letter present or an error."""
    choice = response.choices[0] if response.choices else None
    tokens = choice.tokens if choice is not None else UNSET
    if tokens is UNSET or not tokens or tokens[0].top is UNSET:
        raise ContractViolation(
            "the response has no top-k list at the first sampled position; the request must set "
            "scoring.sampled_logprobs=True and scoring.sampled_top_k",
            path="choices[0].tokens[0].top",
        )
    first = tokens[0]
    top = first.top if first.top is not UNSET else ()
    candidates = [(entry.token, entry.logprob) for entry in top]
    if isinstance(first.logprob, float):
        candidates.append((first.text, first.logprob))
    wanted = set(letters)
    found: dict[str, float] = {}
    for text, logprob in candidates:
        letter = spelled_letter(text)
        if letter in wanted:
            found[letter] = max(logprob, found.get(letter, float("-inf")))
    missing = [letter for letter in letters if letter not in found]
    if missing:
        raise ContractViolation(
            f"{'letters' if len(missing) > 1 else 'letter'} {', '.join(missing)} "
            f"{'are' if len(missing) > 1 else 'is'} not in the top-{len(top)} next-token list "
            f"(its first token is {first.text!r}), so the answer cannot be scored over all "
            f"choices; raise the top-k with {setting('options.top_k')} where the wire allows it, "
            "score by token id (sglang_native), or let the model answer in text (mmlu_0shot_gen)",
            path="choices[0].tokens[0].top",
            expected=list(letters),
            received=sorted(found),
        )
    return {letter: found[letter] for letter in letters}


def candidate_letter_logprobs(
    response: Response, letters: Sequence[str], token_ids: Mapping[str, int]
) -> dict[str, float]:
    """``{letter: logprob}`` from the requested candidate ids at the first sampled position
    (``Token.candidates``): each spelling in ``token_ids`` maps to its letter, max over spellings.
    A letter none of whose ids came back fails the sample."""
    choice = response.choices[0] if response.choices else None
    tokens = choice.tokens if choice is not None else UNSET
    if tokens is UNSET or not tokens or tokens[0].candidates is UNSET:
        raise ContractViolation(
            "the response has no candidate logprobs at the first sampled position; the request "
            "must set scoring.candidate_token_ids",
            path="choices[0].tokens[0].candidates",
        )
    letter_of = {tid: spelled_letter(text) for text, tid in token_ids.items()}
    found: dict[str, float] = {}
    for entry in tokens[0].candidates:
        letter = letter_of.get(entry.token_id) if isinstance(entry.token_id, int) else None
        if letter is not None and letter in letters:
            found[letter] = max(entry.logprob, found.get(letter, float("-inf")))
    missing = [letter for letter in letters if letter not in found]
    if missing:
        raise ContractViolation(
            f"letters {', '.join(missing)} have no candidate logprob in the reply although their "
            "ids were requested",
            path="choices[0].tokens[0].candidates",
            expected=list(letters),
            received=sorted(found),
        )
    return {letter: found[letter] for letter in letters}
