"""BFCL's multi-turn environments, run for sieval: a script for the bfcl-eval oracle venv's python
(``scripts/bfcl-oracle.sh``), never imported by sieval (``bfcl_env.py`` starts it and talks
to it). It imports the environment classes from the installed ``bfcl-eval`` copy
(``bfcl_eval/eval_checker/multi_turn_eval/func_source_code``); nothing of them is copied here.

One JSON object a line on stdin, one answer a line on stdout (``{"error": ...}`` when the
request itself was wrong):

- ``{"op": "open", "classes": [...], "config": {...}, "long_context": bool}`` → ``{"session"}``:
  one instance of each class, each initialised as bfcl-eval initialises it (``cls()``, then,
  unless the class is stateless, ``_load_scenario(deepcopy(config[cls]), long_context=...)``);
  a method name is bound to the last class (in ``classes`` order) that has it;
- ``{"op": "call", "session", "call": CALL}`` → ``{"result"}``: one call executed by its method
  name with its arguments. ``CALL`` is ``{"name", "args": [VALUE], "kwargs": {name: VALUE}}``,
  a ``VALUE`` is ``{"literal": "<a Python literal>"}`` (read with ``ast.literal_eval``) or
  ``{"call": CALL}`` (a nested call, run first, its return value passed). The result is text as
  bfcl-eval makes it: a string as it is, a dict as JSON (its ``str`` if not serialisable), any
  other value its ``str``; an exception ``Error during execution: <message>``. A name not bound
  is ``name '<name>' is not defined``; the names bfcl-eval refuses (``kill``, ``exit``, ...)
  are refused so;
- ``{"op": "compare", "model", "truth"}`` → ``{"valid", "class", "differences"}``: every public
  attribute (not starting with ``_``) of each ground-truth instance compared with ``!=`` to the
  model's instance of the same class, the classes in order, stopping at the first that differs
  (``differences``: ``{attribute: {"model", "ground_truth"}}`` as ``repr`` text, cut at 2,000
  characters);
- ``{"op": "state", "session"}`` → ``{"state": {class: {attribute: repr}}}`` (cut so too);
- ``{"op": "close", "session"}`` → ``{}``;
- memory (``MemoryAPI_kv``, ``MemoryAPI_rec_sum``: a config's ``model_result_dir`` is read as a
  path, where bfcl-eval keeps the memory snapshots): ``{"op": "memory_prompt", "session",
  "question", "id", "category", "scenario"}`` → ``{"question"}``, the turns as bfcl-eval sends
  them: its answer-format system prompt first unless the id is a prerequisite's
  (``utils.process_agentic_test_case``), then its memory system prompt
  (``model_handler.utils.add_memory_instruction_system_prompt``: the scenario's setting and the
  memory's content now); ``{"op": "flush", "session"}`` → ``{}``,
  the memory saved as bfcl-eval saves it after a prerequisite conversation.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any

_BLOCKED = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
"""Names bfcl-eval refuses to execute (``multi_turn_utils.execute_multi_turn_func_call``)."""


class _Session:
    def __init__(self, classes: list[str], config: dict[str, Any], long_context: bool) -> None:
        from bfcl_eval.constants.executable_backend_config import (
            CLASS_FILE_PATH_MAPPING,
            STATELESS_CLASSES,
        )

        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for name in classes:
            cls = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[name]), name)
            instance = cls()
            if name not in STATELESS_CLASSES:
                given = copy.deepcopy(config.get(name, {}))
                if "model_result_dir" in given:
                    given["model_result_dir"] = Path(given["model_result_dir"])
                instance._load_scenario(given, long_context=long_context)
            self.instances[name] = instance
            for method, bound in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method.startswith("_"):
                    self.methods[method] = bound

    def value(self, value: dict[str, Any]) -> Any:
        if "call" in value:
            return self.invoke(value["call"])
        return ast.literal_eval(value["literal"])

    def invoke(self, call: dict[str, Any]) -> Any:
        name = call["name"]
        method = self.methods.get(name)
        if method is None:
            raise NameError(f"name {name.split('.')[0]!r} is not defined")
        args = [self.value(v) for v in call.get("args", [])]
        kwargs = {k: self.value(v) for k, v in call.get("kwargs", {}).items()}
        return method(*args, **kwargs)

    def run(self, call: dict[str, Any]) -> str:
        name = call["name"]
        shown = name if name in self.methods or "." not in name else name.split(".")[1]
        try:
            if shown in _BLOCKED:
                raise Exception(f"Function call {shown} is not allowed.")
            result = self.invoke(call)
        except Exception as exc:  # the environment's own error, shown to the model as text
            return f"Error during execution: {exc}"
        if type(result) is str:
            return result
        if type(result) is dict:
            try:
                return json.dumps(result)
            except Exception:
                return str(result)
        return str(result)


def _cut(value: Any, limit: int = 2000) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _compare(model: _Session, truth: _Session) -> dict[str, Any]:
    for name, expected in truth.instances.items():
        made = model.instances[name]
        differences = {}
        for attribute in vars(expected):
            if attribute.startswith("_"):
                continue
            mine, theirs = getattr(made, attribute), getattr(expected, attribute)
            if mine != theirs:
                differences[attribute] = {"model": _cut(mine), "ground_truth": _cut(theirs)}
        if differences:
            return {"valid": False, "class": name, "differences": differences}
    return {"valid": True, "class": None, "differences": {}}


def _state(session: _Session) -> dict[str, dict[str, str]]:
    return {
        name: {k: _cut(v) for k, v in vars(instance).items() if not k.startswith("_")}
        for name, instance in session.instances.items()
    }


def main() -> None:
    sessions: dict[str, _Session] = {}
    opened = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            op = request["op"]
            if op == "open":
                opened += 1
                sessions[str(opened)] = _Session(
                    request["classes"], request.get("config", {}), bool(request["long_context"])
                )
                out: dict[str, Any] = {"session": str(opened)}
            elif op == "call":
                out = {"result": sessions[request["session"]].run(request["call"])}
            elif op == "compare":
                out = _compare(sessions[request["model"]], sessions[request["truth"]])
            elif op == "state":
                out = {"state": _state(sessions[request["session"]])}
            elif op == "memory_prompt":
                from bfcl_eval.model_handler.utils import add_memory_instruction_system_prompt
                from bfcl_eval.utils import process_agentic_test_case

                (memory,) = sessions[request["session"]].instances.values()
                entry = {"id": request["id"], "question": request["question"]}
                (entry,) = process_agentic_test_case([entry])
                out = {
                    "question": add_memory_instruction_system_prompt(
                        entry["question"], request["category"], request["scenario"], memory
                    )
                }
            elif op == "flush":
                (memory,) = sessions[request["session"]].instances.values()
                memory._flush_memory_to_local_file()
                out = {}
            elif op == "close":
                sessions.pop(request["session"], None)
                out = {}
            else:
                out = {"error": f"unknown op {op!r}"}
        except Exception as exc:  # a malformed request: said, the process goes on
            out = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
