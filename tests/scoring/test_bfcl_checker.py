"""sieval's BFCL checker and Prompt decoder on their own (no oracle needed): BFCL's rules and
quirks, each pinned by a case a wrong implementation would fail (every expected verdict here is
bfcl-eval 2026.3.23's on the same input, checked against it; the parity test compares them
with bfcl-eval's on thousands more)."""

from __future__ import annotations

from typing import Any

import pytest

from sieval.scoring.bfcl_checker import check, grade, made_a_call, standardize
from sieval.scoring.bfcl_decode import NotCalls, hermes_calls, python_calls

AREA = {
    "name": "geo.area",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "float"},
            "unit": {"type": "string"},
            "sides": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "dict", "properties": {}},
        },
        "required": ["base"],
    },
}
ANSWER = [
    {
        "geo.area": {
            "base": [10.0],
            "unit": ["square meters", ""],
            "sides": [[3, 4], ""],
            "opts": [{"fast": [True], "mode": ["a", ""]}, ""],
        }
    }
]


def verdict(call: dict[str, Any], category: str = "simple_python", dotted: bool = False) -> Any:
    v = check([AREA], [call], ANSWER, category, dotted=dotted)
    return v.error_type if not v.valid else "ok"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"base": 10}, "ok"),  # an int is taken for a float
        ({"base": 10.0, "unit": "Square-Meters"}, "ok"),  # case and -_ ignored
        ({"base": 10.0, "unit": "square feet"}, "value_error:string"),
        ({"unit": "square meters"}, "simple_function_checker:missing_required"),
        ({"base": 10.0, "extra": 1}, "simple_function_checker:unexpected_param"),
        ({"base": "10"}, "type_error:simple"),
        ({"base": 10.0, "sides": [3, 4]}, "ok"),
        ({"base": 10.0, "sides": [4, 3]}, "value_error:list/tuple"),  # lists keep their order
        # the optional "" among the possible lists passes the nested type check (BFCL's quirk)
        ({"base": 10.0, "sides": [3, "4"]}, "value_error:list/tuple"),
        ({"base": 10.0, "opts": {"fast": True}}, "ok"),  # mode is optional in the dict
        ({"base": 10.0, "opts": {"fast": False}}, "value_error:dict_value"),
        ({"base": 10.0, "opts": {"mode": "a"}}, "value_error:dict_key"),  # fast is missing
    ],
)
def test_a_call_s_parameters(args: dict[str, Any], expected: str) -> None:
    assert verdict({"geo.area": args}) == expected


def test_names_dots_and_counts() -> None:
    assert verdict({"geo_area": {"base": 10}}, dotted=True) == "ok"
    assert verdict({"geo.area": {"base": 10}}, dotted=True) == (
        "simple_function_checker:wrong_func_name"
    )
    two = [{"geo.area": {"base": 10}}] * 2
    assert check([AREA], two, ANSWER, "simple_python").error_type == (
        "simple_function_checker:wrong_count"
    )
    both = [*ANSWER, {"geo.area": {"base": [2.0]}}]
    calls = [{"geo.area": {"base": 2.0}}, {"geo.area": {"base": 10.0}}]  # any order
    assert check([AREA], calls, both, "parallel").valid
    assert check([AREA], calls[:1], both, "parallel").error_type == (
        "parallel_function_checker_no_order:wrong_count"
    )
    # multiple: the first call against the first answer only
    assert check([AREA], calls, both, "multiple").error_type == "value_error:others"
    assert check([AREA], calls[::-1], both, "multiple").valid


def test_a_variable_is_compared_as_it_is() -> None:
    # possible answers of another type than declared (a variable's name): compared as given
    function = {"name": "f", "parameters": {"properties": {"x": {"type": "integer"}},
                                            "required": ["x"]}}  # fmt: skip
    answer = [{"f": {"x": ["n"]}}]
    assert check([function], [{"f": {"x": "n"}}], answer, "simple_python").valid
    assert not check([function], [{"f": {"x": "N"}}], answer, "simple_python").valid


def test_relevance_and_reading() -> None:
    assert grade("irrelevance", [], None, None).valid
    assert grade("irrelevance", [], None, []).valid
    assert grade("irrelevance", [], None, [{"f": {}}]).error_type == (
        "irrelevance_error:decoder_success"
    )
    assert grade("live_relevance", [], None, [{"f": {}}]).valid
    assert not made_a_call([{}])
    assert grade("simple_python", [AREA], ANSWER, None).error_type == "ast_decoder:decoder_failed"
    assert grade("simple_python", [AREA], ANSWER, ["x"]).error_type == (
        "ast_decoder:decoder_wrong_output_format"
    )
    assert standardize("April 1, 2024's") == 'april12024"s'


def test_python_calls_as_bfcl_reads_them() -> None:
    text = (
        "```\n[geo.area(base=2*5, unit='m', sides=[3, -4], opts={'a': (1, 2)}, n=None, v=x)]\n```"
    )
    assert python_calls(text) == [
        {"geo.area": {"base": 10, "unit": "m", "sides": [3, -4], "opts": {"a": (1, 2)},
                      "n": None, "v": "x"}}
    ]  # fmt: skip
    assert python_calls("f(a=1), g(b=h(c=2))") == [{"f": {"a": 1}}, {"g": {"b": {"h": {"c": 2}}}}]
    assert python_calls("f(1, a=...)") == [{"f": {"a": "..."}}]  # positional arguments dropped
    assert python_calls("[]") == []
    assert python_calls("[f(x=1)") == [{"f": {"x": 1}}]  # the closing bracket is added
    for text in ("I cannot help", "[x]", "f(x=a.b)", "f(x=2**999)"):
        with pytest.raises(NotCalls):
            python_calls(text)


def test_hermes_markup_left_in_text() -> None:
    text = (
        'sure <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call> '
        "<tool_call>x</tool_call>"
    )
    assert hermes_calls(text) == [{"f": {"a": 1}}]
    assert hermes_calls("no calls") == []
