"""BFCL v4's format-sensitivity category: the Prompt column's system prompt in 26 variants
(``bfcl-eval`` 2026.3.23), each over the same 200 non-live and live entries.

A variant is BFCL's config string ``ret_fmt=R&tool_call_tag=T&func_doc_fmt=D&prompt_fmt=P&
style=S``: the 24 combinations of the return format R (``python``, ``json``, ``verbose_xml``,
``concise_xml``), the ``<TOOLCALL>`` tag T (``True``, ``False``) and the functions' format D
(``python``, ``xml``, ``json``), with plaintext and the classic style; then the default with the
markdown layout, then the default with the experimental style (:data:`CONFIGS`, in BFCL's
order). The entries are those ``BFCL_v4_format_sensitivity.json`` names, category by category,
in their files' order; entry k (counting entries times variants) is
``format_sensitivity_k:CONFIG:ID``, graded against its original entry's possible answer by the
checker of the original's category (its id: ``simple_python_58``, ``parallel_3``...), in
Python, its answer read in the variant's return format (``scoring/bfcl_decode_formats.py``).

:func:`system_prompt` writes a variant's prompt: the style's persona, task, call format (with or
without the tag; the XML formats add the parameter types they allow), multi-turn behaviour and
tool list, laid out as plain text or as markdown sections; the functions (hinted, as in the
default) as indented JSON, as XML (``<function name=...>`` with ``<desc>`` and ``<params>``, a
parameter's type ``array[items]``, its enum, default and nested properties) or as Python
docstring-like blocks (``# Function: name`` with ``Args:``, types as Python's).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CONFIGS", "format_entries", "parse_config", "system_prompt"]

_BASE = [
    f"ret_fmt={r}&tool_call_tag={t}&func_doc_fmt={d}&prompt_fmt=plaintext&style=classic"
    for r in ("python", "json", "verbose_xml", "concise_xml")
    for t in ("True", "False")
    for d in ("python", "xml", "json")
]
CONFIGS = (
    *_BASE,
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic",
    "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=experimental",
)
"""The 26 variants, in BFCL's order."""

_KEYS = ("ret_fmt", "tool_call_tag", "func_doc_fmt", "prompt_fmt", "style")
_VALUES = {
    "ret_fmt": ("python", "json", "verbose_xml", "concise_xml"),
    "tool_call_tag": ("True", "False"),
    "func_doc_fmt": ("python", "xml", "json"),
    "prompt_fmt": ("plaintext", "markdown"),
    "style": ("classic", "experimental"),
}


def parse_config(config: str) -> dict[str, Any]:
    """A variant's five settings (``tool_call_tag`` a bool); ``ValueError`` for another text."""
    parts = config.split("&")
    pairs = [p.split("=", 1) for p in parts]
    if [p[0] for p in pairs] != list(_KEYS) or any(
        len(p) != 2 or p[1] not in _VALUES[p[0]] for p in pairs
    ):
        raise ValueError(f"Invalid query format: {config!r}")
    out: dict[str, Any] = dict(pairs)
    out["tool_call_tag"] = out["tool_call_tag"] == "True"
    return out


_CALLS = {
    "python": "[func_name1(params_name1=params_value1, params_name2=params_value2...), "
    "func_name2(params)]",
    "json": '```json\n[{"function":"func_name1","parameters":{"param1":"value1","param2":'
    '"value2"...}},{"function":"func_name2","parameters":{"param":"value"}}]\n```',
    "verbose_xml": '<functions><function name="func_name1"><params><param name="param1" '
    'value="value1" type="type1"/><param name="param2" value="value2" type="type2"/>...'
    '</params></function><function name="func_name2"><params><param name="param3" '
    'value="value3" type="type3"/></params></function></functions>',
    "concise_xml": '<functions><function name="func_name1"><param name="param1" type="type1">'
    'value1</param><param name="param2" type="type2">value2</param>...</function><function '
    'name="func_name2"><param name="param3" type="type3">value</param></function></functions>',
}
_XML_TYPES = (
    "The type fields of the parameters in your function calls must be one of: string, integer, "
    "float, boolean, array, dict, or tuple."
)

_STYLES = {
    "classic": {
        "persona": "You are an expert in composing functions.",
        "task": "You are given a question and a set of possible functions. Based on the "
        "question, you will need to make one or more function/tool calls to achieve the "
        "purpose. If none of the functions can be used, point it out. If the given question "
        "lacks the parameters required by the function, also point it out.",
        "plain": "You should only return the function calls in your response.\n\nIf you decide "
        "to invoke any of the function(s), you MUST put it in the format of {calls}. {types} "
        "You SHOULD NOT include any other text in the response.",
        "tagged": "You should only return the function calls in the <TOOLCALL> section. If you "
        "decide to invoke any of the function(s), you MUST put it in the format of "
        "<TOOLCALL>{calls}</TOOLCALL>. {types} You SHOULD NOT include any other text in the "
        "response.",
        "turns": "At each turn, you should try your best to complete the tasks requested by "
        "the user within the current turn. Continue to output functions to call until you have "
        "fulfilled the user's request to the best of your ability. Once you have no more "
        "functions to call, the system will consider the current turn complete and proceed to "
        "the next turn or task.",
        "tools": "Here is a list of functions in {format} format that you can invoke.\n"
        "{functions}\n",
    },
    "experimental": {
        "persona": "You are an expert in generating structured function calls.",
        "task": "You are given a user query and a set of available functions. Your task is to "
        "produce one or more function/tool calls to fulfill the user's request. If no suitable "
        "function exists, or required parameters are missing, clearly indicate this.",
        "plain": "Respond with only the function calls.\n\nYou MUST format it exactly as "
        "{calls}. {types} Do NOT include any other text.",
        "tagged": "Return only the function calls enclosed in <TOOLCALL> tags.\n\nYou MUST "
        "format it exactly as <TOOLCALL>{calls}</TOOLCALL>. {types} Do NOT include any other "
        "text.",
        "turns": "At every turn, aim to complete the user's tasks within that turn. Continue "
        "emitting function calls until the request is satisfied to the best of your ability. "
        "Once no more calls are needed, the system will proceed to the next turn.",
        "tools": "Below is a list of callable functions in the {format} style:\n{functions}\n",
    },
}


def system_prompt(config: str, functions: Sequence[Mapping[str, Any]]) -> str:
    """The variant ``config``'s system prompt for ``functions`` (already hinted)."""
    settings = parse_config(config)
    style = _STYLES[settings["style"]]
    returned = settings["ret_fmt"]
    types = _XML_TYPES if returned.endswith("_xml") else ""
    calls = style["tagged" if settings["tool_call_tag"] else "plain"].format(
        calls=_CALLS[returned], types=types
    )
    doc_format = settings["func_doc_fmt"]
    tools = style["tools"].format(format=doc_format, functions=_documented(functions, doc_format))
    if settings["prompt_fmt"] == "markdown":
        return (
            f"{style['persona']}\n\n## Task\n{style['task']}\n\n## Tool Call Format\n{calls}\n\n"
            f"## Multi-turn Behavior\n{style['turns']}\n\n## Available Tools\n{tools}"
        )
    return f"{style['persona']}{style['task']}\n\n{calls}\n\n{style['turns']}\n\n{tools}"


def _documented(functions: Sequence[Mapping[str, Any]], doc_format: str) -> str:
    if doc_format == "json":
        return json.dumps(list(functions), indent=4)
    if doc_format == "xml":
        return "\n".join(_xml_function(f) for f in functions)
    return "\n\n".join(part for f in functions for part in (_python_function(f), "\n"))


# -- the functions as XML -------------------------------------------------------------------------


def _xml_param(name: str, meta: Mapping[str, Any], required: Any, level: int) -> str:
    pad = " " * level * 2
    kind = meta.get("type", "string")
    about = meta.get("description", "")
    needed = "true" if required is None or name in required else "false"
    if "enum" in meta:
        about += f" Enum values: {meta['enum']}."
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    attributes = f'name="{name}" type="{kind}" required="{needed}"'
    if "default" in meta:
        attributes += f' default="{meta["default"]!r}"'
    attributes = attributes.replace(",", "")  # BFCL drops every comma of the tag
    out = [f"{pad}<param {attributes}>\n", f"{pad}  <desc>{about}</desc>\n"]
    if "properties" in meta:
        out.append(f"{pad}  <params>\n")
        for child, child_meta in meta["properties"].items():
            out.append(_xml_param(child, child_meta, meta.get("required"), level + 2))
        out.append(f"{pad}  </params>\n")
    out.append(f"{pad}</param>\n")
    return "".join(out)


def _xml_function(function: Mapping[str, Any]) -> str:
    schema = function["parameters"]
    required = schema.get("required")
    params = "".join(
        _xml_param(name, meta, required, 2) for name, meta in schema.get("properties", {}).items()
    )
    return (
        f'<function name="{function["name"]}">\n  <desc>{function.get("description", "")}</desc>\n'
        f"  <params>\n{params}  </params>\n</function>\n"
    )


# -- the functions as Python docstrings -------------------------------------------------------


def _python_type(meta: Mapping[str, Any]) -> str:
    kind = meta.get("type", "string")
    simple = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
    if kind in simple:
        return simple[kind]
    if kind in ("array", "list", "tuple") and "items" in meta:
        return f"list[{_python_type(meta['items'])}]"
    if kind in ("object", "dict"):
        if "additionalProperties" in meta:
            return f"dict[str, {_python_type(meta['additionalProperties'])}]"
        return "dict"
    return str(kind)


def _python_param(name: str, meta: Mapping[str, Any], depth: int) -> Iterator[str]:
    about = meta.get("description", "")
    if "enum" in meta:
        about += f" Enum values: {meta['enum']}."
    default = f", default={meta['default']!r}" if "default" in meta else ""
    yield f"{' ' * (8 + 4 * depth)}{name} ({_python_type(meta)}{default}): {about}\n"
    for child, child_meta in meta.get("properties", {}).items():
        yield from _python_param(child, child_meta, depth + 1)


def _python_function(function: Mapping[str, Any]) -> str:
    lines = [
        f"# Function: {function['name']}\n",
        '    """\n',
        f"    {function.get('description', '')}\n\n",
    ]
    properties = function.get("parameters", {}).get("properties", {})
    if properties:
        lines.append("    Args:\n")
        for name, meta in properties.items():
            lines.extend(_python_param(name, meta, 0))
    lines.append('    """\n')
    return "".join(lines)


# -- the entries ------------------------------------------------------------------------------


def format_entries(data: Path, read: Any) -> Iterator[tuple[dict[str, Any], Any, str, str]]:
    """Each format-sensitivity entry: ``(entry, possible answer, variant, original category)``,
    the entry's id BFCL's (see the module); ``read(data, category)`` yields a category's
    ``(entry, answer)`` pairs."""
    chosen = json.loads((data / "BFCL_v4_format_sensitivity.json").read_text(encoding="utf-8"))
    index = 0
    for category, ids in chosen.items():
        wanted = set(ids)
        for entry, answer in read(data, category):
            if entry["id"] not in wanted:
                continue
            for config in CONFIGS:
                copy = dict(entry)
                copy["id"] = f"format_sensitivity_{index}:{config}:{entry['id']}"
                index += 1
                yield copy, answer, config, category
