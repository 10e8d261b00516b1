"""What HumanEval and MBPP share: the answer's code run against the task's tests in the sandbox
(``scoring/sandbox.py``: bubblewrap, one process a program, no network, limits), one sandbox a
process, built on first use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..scoring.code import extract_code
from ..scoring.sandbox import Execution, Sandbox
from .base import Sample
from .families import Verdict

_SANDBOX: list[Sandbox] = []

Program = Callable[[str, Sample], str]
"""The program run: the answer's code and the sample's tests."""


def sandbox() -> Sandbox:
    if not _SANDBOX:
        _SANDBOX.append(Sandbox(concurrency=2))
    return _SANDBOX[0]


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


def execution_channel(run: Execution) -> dict[str, object]:
    return {"status": run.status, "reason": run.reason, "wall_seconds": round(run.wall_seconds, 3),
            "stderr": run.stderr[-2000:]}  # fmt: skip


def checker(program: Program) -> Callable[[str, Sample], Awaitable[Verdict]]:
    """A checker that runs ``program(code, sample)`` and scores ``pass@1`` = it exited 0."""

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
