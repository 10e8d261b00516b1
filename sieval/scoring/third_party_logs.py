"""Third-party logs that can carry model text, kept off the terminal.

The checkers hand model text to libraries that log it: math-verify logs the answer it could not
parse in time (``Timeout during parsing: \\boxed{<the answer>}``), whole, and with no handler
configured Python's logging prints a warning through its last-resort handler to stderr, raw —
escape sequences included, so an answer can clear or rewrite the user's terminal. The same holds
for the libraries under it and beside it: ``latex2sympy2_extended`` (math-verify's LaTeX parser),
``antlr4`` (its parser runtime), ``sympy``, and IFEval's ``nltk`` and ``langdetect``.

``quiet()`` gives each of these loggers a ``NullHandler`` and stops it propagating, so nothing
they log reaches a terminal (or a handler of the caller's) through logging; a program that wants
them still can add its own handler to them. What the checkers conclude is in each sample's
record; these logs added no fact a record lacks (a parse that timed out is an answer that did
not match).
"""

from __future__ import annotations

import logging

__all__ = ["LOGGERS", "quiet"]

LOGGERS = ("math_verify", "latex2sympy2_extended", "antlr4", "sympy", "nltk", "langdetect")
_DONE: list[bool] = []


def quiet() -> None:
    """Silence the loggers of ``LOGGERS`` (once; later calls do nothing)."""
    if _DONE:
        return
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
    _DONE.append(True)
