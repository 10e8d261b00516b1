"""BFCL's multi-turn environments, reached through a small executor process.

The environments (a file system, a messaging API, a trading bot, ...) are bfcl-eval 2026.3.23's
own classes (``bfcl_eval/eval_checker/multi_turn_eval/func_source_code``). sieval neither copies
them nor installs bfcl-eval (its declared dependencies are very heavy): the classes are
imported by ``bfcl_env_driver.py``, a script sieval runs with the python of the venv
``scripts/bfcl-oracle.sh`` installs bfcl-eval into (``--no-deps``, plus ``mpmath`` for its math
API), found at ``$SIEVAL_BFCL_PYTHON`` or ``~/.cache/sieval/bfcl-oracle-2026.3.23/bin/python``.
One such process serves a whole run; sieval talks to it in JSON lines (the driver's docstring
has the protocol): open a session (one instance of each involved class, initialised from the
entry's ``initial_config``, ``long_context`` as bfcl-eval sets it), execute a call by its method
name and arguments (never an ``eval`` of model text: the values are Python literals, read as
such), compare two sessions' states, close. Requests are answered one at a time (a lock, so that
several threads may share the process); a call is a method call on an object in memory (well
under a millisecond), opening a long-context session tens of milliseconds: the tasks send them
from a worker thread (``asyncio.to_thread``), never holding the event loop.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, SievalError

__all__ = [
    "Call",
    "Environments",
    "ExecutorError",
    "oracle_python",
    "shared",
]

ORACLE_VERSION = "2026.3.23"
DRIVER = Path(__file__).with_name("bfcl_env_driver.py")


class ExecutorError(SievalError):
    """The executor process failed (it died, or refused a request as malformed)."""


@dataclass(frozen=True)
class Call:
    """One function call to execute: a method name, positional and keyword arguments (Python
    values; a value that is itself a :class:`Call` is run first, as bfcl-eval runs a nested
    call in the Prompt column)."""

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    args: Sequence[Any] = ()

    def text(self) -> str:
        """The call as bfcl-eval writes it for execution (``f(a='x', b=1)``)."""
        parts = [_text(v) for v in self.args]
        parts += [f"{k}={_text(v)}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"

    def wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": [_value(v) for v in self.args],
            "kwargs": {str(k): _value(v) for k, v in self.kwargs.items()},
        }


def _text(value: Any) -> str:
    return value.text() if isinstance(value, Call) else repr(value)


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, Call):
        return {"call": value.wire()}
    return {"literal": repr(value)}


def oracle_python() -> Path:
    """The python of the bfcl-eval venv (see the module), or ``ConfigError`` naming the fix."""
    given = os.environ.get("SIEVAL_BFCL_PYTHON")
    cache = Path(os.environ.get("SIEVAL_CACHE", Path.home() / ".cache" / "sieval"))
    path = Path(given) if given else cache / f"bfcl-oracle-{ORACLE_VERSION}" / "bin" / "python"
    if not path.exists():
        raise ConfigError(
            f"bfcl multi-turn: bfcl-eval's python was not found at {path}; run "
            "scripts/bfcl-oracle.sh (it installs bfcl-eval with --no-deps, and mpmath, into "
            "~/.cache/sieval), or set SIEVAL_BFCL_PYTHON"
        )
    return path


class Environments:
    """One executor process and its sessions (see the module)."""

    def __init__(self, python: Path | None = None) -> None:
        self.python = python or oracle_python()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [str(self.python), "-I", str(DRIVER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        return self._process

    def ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """One request, its answer (``ExecutorError`` when the process failed it)."""
        with self._lock:
            process = self._start()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
            except OSError as exc:
                raise ExecutorError(f"the BFCL executor failed: {exc}") from exc
        if not line:
            raise ExecutorError(
                f"the BFCL executor ({self.python} {DRIVER.name}) ended without an answer"
            )
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise ExecutorError(f"the BFCL executor refused {request['op']}: {answer['error']}")
        return answer

    def open(self, classes: Sequence[str], config: Mapping[str, Any], long_context: bool) -> str:
        answer = self.ask(
            {"op": "open", "classes": list(classes), "config": config, "long_context": long_context}
        )
        return str(answer["session"])

    def call(self, session: str, call: Call) -> str:
        return str(self.ask({"op": "call", "session": session, "call": call.wire()})["result"])

    def compare(self, model: str, truth: str) -> dict[str, Any]:
        return self.ask({"op": "compare", "model": model, "truth": truth})

    def state(self, session: str) -> dict[str, Any]:
        found: dict[str, Any] = self.ask({"op": "state", "session": session})["state"]
        return found

    def memory_prompt(
        self, session: str, question: Sequence[Any], entry: str, category: str, scenario: str
    ) -> list[list[dict[str, Any]]]:
        """A memory entry's turns with bfcl-eval's system prompts (the driver's doc)."""
        request = {"session": session, "question": question, "id": entry, "category": category}
        answer = self.ask({"op": "memory_prompt", **request, "scenario": scenario})
        found: list[list[dict[str, Any]]] = answer["question"]
        return found

    def flush(self, session: str) -> None:
        """A memory session's memory saved, as bfcl-eval saves it after a prerequisite."""
        self.ask({"op": "flush", "session": session})

    def close(self, session: str) -> None:
        self.ask({"op": "close", "session": session})

    def stop(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                assert self._process.stdin is not None
                self._process.stdin.close()
                try:
                    self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._process.kill()
            self._process = None


_SHARED: Environments | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> Environments:
    """The process's one executor (started at its first request, stopped at exit)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Environments()
            atexit.register(_SHARED.stop)
        return _SHARED
