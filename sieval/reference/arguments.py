"""A tool call's arguments, derived from the request's words and valid under the tool's schema.

The reference model cannot read a request the way a model does, so a call's arguments come from
the text that asked for it (the user's words after the tool's name, else the whole turn), by
rules simple enough to predict in a test:

* an explicit value wins: ``city=Paris``, ``city: Paris`` or ``"city": "Paris"`` (quoted
  values may hold spaces), coerced to the property's type;
* an ``enum`` takes the member the text names (case-insensitive), else its first member; a
  ``const`` is itself;
* a ``string`` takes the next unused word of the text: quoted phrases first, then capitalised
  words that do not open a sentence, then content words; a ``format`` (date, date-time, email,
  uri, uuid) gets a fixed valid value; ``maxLength`` cuts it;
* an ``integer`` / ``number`` takes the next number in the text, clamped into its bounds, else
  its minimum (or 1);
* a ``boolean`` is true when the text names the property, else false;
* an ``array`` holds ``minItems`` items (at least one), an ``object`` its ``required``
  properties plus the optional ones the text names, or one of whose enum members it names (all
  of them when it lists no ``required``);
* ``anyOf`` / ``oneOf`` take their first branch, a type list its first non-null type.

Every schema keyword it does not know (``pattern``, ``multipleOf``, ...) is ignored, so a value
may break one of those; types, required properties, enums and nesting always hold.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["arguments", "content_words"]

_STOP_WORDS = (
    "the and for with what which who whom whose when where why how that this these those "
    "from into onto about please tell give show find call use get set can could would "
    "should will you your our are was were has have had its it's is not but all any some "
    "one two there their then than them they her his him she he me my we us of to in on "
    "at by an a or as be do does did so if no yes"
)
_STOP = frozenset(_STOP_WORDS.split())
_FORMATS = {
    "date": "2026-01-01",
    "date-time": "2026-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_TERM = re.compile(r"[A-Za-z](?:[\w'/.-]*\w)?")
"""A word that may hold ``/``, ``_``, ``.`` or digits inside (``Europe/Paris``, ``v2.1``)."""
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_QUOTED = re.compile(r"\"([^\"\n]{1,80})\"|'([^'\n]{1,80})'")


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry meaning: lowercased, three letters or more, no stop
    words, a plural ``s`` dropped (``cities`` stays, ``cats`` is ``cat``)."""
    out = []
    for word in _WORD.findall(text.lower()):
        word = word.strip("'-")
        if len(word) < 3 or word in _STOP:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def _opens_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` is the first of the text or of a sentence."""
    at -= 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return at < 0 or text[at] in ".!?:\n"


def _explicit(text: str, key: str) -> str | None:
    """The value written for ``key`` in ``text`` (``key=v``, ``key: v``, ``"key": "v"``)."""
    name = re.escape(key)
    pattern = rf"(?<![\w.]){name}\"?\s*[:=]\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s,;}}\]\)]+))"
    found = re.search(pattern, text, re.IGNORECASE)
    if found is None:
        return None
    return next(g for g in found.groups() if g is not None).rstrip(".?!")


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text, re.IGNORECASE) is not None


class _Source:
    """The candidate values of one request text, handed out in order."""

    def __init__(self, segment: str, whole: str) -> None:
        self.segment = segment
        self.whole = whole
        self._strings = self._string_candidates(segment) or self._string_candidates(whole)
        self._numbers = _NUMBER.findall(segment) or _NUMBER.findall(whole)
        self._next_string = 0
        self._next_number = 0

    @staticmethod
    def _string_candidates(text: str) -> list[str]:
        quoted = [a or b for a, b in _QUOTED.findall(text)]
        proper = [
            m.group(0)
            for m in _TERM.finditer(text)
            if m.group(0)[0].isupper()
            and not _opens_sentence(text, m.start())
            and m.group(0).lower() not in _STOP
        ]
        plain = [w for w in content_words(text) if w not in {p.lower() for p in proper}]
        seen: set[str] = set()
        out = []
        for value in [*quoted, *proper, *plain]:
            if value not in seen:
                seen.add(value)
                out.append(value)
        return out

    def explicit(self, key: str) -> str | None:
        value = _explicit(self.segment, key)
        return value if value is not None else _explicit(self.whole, key)

    def named(self, word: str) -> bool:
        return _mentions(self.segment, word) or _mentions(self.whole, word)

    def string(self, fallback: str) -> str:
        if not self._strings:
            return fallback
        value = self._strings[self._next_string % len(self._strings)]
        self._next_string += 1
        return value

    def number(self) -> float | None:
        if self._next_number >= len(self._numbers):
            return None
        value = float(self._numbers[self._next_number])
        self._next_number += 1
        return value


def arguments(schema: Any, segment: str, whole: str) -> dict[str, Any]:
    """The arguments of one call under ``schema`` (a JSON Schema object), from the text that
    asked for it (``segment``) and the whole turn (``whole``)."""
    value = _value(_normal(schema) or {"type": "object"}, "arguments", _Source(segment, whole))
    return value if isinstance(value, dict) else {}


def _normal(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            merged = {k: v for k, v in schema.items() if k != key}
            return {**merged, **_normal(branches[0])}
    return schema


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if isinstance(kind, str):
        return kind.lower()
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _value(schema: dict[str, Any], key: str, source: _Source) -> Any:
    schema = _normal(schema)
    if "const" in schema:
        return schema["const"]
    kind = _kind(schema)
    told = source.explicit(key) if kind not in ("object", "array") else None
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        for member in enum:
            if told is not None and str(member).lower() == told.lower():
                return member
        named = [m for m in enum if isinstance(m, str) and source.named(m)]
        return named[0] if named else enum[0]
    if kind == "object":
        return _object(schema, source)
    if kind == "array":
        return _array(schema, key, source)
    if kind in ("integer", "number"):
        return _number(schema, kind, told, source)
    if kind == "boolean":
        if told is not None and told.lower() in ("true", "false", "yes", "no"):
            return told.lower() in ("true", "yes")
        return source.named(key)
    if kind == "null":
        return None
    return _string(schema, key, told, source)


def _object(schema: dict[str, Any], source: _Source) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    required = schema.get("required")
    out: dict[str, Any] = {}
    for name, sub in properties.items():
        enum = sub.get("enum") if isinstance(sub, dict) else None
        wanted = (
            not isinstance(required, list)
            or name in required
            or source.named(name)
            or source.explicit(name) is not None
            or any(isinstance(m, str) and source.named(m) for m in enum or [])
        )
        if wanted:
            out[name] = _value(sub if isinstance(sub, dict) else {}, name, source)
    return out


def _array(schema: dict[str, Any], key: str, source: _Source) -> list[Any]:
    items = schema.get("items")
    items = items if isinstance(items, dict) else {"type": "string"}
    least = schema.get("minItems")
    count = least if isinstance(least, int) and least > 0 else 1
    most = schema.get("maxItems")
    if isinstance(most, int):
        count = min(count, most)
    return [_value(items, key, source) for _ in range(count)]


def _number(schema: dict[str, Any], kind: str, told: str | None, source: _Source) -> float | int:
    value: float | None = None
    if told is not None:
        try:
            value = float(told)
        except ValueError:
            value = None
    if value is None:
        value = source.number()
    low = _bound(schema, "minimum", "exclusiveMinimum", kind, 1)
    high = _bound(schema, "maximum", "exclusiveMaximum", kind, -1)
    if value is None or not math.isfinite(value):
        value = low if low is not None else 1.0
    if kind == "integer":
        whole = round(value)
        if low is not None and whole < low:
            whole = math.ceil(low)
        if high is not None and whole > high:
            whole = math.floor(high)
        return int(whole)
    if low is not None:
        value = max(value, low)
    if high is not None:
        value = min(value, high)
    return int(value) if value.is_integer() else value


def _bound(
    schema: dict[str, Any], inclusive: str, exclusive: str, kind: str, direction: int
) -> float | None:
    if isinstance(schema.get(inclusive), int | float):
        return float(schema[inclusive])
    edge = schema.get(exclusive)
    if isinstance(edge, int | float) and not isinstance(edge, bool):
        step = 1.0 if kind == "integer" else 1e-6
        return float(edge) + direction * step
    return None


def _string(schema: dict[str, Any], key: str, told: str | None, source: _Source) -> str:
    fmt = schema.get("format")
    if told is not None:
        value = told
    elif isinstance(fmt, str) and fmt in _FORMATS:
        value = _FORMATS[fmt]
    else:
        value = source.string(key)
    most = schema.get("maxLength")
    if isinstance(most, int) and most >= 0:
        value = value[:most]
    least = schema.get("minLength")
    if isinstance(least, int) and len(value) < least:
        value = value + "x" * (least - len(value))
    return value
