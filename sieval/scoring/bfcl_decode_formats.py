"""Calls read from a Prompt answer in each of the return formats BFCL's format-sensitivity
category asks for (``bfcl-eval`` 2026.3.23; ``bfcl_decode.py`` reads the default, Python).

The answer is stripped of backticks, newlines and spaces at its ends and wrapped in ``[...]``
unless it starts and ends so (as for Python). With the tool-call tag, the text between the first
``<TOOLCALL>`` and ``</TOOLCALL>`` (stripped) is read instead; no tag is no call list. Then, by
the return format:

- ``python``: one Python expression, a call or a list of calls (``python_expression``);
- ``json``: the first ``[ ... ]`` span (greedy, across lines), and in it the first list of
  ``{...}`` objects, read as JSON (text that is not JSON: no calls, ``[]``); each object in the
  list is ``{"function": name, "parameters": {...}}``;
- ``verbose_xml``: the first ``<functions>...</functions>`` element, parsed as XML; each
  ``<function name=...>`` with its ``<param name= value= type=/>`` (under ``<params>`` when
  there is one);
- ``concise_xml``: the same element; each ``<param name= type=>value</param>`` (stripped).

An XML value is read by its ``type``: ``string`` as is, ``integer`` and ``float`` by Python's
``int``/``float``, ``boolean`` true when it is ``true`` in any case, ``null`` None, ``array``,
``tuple``, ``object`` and ``dict`` as a Python literal; any other type as is. Any failure on
the way (no tag, no element, bad XML or literal, a key missing) is no call list
(:class:`NotCalls`), as BFCL counts any decoding error as a failed decode.
"""

from __future__ import annotations

import ast
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from .bfcl_decode import NotCalls, python_expression

__all__ = ["RETURN_FORMATS", "format_calls"]

RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")


def _typed(raw: str, kind: str) -> Any:
    if kind == "integer":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "boolean":
        return raw.lower() == "true"
    if kind == "null":
        return None
    if kind in ("array", "tuple", "object", "dict"):
        return ast.literal_eval(raw)
    return raw  # string, and any other type


def _functions(text: str) -> Any:
    found = re.search(r"<functions>(.*?)</functions>", text, re.DOTALL)
    if not found:
        raise NotCalls("no <functions> element")
    return ET.fromstring(found.group(0))


def _verbose(text: str) -> list[dict[str, Any]]:
    out = []
    for function in _functions(text).findall("function"):
        container = function.find("params")
        params = (container if container is not None else function).findall("param")
        args = {
            p.attrib.get("name"): _typed(p.attrib.get("value", ""), p.attrib.get("type", "string"))
            for p in params
        }
        out.append({function.attrib["name"]: args})
    return out


def _concise(text: str) -> list[dict[str, Any]]:
    out = []
    for function in _functions(text).findall("function"):
        args = {
            p.attrib["name"]: _typed((p.text or "").strip(), p.attrib.get("type", "string"))
            for p in function.findall("param")
        }
        out.append({function.attrib["name"]: args})
    return out


def _json(text: str) -> list[dict[str, Any]]:
    span = re.search(r"\[.*\]", text, re.DOTALL)
    if span:
        text = span.group(0)
    listed = re.search(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", text, re.DOTALL)
    if listed:
        text = listed.group(0)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    return [{item["function"]: item["parameters"]} for item in value if isinstance(item, dict)]


_READERS = {"python": python_expression, "json": _json, "verbose_xml": _verbose}


def format_calls(text: str, return_format: str, tag: bool) -> Any:
    """The calls in a Prompt answer asked for in ``return_format`` (with the ``<TOOLCALL>`` tag
    or not): see the module; ``NotCalls`` when there are none."""
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    if tag:
        found = re.search(r"<TOOLCALL>(.*?)</TOOLCALL>", text, re.DOTALL)
        if not found:
            raise NotCalls("no <TOOLCALL> tag")
        text = found.group(1).strip()
    reader = _READERS.get(return_format, _concise)
    try:
        return reader(text)
    except NotCalls:
        raise
    except Exception as exc:  # BFCL counts any error while decoding as a failed decode
        raise NotCalls(f"not calls in {return_format}: {exc!r}") from exc
