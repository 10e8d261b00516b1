"""The code sandbox, for real: bubblewrap namespaces, limits and kills, and the canonical solutions.

Each hostile program below is contained and recorded as a failed ``Execution`` with its reason,
never as an exception; correct programs pass: every HumanEval canonical solution (164) and every
MBPP sanitized reference solution (427) through the same sandbox. Needs bubblewrap (installed
by scripts/sandbox.sh, which scripts/test runs) and root, as on CI.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from sweeps import SweepRun, imports

from sieval.scoring.code import extract_code, humaneval_program, mbpp_program
from sieval.scoring.sandbox import Limits, Sandbox, SandboxUnavailable, _execution, _read_status

LIMITS = Limits(wall_seconds=15, cpu_seconds=3, memory_mib=512, processes=16)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(LIMITS, concurrency=2)


@pytest.fixture(scope="module")
def default_sandbox() -> Sandbox:
    """The default limits, which every canonical solution must fit in, but for the wall clock:
    MBPP task 123 takes ~4.5 s of CPU, and a machine shared with other jobs stretches that."""
    return Sandbox(Limits(wall_seconds=120), concurrency=2)


def run(sandbox: Sandbox, program: str):
    return asyncio.run(sandbox.run(program))


def test_a_correct_program_passes_with_its_output(sandbox: Sandbox) -> None:
    result = run(sandbox, "print(sum(range(10)))")
    assert (result.status, result.passed, result.exit_code) == ("passed", True, 0)
    assert result.stdout == "45\n"


def test_a_failed_assertion_is_a_failed_program(sandbox: Sandbox) -> None:
    result = run(sandbox, "assert 1 + 1 == 3, 'arithmetic'")
    assert (result.status, result.passed, result.exit_code) == ("failed", False, 1)
    assert result.reason == "AssertionError: arithmetic"


def test_an_infinite_loop_is_stopped_at_the_cpu_limit() -> None:
    # a wall clock far beyond the CPU limit: on a loaded machine 3 s of CPU can take 15 s of wall
    spinning = Sandbox(Limits(wall_seconds=180, cpu_seconds=2, memory_mib=512), concurrency=1)
    result = run(spinning, "while True:\n    pass")
    assert (result.status, result.passed, result.exit_code) == ("cpu_limit", False, None)
    assert result.signal in (24, 9)  # SIGXCPU, then SIGKILL at the hard limit


def test_a_program_killed_by_a_signal_says_which(sandbox: Sandbox) -> None:
    result = run(sandbox, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)")
    assert (result.status, result.passed, result.signal) == ("killed", False, 15)
    assert result.reason == "killed by SIGTERM" and result.exit_code is None


def test_a_sleeping_program_is_killed_at_the_wall_clock_limit() -> None:
    quick = Sandbox(Limits(wall_seconds=1.5), concurrency=1)
    started = time.monotonic()
    result = run(
        quick, "import subprocess, time\nsubprocess.Popen(['sleep', '300'])\ntime.sleep(300)"
    )
    assert (result.status, result.passed) == ("timeout", False)
    assert time.monotonic() - started < 60
    # the whole tree died with the PID namespace: no process of that uid is left
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _uid(p) == quick.uid_base]
    assert left == []


def _uid(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None


def test_a_fork_bomb_hits_the_process_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, "import os\nwhile True:\n    os.fork()")
    assert (result.status, result.passed) == ("process_limit", False)
    assert "Resource temporarily unavailable" in result.reason


def test_a_memory_bomb_hits_the_memory_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, "hog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))")
    assert (result.status, result.passed, result.reason) == ("memory_limit", False, "MemoryError")


def test_a_huge_file_hits_the_file_size_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, "open('big', 'wb').write(b'x' * (40 * 1024 * 1024))")
    assert (result.status, result.passed) == ("file_size_limit", False)


def test_a_network_call_never_reaches_a_local_server(sandbox: Sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        # the server is real and reachable from outside the sandbox
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        time.sleep(0.5)
        assert len(accepted) == 1
        result = run(
            sandbox, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)"
        )
    finally:
        stop.set()
        thread.join()
        server.close()
    assert len(accepted) == 1  # nothing more arrived from the sandbox
    assert (result.status, result.passed) == ("failed", False)
    assert "ConnectionRefusedError" in result.reason or "unreachable" in result.reason


def test_a_write_outside_its_directory_leaves_the_host_untouched(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("original")
    program = f"open({str(target)!r}, 'w').write('overwritten')\n"
    result = run(sandbox, program)
    assert (result.status, result.passed) == ("failed", False)
    assert "FileNotFoundError" in result.reason or "PermissionError" in result.reason
    escape = run(sandbox, "open('/usr/sieval-escape', 'w').write('x')")
    assert (escape.passed is False and "Errno 30" in escape.reason) or "Permission" in escape.reason
    assert target.read_text() == "original"
    assert not Path("/usr/sieval-escape").exists()


def test_the_parents_secret_environment_is_not_visible(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIEVAL_SANDBOX_SECRET", "sk-do-not-leak")
    result = run(
        sandbox,
        "import os\n"
        "assert 'SIEVAL_SANDBOX_SECRET' not in os.environ, os.environ['SIEVAL_SANDBOX_SECRET']\n"
        "print(sorted(os.environ))",
    )
    assert result.passed, result.stderr
    assert "sk-do-not-leak" not in result.stdout + result.stderr
    reading = run(sandbox, "import os\nprint(os.environ['SIEVAL_SANDBOX_SECRET'])")
    assert (reading.status, reading.passed) == ("failed", False)
    assert reading.reason == "KeyError: 'SIEVAL_SANDBOX_SECRET'"


def test_output_is_capped() -> None:
    small = Sandbox(Limits(output_bytes=100), concurrency=1)
    result = run(small, "print('y' * 100000)")
    assert result.passed and result.stdout.startswith("y" * 100)
    assert "more bytes dropped" in result.stdout and len(result.stdout) < 200


def test_runs_concurrently_within_the_bound(sandbox: Sandbox) -> None:
    async def many() -> list[bool]:
        results = await asyncio.gather(*(sandbox.run(f"print({i})") for i in range(6)))
        return [r.passed and r.stdout == f"{i}\n" for i, r in enumerate(results)]

    assert all(asyncio.run(many()))


def test_unavailable_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        Sandbox()


def test_unavailable_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxUnavailable, match="needs root"):
        Sandbox()


def test_a_sandbox_that_cannot_be_built_raises_rather_than_fails_the_program(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = Sandbox(concurrency=1)
    command = broken._command
    monkeypatch.setattr(
        broken, "_command", lambda *a: [command(*a)[0], "--ro-bind", "/no/such/dir", "/x", "true"]
    )
    with pytest.raises(SandboxUnavailable, match="could not build the sandbox"):
        broken.run_sync("print(1)")


def test_bubblewrap_status_documents_are_merged() -> None:
    read, write = os.pipe()
    os.write(write, b'{ "child-pid": 7 }\n{ "exit-code": 3 }\n')
    os.close(write)
    try:
        assert _read_status(read) == {"child-pid": 7, "exit-code": 3}
    finally:
        os.close(read)


def test_code_extraction_rules() -> None:
    assert (
        extract_code("Here:\n```python\ndef f():\n    return 1\n```\nDone").rule == "fenced_python"
    )
    assert extract_code("```\nx = 1\n```").code == "x = 1\n"
    assert extract_code("```js\nno\n```\n```py\nyes\n```").code == "yes\n"
    assert extract_code("def f(): pass").rule == "raw"


# --- the canonical solutions: every one must pass ---


def _timed(sandbox: Sandbox, programs: list[str]) -> tuple[list[str], float]:
    async def all_of() -> list[str]:
        results = await asyncio.gather(*(sandbox.run(p) for p in programs))
        return [f"{i}: {r.status} {r.reason}" for i, r in enumerate(results) if not r.passed]

    started = time.monotonic()
    failures = asyncio.run(all_of())
    return failures, time.monotonic() - started


@pytest.mark.sweep("humaneval_canonical")
def test_humaneval_canonical_solutions_all_pass(
    default_sandbox: Sandbox, data_dir: Path, sweep: SweepRun
) -> None:
    with gzip.open(data_dir / "humaneval" / "HumanEval.jsonl.gz", "rt") as f:
        every = [json.loads(line) for line in f]
    rows = sweep.select(every, lambda r: imports(r["prompt"] + r["canonical_solution"] + r["test"]))
    programs = [
        humaneval_program(r["prompt"], r["canonical_solution"], r["test"], r["entry_point"])
        for r in rows
    ]
    failures, seconds = _timed(default_sandbox, programs)
    print(f"humaneval: {len(rows) - len(failures)}/{len(rows)} passed in {seconds:.1f} s")
    assert len(every) == 164 and failures == []


def test_humaneval_wrong_solutions_fail(sandbox: Sandbox, data_dir: Path) -> None:
    with gzip.open(data_dir / "humaneval" / "HumanEval.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f][:10]
    programs = [
        humaneval_program(r["prompt"], "    return None\n", r["test"], r["entry_point"])
        for r in rows
    ]
    results = asyncio.run(_gather(sandbox, programs))
    assert [r.status for r in results] == ["failed"] * 10


async def _gather(sandbox: Sandbox, programs: list[str]):
    return await asyncio.gather(*(sandbox.run(p) for p in programs))


@pytest.mark.sweep("mbpp_sanitized")
def test_mbpp_sanitized_reference_solutions_all_pass(
    default_sandbox: Sandbox, data_dir: Path, sweep: SweepRun
) -> None:
    every = json.loads((data_dir / "mbpp" / "sanitized-mbpp.json").read_text())
    rows = sweep.select(every, lambda r: imports(r["code"], *r["test_imports"]))
    programs = [
        mbpp_program(r["code"], r["test_list"], test_imports=r["test_imports"]) for r in rows
    ]
    failures, seconds = _timed(default_sandbox, programs)
    print(f"mbpp sanitized: {len(rows) - len(failures)}/{len(rows)} passed in {seconds:.1f} s")
    assert len(every) == 427 and failures == []


def test_the_reason_is_the_error_line_when_children_tracebacks_interleave() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/work/program.py", line 3, in <module>\n'
        "BlockingIOError: [Errno 11] Resource temporarily unavailable\n"
        "Traceback (most recent call last):\n"
        '  File "/work/program.py", line 3, in <module>\n'
        "    os.fork()\n"
    )
    result = _execution({"exit-code": 1}, False, LIMITS, "", stderr, 0.1)
    assert result.status == "process_limit"
    assert result.reason == "BlockingIOError: [Errno 11] Resource temporarily unavailable"
