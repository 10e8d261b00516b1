"""Final answers of math solutions (MATH-500, AIME): extracted from the text, compared by value.

Extraction, in order (the first rule that matches names the answer in ``MathVerdict.rule``):

1. ``boxed``: the last ``\\boxed{…}`` or ``\\fbox{…}`` of the text (by position), its braces
   matched so nested ones stay inside (``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``);
   ``\\boxed 5`` (a space, no brace) counts too, up to the next ``$`` or line end. A last box
   that never closes (an answer cut by the token budget) is no answer: reason ``unclosed_box``.
2. ``final_answer_sentence``: Minerva's closing line, ``Final Answer: The final answer is X.
   I hope it is correct.`` (Lewkowycz et al. 2022, the format lm-evaluation-harness's
   ``minerva_math`` asks for), X with surrounding ``$`` removed.
3. otherwise nothing: the sample is invalid (``rule`` None), never compared.

This is lm-evaluation-harness 0.4.13's ``last_boxed_only_string`` + ``remove_boxed``
(``tasks/minerva_math/utils.py``) with three deliberate differences, each shown against it in
``tests/scoring/test_math_answer.py``: the last box by position (lm-eval takes the last
``\\boxed`` even when a ``\\fbox`` follows, and any ``\\boxed `` with a space before every
braced one), ``\\fbox{…}`` unwrapped (lm-eval's ``remove_boxed`` raises on it), and a spaced
``\\boxed 5`` stops at the line end (lm-eval runs on to the next ``$``).

Equivalence is math-verify's (Hugging Face, ``math-verify`` 0.9 on PyPI, over SymPy and
``latex2sympy2_extended``), not string equality. Both answers are parsed as LaTeX inside
``\\boxed{}`` with ``parse``'s default configuration, ``NormalizationConfig(basic_latex=True,
units=True, malformed_operators=True, nits=True, boxed="all")``: LaTeX clean-up (``\\left`` /
``\\right``, ``\\dfrac`` → ``\\frac``, ``\\mathrm``, ``\\displaystyle``, ``\\text{}``), units
and their words and ``^\\circ`` removed, malformed operators repaired (``\\frac12``, ``\\sqrt2``),
formatting nits (spacing, thousands separators, leading zeros), every box unwrapped. Then
``verify(gold, answer)`` (not symmetric: the gold goes first): string match, numbers within 6
decimal places, symbolic equality by simplification, an equation ``x = 3`` against a number by
its right-hand side, sets regardless of order, intervals, tuples, matrices, complex numbers, and
a percentage equal to its number (``50\\%`` = ``50``). The tests pin each of these.

Two answers are wrong before any comparison, each with its reason (math-verify alone scores
both right against ``5``):

- ``several_lines``: the answer holds a line break (``\\\\`` or a new line) outside a
  ``\\begin…\\end`` environment: ``\\boxed{7 \\\\ 5}`` is two answers, of which math-verify
  reads only the last line (and ``7`` and ``5`` on two lines of the box it reads as 7 + 5);
- ``false_equation``: an equation between numbers that does not hold (``\\boxed{7 = 5}``):
  math-verify reads any equation against a number by its right side (as it should ``x + y =
  5``), so a false statement would score its right side. One that holds (``3 + 4 = 7``) is read
  by its right side like any other.
"""

from __future__ import annotations

import re
import threading
import warnings
from typing import Any

import msgspec

from .dependencies import Dependency
from .third_party_logs import quiet

__all__ = ["DEPENDENCIES", "Extraction", "MathVerdict", "extract_answer", "extract_boxed",
           "false_equation", "is_equivalent", "same_value", "score_math",
           "several_lines"]  # fmt: skip

_BOX = re.compile(r"\\(boxed|fbox)")
_LINE_PARTS = re.compile(r"\\begin\{|\\end\{|\\\\|\n")
"""What ``several_lines`` looks for: environments opening and closing, and line breaks."""
_FINAL = re.compile(r"Final Answer: The final answer is(.*?)\. I hope it is correct\.")


class Extraction(msgspec.Struct, frozen=True, kw_only=True):
    answer: str | None
    """The extracted answer; None when no rule matched."""
    rule: str | None
    """``boxed`` or ``final_answer_sentence``; None when no rule matched."""
    reason: str | None = None
    """Why there is no answer: ``unclosed_box`` or ``no_rule_matched``."""


class MathVerdict(msgspec.Struct, frozen=True, kw_only=True):
    correct: bool
    extracted: str | None
    rule: str | None
    reason: str | None
    """Why it is wrong without a comparison, or None: no answer (``unclosed_box``,
    ``no_rule_matched``), or an answer that is no single value (``several_lines``,
    ``false_equation``)."""


def _closing_brace(text: str, start: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``start``, or None."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def extract_boxed(text: str) -> Extraction:
    """The content of the last box in ``text`` (rule 1 above)."""
    boxes = list(_BOX.finditer(text))
    if not boxes:
        return Extraction(answer=None, rule=None, reason="no_rule_matched")
    last = boxes[-1]
    rest = last.end()
    if text.startswith(" ", rest) and last.group(1) == "boxed":
        answer = re.split(r"[$\n]", text[rest + 1 :], maxsplit=1)[0].strip()
        return Extraction(answer=answer, rule="boxed")
    brace = rest if text.startswith("{", rest) else None
    close = _closing_brace(text, brace) if brace is not None else None
    if brace is None or close is None:
        return Extraction(answer=None, rule=None, reason="unclosed_box")
    return Extraction(answer=text[brace + 1 : close], rule="boxed")


def extract_answer(text: str) -> Extraction:
    """The final answer of a solution: the last box, else Minerva's final-answer sentence."""
    boxed = extract_boxed(text)
    if boxed.answer is not None or boxed.reason == "unclosed_box":
        return boxed
    final = _FINAL.search(text)
    if final:
        return Extraction(answer=final.group(1).strip().strip("$").strip(),
                          rule="final_answer_sentence")  # fmt: skip
    return boxed


DEPENDENCIES = (Dependency("math_verify", "math-verify"),)
"""What ``is_equivalent`` imports: a task comparing math answers declares it."""


def _math_verify() -> Any:
    """math-verify, its logs made inert first (``third_party_logs.py``: on a parse that timed out
    it logs the answer itself)."""
    quiet()
    try:
        import math_verify
    except ImportError as error:  # pragma: no cover - the dev install has it
        raise ImportError(
            "math answers are compared by math-verify: pip install 'sieval[instruct]'"
        ) from error
    return math_verify


def _bound(timeout_seconds: int) -> int | None:
    """math-verify bounds parsing and comparing with ``SIGALRM``, which only the main thread can
    set; elsewhere there is no bound."""
    return timeout_seconds if threading.current_thread() is threading.main_thread() else None


def is_equivalent(answer: str, gold: str, timeout_seconds: int = 5) -> bool:
    """Whether ``answer`` and ``gold`` (LaTeX, without a box) are the same value, by math-verify
    (bounded by ``timeout_seconds`` in the main thread). What it logs or warns of (the answer
    itself, on a parse that timed out) never reaches the terminal (``third_party_logs.py``)."""
    mv, bound = _math_verify(), _bound(timeout_seconds)
    with warnings.catch_warnings():  # SymPy's and compile()'s warnings quote the answer too
        warnings.simplefilter("ignore")
        gold_parsed = mv.parse(f"\\boxed{{{gold}}}", parsing_timeout=bound)
        answer_parsed = mv.parse(f"\\boxed{{{answer}}}", parsing_timeout=bound)
        return bool(mv.verify(gold_parsed, answer_parsed, timeout_seconds=bound))


def decided(answer: str, gold: str, timeout_seconds: int = 5) -> bool | None:
    """``is_equivalent`` where math-verify can decide: None when it parses no value from the
    answer or from the gold, or when the gold is a number and the answer holds free symbols (words
    are read as products of letters: ``no idea`` is ``a*de*i*n*o``); a cascade then asks a
    judge."""
    mv, bound = _math_verify(), _bound(timeout_seconds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gold_parsed = mv.parse(f"\\boxed{{{gold}}}", parsing_timeout=bound)
        answer_parsed = mv.parse(f"\\boxed{{{answer}}}", parsing_timeout=bound)
        if not _has_value(gold_parsed) or not _has_value(answer_parsed):
            return None
        if _symbols(gold_parsed[0]) == set() and _symbols(answer_parsed[0]):
            return None
        return bool(mv.verify(gold_parsed, answer_parsed, timeout_seconds=bound))


def _has_value(parsed: list[Any]) -> bool:
    """Whether math-verify's parse holds an expression (not only the text it could not read)."""
    return bool(parsed) and not isinstance(parsed[0], str)


def _symbols(expression: Any) -> set[Any] | None:
    """An expression's free symbols (None for what has none to tell: a set, a relation)."""
    found = getattr(expression, "free_symbols", None)
    return set(found) if found is not None else None


def several_lines(answer: str) -> bool:
    """Whether the answer holds a line break outside an environment: ``\\\\`` or a new line
    between two parts, not inside a ``\\begin{…}…\\end{…}`` (a matrix, ``cases``)."""
    depth = 0
    for match in _LINE_PARTS.finditer(answer.strip()):
        part = match.group(0)
        if part.startswith("\\begin"):
            depth += 1
        elif part.startswith("\\end"):
            depth = max(depth - 1, 0)
        elif depth == 0:  # a line break
            return True
    return False


def false_equation(answer: str, timeout_seconds: int = 5) -> bool:
    """Whether the answer is an equation between numbers (no variable on either side) that does
    not hold, by math-verify's own comparison of its two sides (``7 = 5``; a chain ``7 = 5 = 5``
    when any link fails)."""
    import sympy

    mv, bound = _math_verify(), _bound(timeout_seconds)
    with warnings.catch_warnings():  # as in is_equivalent: the warnings quote the answer
        warnings.simplefilter("ignore")
        parsed = mv.parse(f"\\boxed{{{answer}}}", parsing_timeout=bound)
        if not parsed or not isinstance(parsed[0], sympy.Basic):
            return False
        expr = parsed[0]
        links = expr.args if isinstance(expr, sympy.And) else (expr,)
        return any(
            isinstance(link, sympy.Eq)
            and not link.free_symbols
            and not mv.verify(link.rhs, link.lhs, timeout_seconds=bound)
            for link in links
        )


def same_value(first: str, other: str) -> bool:
    """Two answers of one row are one vote (maj@k): ``other`` equivalent to ``first``, the first
    answer of a vote's group, put in the gold's place."""
    return is_equivalent(other, first)


def score_math(text: str, gold: str) -> MathVerdict:
    """Extract the answer of ``text`` and compare it with ``gold`` (an answer of several lines or
    a false equation is wrong without a comparison)."""
    found = extract_answer(text)
    if found.answer is None:
        return MathVerdict(correct=False, extracted=None, rule=None, reason=found.reason)
    reason = (
        "several_lines"
        if several_lines(found.answer)
        else "false_equation"
        if false_equation(found.answer)
        else None
    )
    return MathVerdict(
        correct=reason is None and is_equivalent(found.answer, gold), extracted=found.answer,
        rule=found.rule, reason=reason,
    )  # fmt: skip
