"""BFCL's AST checker for function calls (Python; Java and JavaScript with their values read
first, ``bfcl_langs.py``), written from its documented behaviour.

The Berkeley Function Calling Leaderboard (Patil et al., "The Berkeley Function Calling
Leaderboard (BFCL): From Tool Use to Agentic Evaluation of Large Language Models", ICML 2025,
https://gorilla.cs.berkeley.edu/leaderboard.html) grades a single-turn entry by comparing the
calls a model made (``[{name: {param: value}}]``) with the entry's possible answers (``[{name:
{param: [allowed values]}}]``, ``""`` among the allowed values marking a parameter optional).
The verdicts here are those of ``bfcl-eval`` 2026.3.23's checker, rule for rule, quirks
included (``tests/scoring/test_bfcl_parity.py`` runs that checker on the same outputs):

- **simple** (and every category without ``parallel`` or ``multiple`` in its name): exactly one
  call; **multiple**: as many calls as answers, the first checked against the first answer's
  function; **parallel** (and parallel multiple): as many calls as answers, each answer matched
  by the first unmatched call that passes (any order);
- a call passes when its name is the function's (with dots turned to underscores when the
  protocol sent them so: ``dotted``), every required parameter is given, every given parameter
  is declared and has possible answers, each value has the declared type (an int is taken for a
  float; a value of the possible answers' type is taken as a "variable" and compared as is),
  each value is among its possible answers (strings compared without spaces, ``,./-_*^`` and
  case, single quotes read as double; lists element-wise so; dicts key by key), and every
  parameter left out is optional;
- a Java or JavaScript category (by its name) takes each value as text (else
  ``type_error:java``/``type_error:js``), reads it by its declared type as BFCL's type
  converters do, then checks it as above against the Python type the declared one stands for
  (no int taken for a float there);
- the reason of a miss is BFCL's ``error_type`` (``simple_function_checker:missing_required``,
  ``value_error:string``, ...) with its message.

Relevance: an irrelevance entry passes when the model made no call, a relevance entry when it
made one (an empty list, or ``[{}]``, is no call).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .bfcl_langs import JAVA_TYPES, JS_TYPES, NESTED, java_value, js_value, language_of

__all__ = [
    "PYTHON_TYPES",
    "Verdict",
    "check",
    "grade",
    "is_call_list",
    "made_a_call",
    "standardize",
]

PYTHON_TYPES: Mapping[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
"""A parameter's declared type (BFCL's names) and the Python type its value must have."""

_NESTED = ("array", "tuple")
"""Declared types whose items' type is checked too (one level deep, as BFCL does)."""


@dataclass(frozen=True)
class Verdict:
    """One entry's grade: passed, or the checker's reason (its ``error_type`` and message)."""

    valid: bool
    error_type: str | None = None
    error: str | None = None


_PASS = Verdict(True)


def _miss(error_type: str, error: str) -> Verdict:
    return Verdict(False, error_type, error)


def standardize(text: str) -> str:
    """A string as BFCL compares it: without spaces and ``,./-_*^``, lowercase, ``'`` as ``"``."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _by_index(values: Any) -> list[Any]:
    """``values`` read item by item by index, as BFCL reads a possible answer (a string is its
    characters)."""
    return [values[i] for i in range(len(values))]


def is_call_list(decoded: Any) -> bool:
    """Whether ``decoded`` is ``[{name: {param: value}}, ...]`` (an empty list is)."""
    if type(decoded) is not list:
        return False
    return all(
        type(item) is dict and len(item) == 1 and type(next(iter(item.values()))) is dict
        for item in decoded
    )


def made_a_call(decoded: Any) -> bool:
    """Whether a decoded reply holds a call, as BFCL's relevance check reads it: a call list
    that is neither empty nor ``[{}]``."""
    if not is_call_list(decoded) or len(decoded) == 0:
        return False
    return not (len(decoded) == 1 and len(decoded[0]) == 0)


def grade(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    answers: Any,
    decoded: Any,
    *,
    dotted: bool = False,
) -> Verdict:
    """BFCL's verdict on one entry's reply: ``decoded`` is the reply read as calls (None: it
    could not be read). A relevance category (its name holds ``relevance``) asks whether a call
    was made (irrelevance: none); every other category goes through :func:`check`, after the
    reply was read (``ast_decoder:decoder_failed``) in call-list form
    (``ast_decoder:decoder_wrong_output_format``)."""
    if "relevance" in category:
        called = decoded is not None and made_a_call(decoded)
        if "irrelevance" in category:
            if called:
                return _miss("irrelevance_error:decoder_success", "a call was made")
            return _PASS
        return _PASS if called else _miss("relevance_error:decoder_failed", "no call was made")
    if decoded is None:
        return _miss("ast_decoder:decoder_failed", "the reply could not be read as calls")
    if not is_call_list(decoded):
        return _miss("ast_decoder:decoder_wrong_output_format", "not a list of calls")
    return check(
        functions, decoded, answers, category, dotted=dotted, language=language_of(category)
    )


def check(
    functions: Sequence[Mapping[str, Any]],
    calls: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    category: str,
    *,
    dotted: bool = False,
    language: str = "python",
) -> Verdict:
    """The verdict on ``calls`` (a call list) for an entry of ``category`` offering
    ``functions`` with possible ``answers``; ``dotted``: the protocol sent a dotted name with
    its dots as underscores; ``language``: the functions' (``python``, ``java``,
    ``javascript``: the last two read each value from its text first, ``bfcl_langs.py``)."""
    if language not in ("python", "java", "javascript"):
        raise ValueError(f"Unsupported language: {language}")
    if "parallel" in category:
        return _parallel(functions, calls, answers, dotted, language)
    if "multiple" in category:
        if len(calls) != len(answers):
            return _miss("multiple_function_checker:wrong_count", "Wrong number of functions.")
        expected = next(iter(answers[0]))
        return _one(_find(functions, expected), calls[0], answers[0], dotted, language)
    if len(calls) != 1:
        return _miss("simple_function_checker:wrong_count", "Wrong number of functions.")
    return _one(functions[0], calls[0], answers[0], dotted, language)


def _find(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for function in functions:
        if function["name"] == name:
            return function
    raise KeyError(f"no function named {name!r} is offered")


def _parallel(
    functions: Sequence[Mapping[str, Any]],
    calls: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    dotted: bool,
    language: str,
) -> Verdict:
    if len(calls) != len(answers):
        return _miss("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
    matched: set[int] = set()
    for i, answer in enumerate(answers):
        function = _find(functions, next(iter(answer)))
        reasons = []
        for index, call in enumerate(calls):
            if index in matched:
                continue
            verdict = _one(function, call, answer, dotted, language)
            if verdict.valid:
                matched.add(index)
                break
            reasons.append(f"call {index}: {verdict.error_type}: {verdict.error}")
        else:
            return _miss(
                "parallel_function_checker_no_order:cannot_find_match",
                f"no call matches possible answer {i}; " + "; ".join(reasons),
            )
    return _PASS


def _one(
    function: Mapping[str, Any],
    call: dict[str, Any],
    answer: dict[str, Any],
    dotted: bool,
    language: str = "python",
) -> Verdict:
    """One call against one function's possible answer."""
    allowed: dict[str, Any] = next(iter(answer.values()))
    name = str(function["name"])
    if dotted and "." in name:
        name = name.replace(".", "_")
    if name not in call:
        return _miss(
            "simple_function_checker:wrong_func_name",
            f"Function name {name!r} not found in model output.",
        )
    given: dict[str, Any] = call[name]
    declared: Mapping[str, Any] = function["parameters"]["properties"]
    for param in function["parameters"]["required"]:
        if param not in given:
            return _miss(
                "simple_function_checker:missing_required",
                f"Missing required parameter: {param!r}.",
            )
    for param, value in given.items():
        if param not in declared or param not in allowed:
            return _miss(
                "simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}."
            )
        verdict = _value(param, value, declared[param], allowed[param], language)
        if not verdict.valid:
            return verdict
    for param, values in allowed.items():
        if param not in given and "" not in values:
            return _miss(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return _PASS


def _read(
    param: str, value: Any, schema: Mapping[str, Any], language: str
) -> Verdict | tuple[type, type | None, Any]:
    """``(expected type, items' expected type, value)`` for a Java or JavaScript parameter: its
    text read by its declared type (a value that is no text is the type error, a Verdict)."""
    described = schema["type"]
    types, read = (JAVA_TYPES, java_value) if language == "java" else (JS_TYPES, js_value)
    expected = types[described]
    if type(value) is not str:
        return _miss(
            f"type_error:{'java' if language == 'java' else 'js'}",
            f"Incorrect type for parameter {param!r}. Expected type String, got "
            f"{type(value).__name__}. Parameter value: {value!r}.",
        )
    if described in NESTED:
        items = schema["items"]["type"]
        return expected, types[items], read(value, described, items)
    return expected, None, read(value, described)


def _value(
    param: str,
    value: Any,
    schema: Mapping[str, Any],
    allowed: list[Any],
    language: str = "python",
) -> Verdict:
    described = schema["type"]
    if language != "python":
        read = _read(param, value, schema, language)
        if isinstance(read, Verdict):
            return read
        expected, nested, value = read
    else:
        expected = PYTHON_TYPES[described]
        nested = PYTHON_TYPES[schema["items"]["type"]] if described in _NESTED else None
        if described == "tuple" and type(value) is tuple:
            value = list(value)
        if described == "float" and type(value) is int:
            value = float(value)
    typed, variable = _typed(param, value, allowed, described, expected, nested)
    if not typed.valid:
        return typed
    if not variable:
        if expected is dict:
            return _dict(param, value, allowed)
        if expected is list and nested is dict:
            return _dict_list(param, value, allowed)
        if expected is str:
            if standardize(value) not in [standardize(a) for a in allowed if type(a) is str]:
                return _miss(
                    "value_error:string",
                    f"Invalid value for parameter {param!r}: {value!r}. Expected one of "
                    f"{allowed}. Case insensitive.",
                )
            return _PASS
        if expected is list:
            given = [_std(v) for v in value]
            if given not in [[_std(v) for v in _by_index(a)] for a in allowed]:
                return _miss(
                    "value_error:list/tuple",
                    f"Invalid value for parameter {param!r}: {value!r}. Expected one of {allowed}.",
                )
            return _PASS
    if value not in allowed:
        return _miss(
            "value_error:others",
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {allowed}.",
        )
    return _PASS


def _answer_type(allowed: list[Any]) -> type | None:
    """The type of the first possible answer that is not the optional marker ``""``."""
    for answer in allowed:
        if answer != "":
            return type(answer)
    return None


def _typed(
    param: str,
    value: Any,
    allowed: list[Any],
    described: str,
    expected: type,
    nested: type | None,
) -> tuple[Verdict, bool]:
    """Whether ``value`` has its declared type, and whether it is a "variable" (its possible
    answers are of another type than declared: then it is compared as is)."""
    answer_type = _answer_type(allowed)
    variable = answer_type is not None and answer_type is not expected
    nested_failed = False
    items: Any = value  # a list when it has its declared (nested) type
    if type(value) is expected:
        if nested is None:
            return _PASS, variable
        for answer in allowed:
            if type(answer) is not list or all(
                _typed(param, item, answer, nested.__name__, nested, None)[0].valid
                for item in items
            ):
                return _PASS, variable
        nested_failed = True
    if answer_type is not None and type(value) is answer_type:
        if nested_failed:  # BFCL keeps the nested failure, yet marks it a variable
            return _miss(
                "type_error:nested",
                f"Nested type checking failed for parameter {param!r}. Expected outer type "
                f"{described} with inner type {nested}. Parameter value: {value!r}.",
            ), True
        return _PASS, True
    return _miss(
        "type_error:simple",
        f"Incorrect type for parameter {param!r}. Expected type {described}, got "
        f"{type(value).__name__}. Parameter value: {value!r}.",
    ), variable


def _dict(param: str, value: dict[str, Any], allowed: list[Any]) -> Verdict:
    """A dict value against each possible dict (``""`` skipped): each key declared and its
    value among the possible ones, each missing key optional."""
    verdict = _miss("dict_checker:unclear", f"No possible answer for parameter {param!r}.")
    for answer in allowed:
        if answer == "":
            continue
        verdict = _PASS
        for key, item in value.items():
            if key not in answer:
                verdict = _miss("value_error:dict_key", f"Unexpected dict key parameter: {key!r}.")
                break
            if _std(item) not in [_std(a) for a in _by_index(answer[key])]:
                verdict = _miss(
                    "value_error:dict_value",
                    f"Invalid value for parameter {key!r}: {item!r}. Expected one of "
                    f"{[_std(a) for a in _by_index(answer[key])]}.",
                )
                break
        for key, options in answer.items():
            if key not in value and "" not in options:
                verdict = _miss("value_error:dict_key", f"Missing dict key parameter: {key!r}.")
                break
        if verdict.valid:
            return verdict
    return verdict


def _dict_list(param: str, value: list[Any], allowed: list[Any]) -> Verdict:
    """A list of dicts against each possible list: the same length, each dict in its place."""
    verdict = _miss("list_dict_checker:unclear", f"No possible answer for parameter {param!r}.")
    for answer in allowed:
        if len(value) != len(answer):
            verdict = _miss(
                "value_error:list_dict_count", "Wrong number of dictionaries in the list."
            )
            continue
        verdict = _PASS
        for index, item in enumerate(value):
            verdict = _dict(param, item, [answer[index]])
            if not verdict.valid:
                break
        if verdict.valid:
            return verdict
    return verdict
