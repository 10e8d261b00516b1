"""Run inside the bfcl-eval oracle venv (``scripts/bfcl-oracle.sh``), never by sieval: BFCL's own
agentic verdict on model outputs, one JSON object a line on stdin, one a line on stdout.

In: ``{"id", "column": "fc"|"prompt", "result", "possible"}`` where ``result`` is what BFCL's
inference stores for an agentic entry: its one turn's steps, each the step's model response
(FC: the list ``[{name: arguments_json}]`` when the reply called, else its text; Prompt: its
text). Out: ``{"id", "valid", "error_type"}``.

The verdict is bfcl-eval's ``eval_runner._evaluate_single_agentic_entry`` itself (which picks
the last step that does not decode to calls and runs ``agentic_checker`` on it), given a
stand-in handler whose ``decode_execute`` is bfcl-eval's own for the column
(``convert_to_function_call`` for FC, ``default_decode_execute_prompting`` for Prompt). Its
model registry imports every vendor SDK, and its runner module pandas, dotenv and tqdm (for its
score tables, ``.env`` and progress bars, none of which the verdict touches): stand-in modules
take their places.
"""

from __future__ import annotations

import json
import sys
import types
from typing import Any


def _stand_in(name: str, **attributes: Any) -> None:
    module = types.ModuleType(name)
    for key, value in attributes.items():
        setattr(module, key, value)
    sys.modules[name] = module


_stand_in("bfcl_eval.constants.model_config", MODEL_CONFIG_MAPPING={})
_stand_in("pandas")  # the runner's score tables only
_stand_in("dotenv", load_dotenv=lambda *a, **k: None)
_stand_in("tqdm", tqdm=lambda x, *a, **k: x)

from bfcl_eval.eval_checker.eval_runner import _evaluate_single_agentic_entry  # noqa: E402
from bfcl_eval.model_handler.utils import (  # noqa: E402
    convert_to_function_call,
    default_decode_execute_prompting,
)


class _Handler:
    def __init__(self, column: str) -> None:
        self.column = column

    def decode_execute(self, result: Any, has_tool_call_tag: bool) -> Any:
        if self.column == "fc":
            return convert_to_function_call(result)
        return default_decode_execute_prompting(result, has_tool_call_tag)


def verdict(item: dict[str, Any]) -> dict[str, Any]:
    checked = _evaluate_single_agentic_entry(
        _Handler(item["column"]),
        item["id"],
        [item["result"]],
        item["possible"],
        {"question": []},
        "sieval-parity",
        "memory",
    )
    valid = bool(checked["valid"])
    error = None if valid else checked["error"].get("error_type")
    return {"id": item["id"], "valid": valid, "error_type": error}


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(verdict(json.loads(line))) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
