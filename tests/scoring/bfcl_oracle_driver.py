"""Run inside the bfcl-eval oracle venv (``scripts/bfcl-oracle.sh``), never by sieval: BFCL's own
verdict on model outputs, one JSON object a line on stdin, one a line on stdout.

In: ``{"id", "category", "column": "fc"|"prompt", "result"}`` where ``result`` is what BFCL's
handler stores: for FC, the list ``[{name: arguments_json_text}]`` when the reply called, else
the reply's text; for Prompt, the reply's text. Out: ``{"id", "valid", "error_type"}``. With
``column`` ``system`` or ``tools``: what BFCL sends for the entry instead (its default system
prompt, or its OpenAI-style tools, for the language-hinted functions), ``{"id", "system"}`` or
``{"id", "tools"}``.

The verdict is bfcl-eval's: its ``ast_checker``, ``is_function_calling_format_output``,
``is_empty_output`` and Prompt decoder (``default_decode_ast_prompting``, in the category's
language: Python, or Java and JavaScript by its tree-sitter parsers), called in the order its
``eval_runner`` calls them for a single-turn entry (decode, a decode failure is
``ast_decoder:decoder_failed``; a decoded value not in call-list form is
``ast_decoder:decoder_wrong_output_format``; then the checker). Its FC handlers' decode (OpenAI's:
``json.loads`` of each call's arguments) is the four lines of ``_fc_decode``, as its
``openai_completion.py`` has them: that module imports the openai SDK, which the oracle venv
does not install. Its model registry imports every vendor SDK, so a stand-in module holds the
two entries this driver names: ``sieval-fc`` (dots sent as underscores, ``underscore_to_dot``)
and ``sieval-prompt``.
"""

from __future__ import annotations

import copy
import json
import sys
import types
from pathlib import Path
from typing import Any


class _Config:
    def __init__(self, underscore_to_dot: bool) -> None:
        self.underscore_to_dot = underscore_to_dot


_registry = types.ModuleType("bfcl_eval.constants.model_config")
_registry.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
    "sieval-fc": _Config(True),
    "sieval-prompt": _Config(False),
}
sys.modules["bfcl_eval.constants.model_config"] = _registry

import bfcl_eval  # noqa: E402
from bfcl_eval.constants.default_prompts import DEFAULT_SYSTEM_PROMPT_FORMAT  # noqa: E402
from bfcl_eval.constants.enums import Language, ModelStyle, ReturnFormat  # noqa: E402
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.model_handler.utils import (  # noqa: E402
    convert_to_tool,
    default_decode_ast_prompting,
    formulate_system_prompt,
    parse_prompt_variation_params,
)
from bfcl_eval.utils import (  # noqa: E402
    _func_doc_language_specific_pre_processing,
    is_empty_output,
    is_function_calling_format_output,
    is_java,
    is_js,
)

DATA = Path(bfcl_eval.__file__).parent / "data"


def _fc_decode(result: Any) -> list[dict[str, Any]]:
    decoded = []
    for invoked in result:
        name = next(iter(invoked))
        decoded.append({name: json.loads(invoked[name])})
    return decoded


def _language(category: str) -> tuple[Language, ReturnFormat]:
    """The category's language as bfcl-eval's ``ast_file_runner`` picks it."""
    if is_java(category):
        return Language.JAVA, ReturnFormat.JAVA
    if is_js(category):
        return Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT
    return Language.PYTHON, ReturnFormat.PYTHON


def _decode(column: str, result: Any, category: str = "simple_python") -> Any:
    if column == "fc":
        return _fc_decode(result)
    return default_decode_ast_prompting(result, _language(category)[1], False)


def _rows(path: Path) -> dict[str, Any]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["id"]] = row
    return out


_entries: dict[str, dict[str, Any]] = {}
_answers: dict[str, dict[str, Any]] = {}


def _entry(category: str, entry_id: str) -> tuple[dict[str, Any], Any]:
    if category not in _entries:
        _entries[category] = _rows(DATA / f"BFCL_v4_{category}.json")
        answers = DATA / "possible_answer" / f"BFCL_v4_{category}.json"
        _answers[category] = _rows(answers) if answers.exists() else {}
    answer = _answers[category].get(entry_id)
    return _entries[category][entry_id], None if answer is None else answer["ground_truth"]


def _format_sensitivity(item: dict[str, Any]) -> dict[str, Any]:
    """A format-sensitivity entry as bfcl-eval's ``format_sensitivity_runner`` grades it (its
    original entry's function and answer, the variant's return format and tag, Python, the
    original id as the checker's category), or (``column: system``) the variant's system
    prompt as its ``formulate_system_prompt`` writes it for the hinted functions."""
    _, variant, original = item["id"].split(":")
    entry, answer = _entry(original.rsplit("_", 1)[0], original)
    if item["column"] == "system":
        hinted = _func_doc_language_specific_pre_processing(
            copy.deepcopy(entry["function"]), original.rsplit("_", 1)[0]
        )
        return {"system": formulate_system_prompt(variant, hinted)}
    returned, tag = parse_prompt_variation_params(variant)[:2]
    try:
        decoded = default_decode_ast_prompting(item["result"], ReturnFormat(returned), tag)
    except Exception:
        return {"valid": False, "error_type": "ast_decoder:decoder_failed"}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    checked = ast_checker(
        entry["function"], decoded, answer, Language.PYTHON, original, "sieval-prompt"
    )
    valid = checked["valid"]
    return {"valid": valid, "error_type": None if valid else checked.get("error_type")}


def verdict(item: dict[str, Any]) -> dict[str, Any]:
    category, column = item["category"], item["column"]
    if category == "format_sensitivity":
        return _format_sensitivity(item)
    entry, answer = _entry(category, item["id"])
    if column in ("system", "tools"):  # what BFCL sends for the entry, not a verdict
        hinted = _func_doc_language_specific_pre_processing(
            copy.deepcopy(entry["function"]), category
        )
        if column == "system":
            return {"system": formulate_system_prompt(DEFAULT_SYSTEM_PROMPT_FORMAT, hinted)}
        tools = convert_to_tool(hinted, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)
        return {"tools": tools}
    if "relevance" in category:  # irrelevance, live_irrelevance, live_relevance
        try:
            decoded = _decode(column, item["result"])
            called = not is_empty_output(decoded)
        except Exception:
            called = False
        valid = not called if "irrelevance" in category else called
        error = None
        if not valid:
            error = (
                "irrelevance_error:decoder_success"
                if "irrelevance" in category
                else "relevance_error:decoder_failed"
            )
        return {"valid": valid, "error_type": error}
    try:
        decoded = _decode(column, item["result"], category)
    except Exception:
        return {"valid": False, "error_type": "ast_decoder:decoder_failed"}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    model = "sieval-fc" if column == "fc" else "sieval-prompt"
    language = _language(category)[0]
    checked = ast_checker(entry["function"], decoded, answer, language, category, model)
    valid = checked["valid"]
    return {"valid": valid, "error_type": None if valid else checked.get("error_type")}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        item = json.loads(line)
        try:
            out = verdict(item)
        except Exception as exc:  # the checker itself raised: reported, compared as such
            out = {"valid": None, "error_type": f"raised {type(exc).__name__}"}
        out["id"] = item["id"]
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
