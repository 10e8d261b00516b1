"""BFCL's multi-turn categories, Prompt column: the functions in the system turn, the calls
written as Python and parsed from each reply's text, the results sent back in a user message
(every wire, completions included). The task and its figures are ``bfcl_multi_turn.py``'s."""

from __future__ import annotations

from .bfcl_multi_turn import BfclMultiTurn

__all__ = ["TASK"]

TASK = BfclMultiTurn("prompt")
