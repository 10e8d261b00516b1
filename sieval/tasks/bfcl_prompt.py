"""BFCL's single-turn categories, Prompt column: the functions in the system turn, the calls
written as Python and parsed from the answer's text (every wire, completions included). The
task and its figures are ``bfcl.py``'s."""

from __future__ import annotations

from .bfcl import Bfcl

__all__ = ["TASK"]

TASK = Bfcl("prompt")
