"""Function calls read from text, as BFCL's Prompt column reads them, and hermes tool-call
markup found in a reply's text.

**BFCL's Python call syntax** (:func:`python_calls`): the system prompt asks for
``[func_name1(params_name1=params_value1, ...), func_name2(params)]``. The text is stripped of
backticks, newlines and spaces at its ends, wrapped in ``[...]`` when it is not already, stripped
of single quotes, and parsed as one Python expression: a call or a list of calls. A call's name
is its dotted path (``math.factorial``); only keyword arguments count. A value is a literal
(``...`` reads as the string ``"..."``), a negated literal, a list, dict or tuple of values, a
bare name (its text), arithmetic on literals (computed), a call without keywords (its source
text), a call with keywords (a nested ``{name: {...}}``), or a subscript (its source text); any
other expression, or text that does not parse, is no call list (:class:`NotCalls`). These are
``bfcl-eval`` 2026.3.23's rules (``default_decode_ast_prompting``): one departure, arithmetic is
computed on literals only where BFCL hands it to ``eval`` (a name in it is no call list here;
in BFCL it is Python's own value of that name, or an error).

**Hermes markup** (:func:`hermes_calls`): ``<tool_call>{"name": ..., "arguments": {...}}
</tool_call>`` blocks, the form a hermes-template model writes and a server's tool parser should
have turned into calls; found in an FC reply's text, they are calls the parser lost.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable
from typing import Any

__all__ = ["NotCalls", "hermes_calls", "python_calls", "python_expression"]


class NotCalls(ValueError):
    """The text holds no call list in BFCL's Python syntax (the reason in the message)."""


def python_calls(text: str) -> list[dict[str, Any]]:
    """The calls in ``text`` as ``[{name: {param: value}}]`` (see the module), or ``NotCalls``."""
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return python_expression(text)


def python_expression(text: str) -> list[dict[str, Any]]:
    """The calls of one Python expression (a call, or a list of calls), read as
    :func:`python_calls` reads its wrapped text (``NotCalls``: none)."""
    try:
        tree = ast.parse(text.strip().strip("'"), mode="eval")
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise NotCalls(f"not a Python expression: {exc}") from None
    body = tree.body
    if isinstance(body, ast.Call):
        return [_call(body)]
    elements = getattr(body, "elts", None)
    if elements is None:
        raise NotCalls(f"not a call or a list of calls: {type(body).__name__}")
    out = []
    for element in elements:
        if not isinstance(element, ast.Call):
            raise NotCalls(f"an element is not a call: {ast.unparse(element)[:80]}")
        out.append(_call(element))
    return out


def _call(node: ast.Call) -> dict[str, Any]:
    parts = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    name = ".".join(reversed(parts))
    arguments: dict[Any, Any] = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = _value(keyword.value)
    return {name: arguments}


_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        operand = getattr(node.operand, "value", None)
        if operand is None and not isinstance(node.operand, ast.Constant):
            raise NotCalls(f"unsupported operand: {ast.unparse(node)[:80]}")
        try:
            return -operand  # type: ignore[operator]
        except TypeError as exc:
            raise NotCalls(f"cannot negate {operand!r}") from exc
    if isinstance(node, ast.List):
        return [_value(v) for v in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise NotCalls("a dict unpacks another (**)")
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _call(node) if node.keywords else ast.unparse(node)
    if isinstance(node, ast.Tuple):
        return tuple(_value(v) for v in node.elts)
    if isinstance(node, ast.Subscript):
        return f"{ast.unparse(node.value)}[{ast.unparse(node.slice)}]"
    raise NotCalls(f"unsupported value: {type(node).__name__}")


def _arithmetic(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise NotCalls("an exponent above 64 is not computed")
        try:
            return _ARITHMETIC[type(node.op)](left, right)
        except (TypeError, ArithmeticError) as exc:
            raise NotCalls(f"cannot compute {ast.unparse(node)[:80]}: {exc}") from exc
    raise NotCalls(f"arithmetic on something else than literals: {ast.unparse(node)[:80]}")


_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def hermes_calls(text: str) -> list[dict[str, Any]]:
    """Each ``<tool_call>`` block of ``text`` that parses as ``{"name", "arguments"}`` (a JSON
    object), as ``{name: arguments}``."""
    found = []
    for body in _HERMES.findall(text):
        try:
            value = json.loads(body)
        except ValueError:
            continue
        if (
            isinstance(value, dict)
            and isinstance(value.get("name"), str)
            and isinstance(value.get("arguments", {}), dict)
        ):
            found.append({value["name"]: value.get("arguments", {})})
    return found
