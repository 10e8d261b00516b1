"""BFCL's Java and JavaScript entries on their own (no oracle needed): how a value's text is read
by its declared type, how a Prompt answer's call is read by the language's grammar, and the
checker's verdicts on both; each expected value here is bfcl-eval 2026.3.23's on the same input
(the parity test compares thousands more with its checker)."""

from __future__ import annotations

from typing import Any

import pytest

from sieval.scoring.bfcl_checker import grade
from sieval.scoring.bfcl_decode import NotCalls
from sieval.scoring.bfcl_decode_langs import java_calls, javascript_calls
from sieval.scoring.bfcl_langs import java_value, js_value, language_of


def test_java_scalars_are_read_by_their_declared_type_else_kept_as_text() -> None:
    assert java_value("42", "integer") == 42 and java_value("-7", "short") == -7
    assert java_value("42L", "long") == 42
    assert java_value("42", "long") == "42"  # a long needs its L
    assert java_value("2.5f", "float") == 2.5 and java_value("3e2F", "float") == 300.0
    assert java_value("2.5", "float") == "2.5"  # a float needs its f
    assert java_value("2.5", "double") == 2.5 and java_value("2.5f", "double") == "2.5f"
    assert java_value("true", "boolean") is True and java_value("True", "boolean") == "True"
    assert java_value("'a'", "char") == "'a'"  # BFCL's char pattern never matches: kept
    assert java_value('"x"', "String") == '"x"'
    with pytest.raises(NotImplementedError):
        java_value("new HashSet<>()", "Set")
    with pytest.raises(ValueError, match="Unsupported type"):
        java_value("1", "int")


def test_java_collections_are_read_from_their_creation_expressions() -> None:
    assert java_value("new int[]{1, 2, 3}", "Array", "integer") == [1, 2, 3]
    assert java_value('new String[]{"a", "b"}', "Array", "String") == ['"a"', '"b"']  # quoted
    assert java_value("new long[]{1L, 2}", "Array", "long") == [1, "2"]
    assert java_value('new ArrayList<>(Arrays.asList("a", "b"))', "ArrayList", "String") == [
        "a",
        "b",
    ]
    assert java_value("new ArrayList<Integer>() {{ add(1); add(2); }}", "ArrayList", "integer") == [
        1,
        2,
    ]
    assert java_value("new ArrayList<>()", "ArrayList", "String") == []
    assert java_value("[1, 2]", "ArrayList", "integer") == "[1, 2]"
    text = 'new HashMap<String, Object>() {{ put("limit", 50); put("on", true); put("s", "x"); }}'
    assert java_value(text, "HashMap") == {"limit": 50, "on": True, "s": "x"}
    assert java_value("new HashMap<String,String>()", "HashMap") == {}


def test_javascript_values_are_read_by_their_declared_type() -> None:
    assert js_value("'abc'", "String") == "abc" and js_value("abc", "String") == "abc"
    assert js_value("12", "integer") == 12 and js_value("1.5", "float") == 1.5
    assert js_value("1e3", "float") == "1e3"  # no exponent in BFCL's float
    assert js_value("12n", "Bigint") == 12 and js_value("12", "Bigint") == "12"
    assert js_value("false", "Boolean") is False
    assert js_value("[1, 'two', true]", "array") == [1, "two", True]
    assert js_value("new Array(1, 2)", "array", "integer") == [1, 2]
    assert js_value("[[1, 2], [3, 4]]", "array", "array") == [[1, 2], [3, 4]]
    assert js_value("['a', 'b']", "array", "String") == ["a", "b"]
    assert js_value("[1, 2]", "array", "Object") == "[1, 2]"  # a failed reading keeps the text
    assert js_value("{a: 1, b: 'x', c: [1, 2]}", "dict") == {"a": 1, "b": "x", "c": [1, 2]}
    assert js_value("{\n a: 1}", "dict") == "{\n a: 1}"  # one line only
    assert [language_of(c) for c in ("simple_java", "simple_javascript", "simple_python")] == [
        "java",
        "javascript",
        "python",
    ]


JAVA = [
    {
        "name": "Cache.put",
        "parameters": {
            "type": "dict",
            "properties": {
                "ttl": {"type": "long"},
                "keys": {"type": "ArrayList", "items": {"type": "String"}},
                "owner": {"type": "any"},
            },
            "required": ["ttl"],
        },
    }
]
JAVA_ANSWER = [{"Cache.put": {"ttl": [60], "keys": [["a", "b"], ""], "owner": ["me", ""]}}]


def java(args: dict[str, Any], dotted: bool = True) -> tuple[bool, str | None]:
    name = "Cache_put" if dotted else "Cache.put"
    found = grade("simple_java", JAVA, JAVA_ANSWER, [{name: args}], dotted=dotted)
    return found.valid, found.error_type


def test_the_checker_reads_java_values_before_it_compares() -> None:
    assert java({"ttl": "60L", "keys": 'new ArrayList<>(Arrays.asList("A", "b"))'}) == (True, None)
    assert java({"ttl": "60"}) == (False, "type_error:simple")  # "60" stays text: not a long
    assert java({"ttl": 60}) == (False, "type_error:java")  # a value that is no text
    assert java({"ttl": "61L"}) == (False, "value_error:others")
    assert java({"ttl": "60L", "owner": "ME"}) == (True, None)  # any: compared as a string
    keys = 'new ArrayList<>(Arrays.asList("a"))'
    assert java({"ttl": "60L", "keys": keys}) == (False, "value_error:list/tuple")
    # an empty list matches the optional marker "", read as a list of its characters (none)
    assert java({"ttl": "60L", "keys": "new ArrayList<>()"}) == (True, None)


def test_javascript_checks_read_values_and_keep_a_string_answer_a_variable() -> None:
    functions = [
        {
            "name": "draw",
            "parameters": {
                "type": "dict",
                "properties": {"w": {"type": "float"}, "opts": {"type": "dict"}},
                "required": ["w"],
            },
        }
    ]
    answer = [{"draw": {"w": [2.0], "opts": ["options", ""]}}]

    def js(args: dict[str, Any]) -> tuple[bool, str | None]:
        found = grade("simple_javascript", functions, answer, [{"draw": args}])
        return found.valid, found.error_type

    assert js({"w": "2.0"}) == (True, None)
    assert js({"w": "2"}) == (True, None)  # float() of "2" equals 2.0
    assert js({"w": "2.0", "opts": "options"}) == (True, None)  # a variable's name
    assert js({"w": True}) == (False, "type_error:js")


def test_java_prompt_answers_are_read_by_the_grammar() -> None:
    text = (
        '[Cache.put(ttl=60L, owner="me", keys=new ArrayList<>(Arrays.asList("a", "b")), '
        'm=new HashMap<String, String>() {{ put("k", "v"); }}, xs=new int[]{1, 2})]'
    )
    assert java_calls(text) == [
        {
            "Cache.put": {
                "ttl": "60L",
                "owner": "me",  # a string literal's quotes dropped at the top
                "keys": 'new ArrayList<>(Arrays.asList("a", "b"))',
                "m": "new HashMap<String,String>()",  # its class body dropped, as BFCL's
                "xs": "new int[]{1,2}",
            }
        }
    ]
    assert java_calls("[put(ttl=60L)]") == [{"put": {"ttl": "60L"}}]
    with pytest.raises(NotCalls):
        java_calls("[Cache.put(ttl=1, ttl=2)]")  # an argument given twice
    with pytest.raises(NotCalls):
        java_calls("I would call Cache.put here.")
    assert java_calls("") == {}  # no invocation: no call list


def test_javascript_prompt_answers_are_read_by_the_grammar() -> None:
    assert javascript_calls("[draw(w=2.5, opts={a: 1}, name='x', flag)]") == [
        {"draw": {"w": "2.5", "opts": "{a: 1}", "name": "x", None: "flag"}}
    ]
    assert javascript_calls("```\n[]\n```") == {}
    assert javascript_calls("[draw(w=1), draw(w=2)]") == {}  # a sequence: no call at the top
    with pytest.raises(NotCalls):
        javascript_calls("[draw(w=1), draw(w=2")
