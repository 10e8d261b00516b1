"""The reference server as a judge: a prompt that asks for a verdict in a known format gets a
deterministic, parseable one, computed from a simple real comparison.

Formats recognised in the prompt (the first that matches, in this order):

==========  ==========================================  ===================================
kind        the prompt contains                         the reply ends with
==========  ==========================================  ===================================
``arena``   ``[[A>>B]]`` (Arena-Hard's five labels)      ``My final verdict is: [[A>B]]``
``pair``    ``"[[A]]" if assistant A is better``         ``[[A]]``, ``[[B]]`` or ``[[C]]``
            (MT-Bench's pairwise prompts)
``rating``  ``[[rating]]`` (MT-Bench's single grading)   ``Rating: [[7]]`` (1 to 10)
``grade``   ``GRADE: $LETTER`` (Inspect's model-graded  ``GRADE: C`` (or ``I``; ``P`` when
            QA), or ``GRADE: C`` and ``GRADE: I``        the prompt allows it)
``json``    none of these, but answer sections and a     the schema filled in (below)
            JSON-schema constraint (structured output)
==========  ==========================================  ===================================

**The comparison**: the answers and the reference are read from the prompt's sections
(``[The Start of Assistant A's Answer]`` ... ``[The End of ...]``, the ``<|...|>`` forms of
Arena-Hard and of MT-Bench's multi-turn prompts, whose last ``### Assistant`` turn is the one
judged, and Inspect's ``[Submission]:`` / ``[Criterion]:``). An answer's score is the share of
the reference's content words it contains (the question's, when there is no reference: the last
``### User`` turn of a multi-turn prompt). A rating
is ``1 + round(9 * score)``; a pairwise verdict compares the two scores (a difference of at most
0.05 is a tie, more than 0.3 is "significantly better"); a grade is C from 0.5 (P from 0.25).

**Settings matter, deterministically**: at ``temperature`` > 0 the score moves by a draw from
the request's generator (its ``seed``, else the server's), up to 0.2 times the temperature
(capped at 1): a rejudge at another temperature or seed can disagree, and the same settings
always agree.

**A JSON verdict** fills every property of the schema: numbers get the rating scaled into their
bounds (1 to 10 without bounds), booleans ``score >= 0.5``, an enum the verdict's label when it
lists it (else its first member for a good answer, its last for a poor one), strings the
explanation, nested objects the same way.

**The fault** ``judge-unparseable`` (``faults.py``) keeps the explanation but breaks the
verdict: ``[[seven]]``, ``[[A?B]]``, ``[[A or B]]``, ``GRADE: unclear``, or a JSON object
without its verdict properties; every parser of the reference implementations rejects them.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import Any, Literal

from .arguments import content_words

__all__ = ["Ask", "asked", "verdict"]

Kind = Literal["arena", "pair", "rating", "grade", "json"]
_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_SECTION = re.compile(
    r"\[The Start of (?P<a>[^\]\n]+)\]\n?(?P<b>.*?)\n?\[The End of (?P=a)\]"
    r"|<\|The Start of (?P<c>[^|\n]+)\|>\n?(?P<d>.*?)\n?<\|The End of (?P=c)\|>",
    re.DOTALL,
)
_TURN = re.compile(r"### (?:Assistant [AB]|Assistant|Reference answer):\n")
_INSPECT = re.compile(r"\[(Task|Question|Submission|Criterion)\]:\s*(.*?)\s*(?:\n\*\*\*|$)", re.S)
_USER_TURN = re.compile(r"### User:\n(.*?)(?=\n\n###|\n\n<\||$)", re.DOTALL)
_QUESTION = re.compile(
    r"\[(?:User )?Question\]\n(.*?)(?:\n\n\[|$)|<\|User Prompt\|>\n(.*?)(?:\n\n<\||$)", re.S
)


@dataclass(frozen=True)
class Ask:
    """A verdict asked for: its kind and, for a grade, the letters allowed."""

    kind: Kind
    letters: str = "CI"


def asked(prompt: str, structured: bool) -> Ask | None:
    """The verdict ``prompt`` asks for, if any; ``structured``: the reply is held to a JSON
    schema (then any judging prompt, one with answer sections, gets a JSON verdict)."""
    kind: Kind | None = None
    if "[[A>>B]]" in prompt:
        kind = "arena"
    elif '"[[A]]" if assistant A is better' in prompt:
        kind = "pair"
    elif "[[rating]]" in prompt:
        kind = "rating"
    elif "GRADE: $LETTER" in prompt or ("GRADE: C" in prompt and "GRADE: I" in prompt):
        letters = re.search(r"LETTER is one of ([A-Z]{2,5})\b", prompt)
        return Ask("json" if structured else "grade", letters.group(1) if letters else "CI")
    if structured and (kind is not None or _SECTION.search(prompt) or "[Submission]:" in prompt):
        return Ask("json")
    return Ask(kind) if kind is not None else None


# -- reading the prompt ---------------------------------------------------------------------------


def _last_turn(body: str) -> str:
    turns = _TURN.split(body)
    return turns[-1].strip() if len(turns) > 1 else body.strip()


def _sections(prompt: str) -> dict[str, str]:
    """``{"a", "b", "reference", "question"}`` as far as the prompt has them."""
    out: dict[str, str] = {}
    for m in _SECTION.finditer(prompt):
        label = m.group("a") or m.group("c") or ""
        body = _last_turn(m.group("b") if m.group("a") else m.group("d") or "")
        if "Reference" in label:
            out["reference"] = body
        elif "Assistant B" in label:
            out["b"] = body
        elif "Assistant" in label:
            out["a"] = body
    for name, body in _INSPECT.findall(prompt):
        key = {"Submission": "a", "Criterion": "reference"}.get(name, "question")
        out.setdefault(key, body)
    question = _QUESTION.search(prompt)
    if question is not None:
        out.setdefault("question", (question.group(1) or question.group(2) or "").strip())
    asked_last = _USER_TURN.findall(prompt)  # a multi-turn prompt judges its last question
    if asked_last:
        out.setdefault("question", asked_last[-1].strip())
    return out


@dataclass(frozen=True)
class _Score:
    share: float
    shared: int
    of: int


def _score(answer: str, target: str) -> _Score:
    wanted = set(content_words(target))
    if not wanted:
        return _Score(0.0, 0, 0)
    shared = len(wanted & set(content_words(answer)))
    return _Score(shared / len(wanted), shared, len(wanted))


def _arena(difference: float) -> str:
    if difference > 0.3:
        return "A>>B"
    if difference > 0.05:
        return "A>B"
    if difference < -0.3:
        return "B>>A"
    if difference < -0.05:
        return "B>A"
    return "A=B"


# -- the verdict ----------------------------------------------------------------------------------


def verdict(
    prompt: str,
    ask: Ask,
    schema: dict[str, Any] | None,
    temperature: float,
    rng: random.Random,
    broken: bool = False,
) -> str:
    """The judge's reply to ``prompt`` (see the module docstring)."""
    parts = _sections(prompt)
    target_name = "reference answer" if "reference" in parts else "question"
    if ask.kind == "grade" and "reference" in parts:
        target_name = "criterion"
    target = parts.get("reference") or parts.get("question") or ""
    a, b = _score(parts.get("a", ""), target), _score(parts.get("b", ""), target)
    shift = rng.uniform(-0.2, 0.2) * min(temperature, 1.0) if temperature > 0 else 0.0
    share = min(max(a.share + shift, 0.0), 1.0)
    difference = a.share - b.share + shift
    pairwise = "b" in parts and ask.kind in ("arena", "pair", "json")
    if pairwise:
        why = (
            f"Assistant A shares {a.shared} of {a.of} key words with the {target_name}, "
            f"assistant B {b.shared}."
        )
    else:
        why = f"The answer shares {a.shared} of {a.of} key words with the {target_name}."
    rating = 1 + round(9 * share)
    letter = "C" if abs(difference) <= 0.05 else "A" if difference > 0 else "B"
    if ask.kind == "json":
        labels = [_arena(difference), letter] if pairwise else [_grade(share, ask.letters)]
        if pairwise and letter == "C":
            labels += ["tie", "Tie", "TIE"]
        return json.dumps(_fill(schema or {}, share, rating, labels, why, broken))
    if ask.kind == "arena":
        label = "A?B" if broken else _arena(difference)
        return f"{why} My final verdict is: [[{label}]]"
    if ask.kind == "pair":
        return f"{why} [[{'A or B' if broken else letter}]]"
    if ask.kind == "grade":
        return f"{why}\nGRADE: {'unclear' if broken else _grade(share, ask.letters)}"
    return f"{why} Rating: [[{_WORDS[rating] if broken else rating}]]"


def _grade(share: float, letters: str) -> str:
    if share >= 0.5:
        return "C"
    return "P" if share >= 0.25 and "P" in letters else "I"


def _fill(
    schema: dict[str, Any], share: float, rating: int, labels: list[str], why: str, broken: bool
) -> Any:
    """A value for ``schema`` carrying the verdict (without it when ``broken``); ``labels``: the
    verdict's names, the first an enum lists is taken."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    properties = schema.get("properties")
    if kind == "object" or isinstance(properties, dict):
        out = {}
        for name, sub in (properties or {}).items():
            sub = sub if isinstance(sub, dict) else {}
            if broken and _carries_verdict(sub):
                continue
            out[name] = _fill(sub, share, rating, labels, why, broken)
        return out
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        for label in labels:
            if label in enum:
                return label
        return enum[0] if share >= 0.5 else enum[-1]
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        high = schema.get("maximum", 10)
        value = low + (high - low) * (rating - 1) / 9
        return round(value) if kind == "integer" else value
    if kind == "boolean":
        return share >= 0.5
    if kind == "array":
        items = schema.get("items")
        item = items if isinstance(items, dict) else {}
        return [_fill(item, share, rating, labels, why, broken)]
    if kind == "null":
        return None
    return why


def _carries_verdict(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return "enum" in schema or kind in ("integer", "number", "boolean")
