"""BFCL's memory categories, Prompt column: the memory's functions in the system turn, the calls
written as Python and parsed from each reply's text, the results sent back in a user message
(every wire, completions included). The task and its figures are ``bfcl_memory.py``'s."""

from __future__ import annotations

from .bfcl_memory import BfclMemory

__all__ = ["TASK"]

TASK = BfclMemory("prompt")
