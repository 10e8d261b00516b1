"""vLLM's fields in a completions reply: ``prompt_logprobs`` and token ids (wire reference 7).

``vllm_native`` reads them; ``openai_completions``' Structs carry the rest.
"""

from __future__ import annotations

import msgspec

from .numbers import Rank, TokenId
from .openai_completions import Choice

__all__ = ["PromptEntry", "PromptRow", "VllmChoice"]


class PromptEntry(msgspec.Struct, gc=False):  # scalars only: no cycle to collect
    logprob: float
    rank: Rank
    decoded_token: str


PromptRow = dict[TokenId, PromptEntry]
"""One prompt position: the scored token and the top-k, keyed by token id (a string on the wire,
decoded as the int it spells; a key that is not one is a shape error)."""


class VllmChoice(Choice):
    prompt_logprobs: list[PromptRow | None] | None = None
    prompt_token_ids: list[TokenId] | None = None
    token_ids: list[TokenId] | None = None
