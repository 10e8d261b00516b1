"""Run inside the bfcl-eval oracle venv (``scripts/bfcl-oracle.sh``), never by sieval: BFCL's own
multi-turn verdict on model outputs, one JSON object a line on stdin, one a line on stdout.

In: ``{"id", "category", "column": "fc"|"prompt", "result"}`` where ``result`` is what BFCL's
inference stores for a multi-turn entry: per turn, per step, the step's model response (FC: the
list ``[{name: arguments_json}]`` when the reply called, else its text; Prompt: its text). Out:
``{"id", "valid", "error_type"}``. An item may carry its own ``entry`` (``id``, ``initial_config``,
``involved_classes``) and ``ground_truth`` instead of naming one of the data's.

The verdict is bfcl-eval's: the steps decoded as its ``_evaluate_single_multi_turn_entry``
decodes them (its handlers' ``decode_execute``: ``convert_to_function_call`` for FC,
``default_decode_execute_prompting`` for Prompt; a step that fails to decode or decodes empty is
left out; a result with another number of turns than the ground truth is
``multi_turn:force_terminated``), then its ``multi_turn_checker`` on the entry as its loader
prepares it. Each verdict gets a model name of its own: bfcl-eval keeps the environments'
instances in a module's globals by model name and entry id, so a name used twice would resume
the earlier verdict's instances.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import bfcl_eval
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response
from bfcl_eval.model_handler.utils import (
    convert_to_function_call,
    default_decode_execute_prompting,
)

DATA = Path(bfcl_eval.__file__).parent / "data"


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
        _answers[category] = _rows(DATA / "possible_answer" / f"BFCL_v4_{category}.json")
    return _entries[category][entry_id], _answers[category][entry_id]["ground_truth"]


def _decode(column: str, step: Any) -> list[str]:
    if column == "fc":
        return convert_to_function_call(step)
    return default_decode_execute_prompting(step)


_count = 0


def verdict(item: dict[str, Any]) -> dict[str, Any]:
    global _count
    _count += 1
    category, column = item["category"], item["column"]
    if "entry" in item:  # an entry written for the test (initial_config, involved_classes)
        entry, answer = item["entry"], item["ground_truth"]
    else:
        entry, answer = _entry(category, item["id"])
    result = item["result"]
    if len(result) != len(answer):
        return {"valid": False, "error_type": "multi_turn:force_terminated"}
    decoded_turns = []
    for turn in result:
        decoded = []
        for step in turn:
            try:
                calls = _decode(column, step)
                if is_empty_execute_response(calls):
                    continue
                decoded.append(calls)
            except Exception:
                continue
        decoded_turns.append(decoded)
    name = f"sieval_parity_{_count}"
    try:
        checked = multi_turn_checker(decoded_turns, answer, dict(entry), category, name)
    finally:  # the instances this verdict made, dropped from bfcl-eval's globals
        kept = vars(multi_turn_utils)
        for key in [k for k in kept if k.startswith(name + "_")]:
            del kept[key]
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
            out = {"valid": None, "error_type": f"raised {type(exc).__name__}: {exc}"}
        out["id"] = item["id"]
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
