"""The whole numbers of a reply that are not usage, bounded where they are decoded.

A token id, a per-choice token count or an echoed budget out of range is a reply not to believe,
the same way a logprob above 0 is one: the typed decoder refuses it in C (a shape error naming
the JSON path, ``Checker.decode``), so the per-token hot path pays nothing in Python. Usage counts
are checked in ``channels.lift_usage`` instead, where the message can say how they disagree.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["Count", "Rank", "TokenId"]

TokenId = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
"""A vocabulary index: every engine holds it in an int32, and none is negative."""

Count = Annotated[int, msgspec.Meta(ge=0, le=10**9)]
"""A token count that is not usage (a candidate's ``tokenCount``, an echoed ``max_output_tokens``):
the bound is ``checks.MAX_TOKEN_COUNT``'s."""

Rank = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
"""A token's rank among the vocabulary, 1 for the most likely (vLLM's ``prompt_logprobs``)."""
