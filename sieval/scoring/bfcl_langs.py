"""BFCL's Java and JavaScript values: the text a model gave for a parameter, read as the value
BFCL's checker compares (``bfcl-eval`` 2026.3.23's type converters, rule for rule, quirks
included; ``tests/scoring/test_bfcl_parity.py`` runs its checker on the same outputs).

A Java or JavaScript entry declares its parameters in that language's types (``long``,
``HashMap``, ``Bigint``, ...); both columns send them as strings (FC: ``type: string`` with the
declared type in the description; Prompt: the call's arguments are read as source text), and the
checker turns each string into a Python value by its declared type before it compares:

- **Java** (:func:`java_value`): ``byte``/``short``/``integer`` an optional ``-`` and digits,
  ``long`` the same ending in ``l``/``L``, ``float`` a decimal (optional exponent) ending in
  ``f``/``F``, ``double`` a decimal without it, ``boolean`` ``true``/``false``; ``char``,
  ``String`` and ``any`` stay the text as given (a ``char`` is never unquoted: BFCL's pattern for
  it cannot match); ``Array`` is ``new T[]{a, b}``, ``ArrayList`` is ``new ArrayList<T>(
  Arrays.asList(a, b))``, ``new ArrayList<T>() {{ add(a); }}`` or an empty ``new
  ArrayList<T>()``, ``HashMap`` is ``new HashMap<K, V>() {{ put("k", v); }}`` or an empty one,
  their items split at every comma (no nesting) and read by the items' declared type (an
  ``ArrayList``'s ``char`` and ``String`` items lose their first and last character, an
  ``Array``'s keep them) or, for a ``HashMap``'s values, as a literal (:func:`java_literal`);
  ``Set``, ``Hashtable``, ``Queue`` and ``Stack`` raise (BFCL's converter does not implement
  them). A text that does not have the declared form stays the text.
- **JavaScript** (:func:`js_value`): ``String`` loses its quotes (``"`` or ``'``), ``integer``
  an optional ``-`` and digits, ``float`` a decimal without exponent, ``Bigint`` digits ending
  in ``n``, ``Boolean`` ``true``/``false``, ``any`` the text; ``array`` is ``[a, b]`` or ``new
  Array(a, b)`` (a two-dimensional one ``[[a], [b]]``, its rows' items read as literals), its
  items split at every comma and read by the items' declared type (a quoted item by that type
  with ``String`` as its own items' type), without one as literals (:func:`js_literal`);
  ``dict`` is ``{key: value, ...}`` on one line, an array or object value read as such, other
  values unquoted and read as literals. A text of another form, or one whose reading fails,
  stays the text.

The "text as given" rule means a wrong form is not an error here: the checker then finds a
string where it wanted another type, and grades it as BFCL does (a variable, or a type error).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "JAVA_TYPES",
    "JS_TYPES",
    "java_literal",
    "java_value",
    "js_literal",
    "js_value",
    "language_of",
]

JAVA_TYPES: Mapping[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "long": int,
    "float": float,
    "double": float,
    "boolean": bool,
    "char": str,
    "String": str,
    "any": str,
    "Array": list,
    "ArrayList": list,
    "Queue": list,
    "Stack": list,
    "Set": set,
    "HashMap": dict,
    "Hashtable": dict,
}
"""A Java parameter's declared type and the Python type of its value once read."""

JS_TYPES: Mapping[str, type] = {
    "String": str,
    "integer": int,
    "float": float,
    "Bigint": int,
    "Boolean": bool,
    "any": str,
    "array": list,
    "dict": dict,
}
"""A JavaScript parameter's declared type and the Python type of its value once read."""

NESTED = ("Array", "ArrayList", "array")
"""Declared types whose items' declared type the reading (and the type check) uses."""


def language_of(category: str) -> str:
    """``java``, ``javascript`` or ``python``: the language of a category's functions, by its
    name as BFCL tells it (``javascript`` before ``java``)."""
    if "javascript" in category:
        return "javascript"
    if "java" in category:
        return "java"
    return "python"


# -- the shared literal forms ----------------------------------------------------------------

_INT = re.compile(r"^-?\d+$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JS_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"^-?\d+n$")


def _number(text: str) -> Any:
    """``int(text)``, else ``float(text)``, else the text (Python's own readings)."""
    for read in (int, float):
        try:
            return read(text)
        except ValueError:
            continue
    return text


def _quoted(text: str, quotes: str) -> bool:
    return any(text.startswith(q) and text.endswith(q) for q in quotes)


# -- Java ---------------------------------------------------------------------------------------


def java_literal(text: str) -> Any:
    """A Java literal read without a declared type: ``true``/``false``, a ``"`` string (its
    quotes dropped), a long (``L``), a float (``f``), else an int, a float or the text."""
    if text in ("true", "false"):
        return text == "true"
    if _quoted(text, '"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _number(text)


def _java_scalar(text: str, declared: str) -> Any:
    if declared in ("byte", "short", "integer"):
        return int(text) if _INT.match(text) else text
    if declared == "long":
        return int(re.sub(r"[lL]$", "", text)) if _JAVA_LONG.match(text) else text
    if declared == "float":
        return float(re.sub(r"[fF]$", "", text)) if _JAVA_FLOAT.match(text) else text
    if declared == "double":
        return float(text) if _JAVA_DOUBLE.match(text) else text
    if declared == "boolean":
        return text == "true" if text in ("true", "false") else text
    return text  # char, String, any


def _java_item(text: str, items: str | None, unquote: bool) -> Any:
    if unquote and items in ("char", "String"):
        return text[1:-1]
    if items:
        return java_value(text, items)
    return java_literal(text)


def _java_arraylist(text: str, items: str | None) -> Any:
    listed = re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text)
    if listed:
        return [_java_item(part.strip(), items, True) for part in listed.group(1).split(",")]
    added = re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL)
    if added:
        found = re.findall(r"add\((.+?)\)", added.group(1))
        return [_java_item(part.strip(), items, True) for part in found]
    if re.search(r"new\s+ArrayList<\w*>\(\)", text):
        return []
    return text


def _java_array(text: str, items: str | None) -> Any:
    found = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if not found:
        return text
    parts = [part.strip() for part in found.group(1).split(",")]
    return [_java_item(part, items, False) for part in parts if part]


def _java_hashmap(text: str) -> Any:
    body = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL)
    if body:
        out: dict[str, Any] = {}
        if body.group(1).strip():
            for key, value in re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", body.group(1)):
                out[key] = java_literal(value.strip())
        return out
    if re.search(r"new\s+HashMap<.*?>\s*\(\)", text):
        return {}
    return text


def java_value(text: str, declared: str, items: str | None = None) -> Any:
    """The Java source ``text`` of a parameter declared ``declared`` (its items ``items``), read
    as BFCL's checker reads it (see the module)."""
    if declared not in JAVA_TYPES:
        raise ValueError(f"Unsupported type: {declared}")
    if declared == "ArrayList":
        return _java_arraylist(text, items)
    if declared == "Array":
        return _java_array(text, items)
    if declared == "HashMap":
        return _java_hashmap(text)
    if declared in ("Set", "Hashtable", "Queue", "Stack"):
        raise NotImplementedError(f"{declared} values are not read (BFCL's converter has none)")
    return _java_scalar(text, declared)


# -- JavaScript ---------------------------------------------------------------------------------


def js_literal(text: str) -> Any:
    """A JavaScript literal read without a declared type: ``true``/``false``, a quoted string
    (``"`` or ``'``, its quotes dropped), else an int, a float or the text."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if _quoted(text, "\"'"):
        return text[1:-1]
    return _number(text)


_ROWS = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


def _js_array(code: str, items: str | None) -> Any:
    rows = _ROWS.match(code)
    if rows:
        out = []
        for index, row in enumerate(re.findall(r"\[(.*?)\]", rows.group(0))):
            row = row.strip()
            if index == 0 and row.startswith("["):
                row = row[1:]
            out.append([js_literal(part.strip()) for part in row.split(",")])
        return out
    found = _ARRAY.match(code)
    if not found:
        return code
    inside = found.group(1) if found.group(1) is not None else found.group(2)
    parts = inside.strip().split(",") if inside is not None and inside.strip() else []
    if not items:
        return [js_literal(part.strip()) for part in parts]
    out = []
    for part in parts:
        part = part.strip()
        if part.startswith(("'", '"')):
            out.append(js_value(part, items, "String"))
        else:
            out.append(js_value(part, items))
    return out


def _js_dict(code: str) -> Any:
    if code == "{}":
        return {}
    found = re.match(r"\{(.*?)\}", code)
    if not found:
        return code
    out: dict[str, Any] = {}
    for key, value in _PAIR.findall(found.group(1)):
        key, value = key.strip().strip("'\""), value.strip()
        if value.startswith("[") and value.endswith("]"):
            out[key] = _js_collection(value, "array", None)
        elif value.startswith("{") and value.endswith("}"):
            out[key] = _js_collection(value, "dict", None)
        else:
            out[key] = js_literal(value.strip("'\""))
    return out


def _js_collection(code: str, declared: str, items: str | None) -> Any:
    """An array or object's source read (its text when the reading fails)."""
    code = code.strip()
    reader: Callable[[], Any] = (
        (lambda: _js_array(code, items)) if declared == "array" else (lambda: _js_dict(code))
    )
    try:
        return reader()
    except Exception:  # BFCL's converter keeps the text on any failure of the reading
        return code


def js_value(text: str, declared: str, items: str | None = None) -> Any:
    """The JavaScript source ``text`` of a parameter declared ``declared`` (its items
    ``items``), read as BFCL's checker reads it (see the module)."""
    if declared not in JS_TYPES:
        raise ValueError(f"Unsupported type: {declared}")
    if declared == "String":
        return text[1:-1] if _quoted(text, "\"'") else text
    if declared == "integer":
        return int(text) if _INT.match(text) else text
    if declared == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if declared == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if declared == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if declared in ("array", "dict"):
        return _js_collection(text, declared, items)
    return text  # any
