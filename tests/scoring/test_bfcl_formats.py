"""BFCL's format-sensitivity variants on their own (no oracle needed): the answers read in each
return format, and the system prompts' variants; every expected value here is bfcl-eval
2026.3.23's on the same input (the parity test compares every variant's prompt and thousands of
verdicts with its own)."""

from __future__ import annotations

import pytest

from sieval.scoring.bfcl_decode import NotCalls
from sieval.scoring.bfcl_decode_formats import format_calls
from sieval.tasks._bfcl_formats import CONFIGS, parse_config, system_prompt


def test_answers_are_read_in_each_return_format() -> None:
    assert format_calls("[f(a=1)]", "python", False) == [{"f": {"a": 1}}]
    assert format_calls("<TOOLCALL>f(a=1), g(b='x')</TOOLCALL>", "python", True) == [
        {"f": {"a": 1}},
        {"g": {"b": "x"}},
    ]
    fenced = '```json\n[{"function": "f", "parameters": {"a": [1, 2]}}]\n```'
    assert format_calls(fenced, "json", False) == [{"f": {"a": [1, 2]}}]
    assert format_calls("[not json]", "json", False) == []  # JSON that fails reads as no calls
    verbose = (
        '<functions><function name="f"><params><param name="n" value="3" type="integer"/>'
        '<param name="on" value="TRUE" type="boolean"/><param name="xs" value="[1, 2]" '
        'type="array"/><param name="s" value="hi" type="text"/></params></function></functions>'
    )
    assert format_calls(verbose, "verbose_xml", False) == [
        {"f": {"n": 3, "on": True, "xs": [1, 2], "s": "hi"}}
    ]
    concise = (
        '<functions><function name="f"><param name="x" type="float"> 2.5 </param></function>'
        "</functions>"
    )
    assert format_calls(concise, "concise_xml", False) == [{"f": {"x": 2.5}}]


def test_what_is_no_call_list_in_a_variant() -> None:
    with pytest.raises(NotCalls, match="TOOLCALL"):
        format_calls("[f(a=1)]", "python", True)  # the tag was asked for
    with pytest.raises(NotCalls, match="<functions>"):
        format_calls("[f(a=1)]", "concise_xml", False)
    with pytest.raises(NotCalls):
        format_calls(
            '<functions><function name="f"><param type="integer">x</param></function></functions>',
            "concise_xml",
            False,
        )
    with pytest.raises(NotCalls):
        format_calls('[{"name": "f"}]', "json", False)  # no "function" key


FUNCTIONS = [
    {
        "name": "geo.area",
        "description": "Area.",
        "parameters": {
            "type": "dict",
            "properties": {
                "unit": {"type": "string", "description": "Unit.", "enum": ["m", "km"]},
                "sides": {"type": "array", "items": {"type": "integer"}, "description": "S."},
                "fast": {"type": "boolean", "description": "F.", "default": False},
            },
            "required": ["sides"],
        },
    }
]


def test_the_26_variants_and_their_system_prompts() -> None:
    assert len(CONFIGS) == 26 and len(set(CONFIGS)) == 26
    assert CONFIGS[0] == (
        "ret_fmt=python&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&style=classic"
    )
    with pytest.raises(ValueError):
        parse_config(
            "ret_fmt=yaml&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&style=classic"
        )
    xml = system_prompt(CONFIGS[-4], FUNCTIONS)  # concise_xml, no tag, functions as XML
    assert '<function name="geo.area">\n  <desc>Area.</desc>\n  <params>\n' in xml
    assert '    <param name="sides" type="array[integer]" required="true">\n' in xml
    assert "<desc>Unit. Enum values: ['m', 'km'].</desc>" in xml
    assert '<param name="fast" type="boolean" required="false" default="False">' in xml
    assert "must be one of: string, integer, float, boolean, array, dict, or tuple." in xml
    python = system_prompt(CONFIGS[0], FUNCTIONS)
    assert '# Function: geo.area\n    """\n    Area.\n\n    Args:\n' in python
    assert "        fast (bool, default=False): F.\n" in python
    assert "in the <TOOLCALL> section" in python
    markdown = system_prompt(CONFIGS[24], FUNCTIONS)
    assert markdown.startswith("You are an expert in composing functions.\n\n## Task\n")
    assert system_prompt(CONFIGS[25], FUNCTIONS).startswith(
        "You are an expert in generating structured function calls.You are given a user query"
    )
