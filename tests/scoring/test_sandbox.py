"""The code sandbox, for real: namespaces, the seccomp filter, limits and kills, the memory of a
whole process tree, and the canonical solutions.

Each hostile program below is contained and recorded as a failed ``Execution`` with its reason,
never as an exception; correct programs pass. The mode is the one ``auto`` picks for whoever runs
the tests: ``bwrap-root`` as root (CI), ``bwrap-userns`` as an ordinary user — and
``test_sandbox_rootless.py`` runs this file again as an ordinary user when the tests run as root.
Needs bubblewrap (scripts/sandbox.sh installs it).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import platform
import random
import socket
import threading
import time
from pathlib import Path

import pytest
from sweeps import SweepRun, imports

from sieval.scoring.code import extract_code, humaneval_program, mbpp_program
from sieval.scoring.sandbox import Limits, Sandbox, SandboxUnavailable
from sieval.scoring.sandbox.execution import Report, verdict
from sieval.scoring.sandbox.launcher import _Bounded, _read_status
from sieval.scoring.sandbox.modes import choose
from sieval.scoring.sandbox.seccomp import REFUSED, TABLES

LIMITS = Limits(wall_seconds=15, cpu_seconds=3, memory_mib=512, processes=16)
ROOT = os.geteuid() == 0


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


def test_the_mode_is_the_strongest_for_this_user(sandbox: Sandbox) -> None:
    assert sandbox.mode == ("bwrap-root" if ROOT else "bwrap-userns")
    assert run(sandbox, "pass").mode == sandbox.mode


def test_a_correct_program_passes_with_its_output(sandbox: Sandbox) -> None:
    result = run(sandbox, "print(sum(range(10)))")
    assert (result.status, result.passed, result.exit_code) == ("passed", True, 0)
    assert result.stdout == "45\n" and result.reason == "the tests returned"


def test_a_failed_assertion_is_a_failed_program(sandbox: Sandbox) -> None:
    result = run(sandbox, "assert 1 + 1 == 3, 'arithmetic'")
    assert (result.status, result.passed, result.exit_code) == ("failed", False, 1)
    assert result.reason == "AssertionError: arithmetic"
    assert result.stderr.endswith("AssertionError: arithmetic\n")
    assert "wrapper" not in result.stderr  # the traceback is the program's own


@pytest.mark.parametrize(
    ("program", "status", "reason"),
    [
        ("import sys\nsys.exit(0)", "failed", "SystemExit: 0"),
        ("raise SystemExit", "failed", "SystemExit"),
        ("exit()", "failed", "SystemExit: None"),
        ("import os\nos._exit(0)", "exited", "exited with code 0 before its tests returned"),
        (
            "import atexit, os\natexit.register(lambda: os._exit(0))\nassert False",
            "failed",
            "AssertionError",
        ),
    ],
)
def test_exit_code_0_is_not_a_pass(
    sandbox: Sandbox, program: str, status: str, reason: str
) -> None:
    result = run(sandbox, program)
    assert (result.status, result.passed) == (status, False)
    assert result.reason.startswith(reason)


def test_a_large_program_arrives_whole(sandbox: Sandbox) -> None:
    """The program reaches the wrapper on its standard input: 2 MiB, far past a pipe's buffer."""
    text = "x" * (2 * 1024 * 1024)
    big = f"text = {text!r}\nassert len(text) == {len(text)} and text[-1] == 'x'\n"
    assert len(big) > 2 * 1024 * 1024
    result = run(sandbox, big)
    assert (result.status, result.passed) == ("passed", True), result.reason


def test_multiprocessing_works_where_the_tree_is_bounded_by_a_group(sandbox: Sandbox) -> None:
    """A pool needs POSIX semaphores (a tmpfs /dev/shm) and a few processes and threads; without
    a control group the process cap (4, bubblewrap's init among them) is too few for one."""
    pool = (
        "import multiprocessing as m\n"
        "with m.Pool(2) as p:\n"
        "    assert p.map(abs, [-1, -2]) == [1, 2]\n"
    )
    result = run(sandbox, pool)
    if sandbox.cgroups is not None:
        assert (result.status, result.passed) == ("passed", True), result.reason
    else:
        assert result.status == "process_limit", result.reason


def test_a_pass_line_without_the_secret_is_ignored(sandbox: Sandbox) -> None:
    forge = (
        "import os\n"
        "for fd in range(256):\n"
        "    try:\n"
        "        os.write(fd, b'passed ' + b'0' * 32 + b'\\n')\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(0)\n"
    )
    result = run(sandbox, forge)
    assert (result.status, result.passed) == ("exited", False)
    assert "a forged pass report was ignored" in result.reason


def test_an_infinite_loop_is_stopped_at_the_cpu_limit() -> None:
    # a wall clock far beyond the CPU limit: on a loaded machine 3 s of CPU can take 15 s of wall
    spinning = Sandbox(Limits(wall_seconds=180, cpu_seconds=2, memory_mib=512), concurrency=1)
    result = run(spinning, "while True:\n    pass")
    assert (result.status, result.passed, result.exit_code) == ("cpu_limit", False, None)
    assert result.signal in (24, 9)  # SIGXCPU, then SIGKILL at the hard limit


def test_a_program_killed_by_a_signal_says_which(sandbox: Sandbox) -> None:
    result = run(sandbox, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)")
    assert (result.status, result.passed, result.signal) == ("killed", False, 15)
    assert result.reason.startswith("killed by SIGTERM") and result.exit_code is None


def test_a_sleeping_program_is_killed_at_the_wall_clock_limit() -> None:
    quick = Sandbox(Limits(wall_seconds=1.5), concurrency=1)
    marker = f"{random.randint(10**5, 10**6)}.{random.randint(1, 999)}"
    started = time.monotonic()
    result = run(
        quick, f"import subprocess, time\nsubprocess.Popen(['sleep', '{marker}'])\ntime.sleep(300)"
    )
    assert (result.status, result.passed) == ("timeout", False)
    assert time.monotonic() - started < 60
    # the whole tree died with the PID namespace: no `sleep <marker>` is left
    assert _processes_with(marker) == []


def _processes_with(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                found.append(proc.name)
    return found


def test_a_fork_bomb_hits_the_process_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, "import os\nwhile True:\n    os.fork()")
    assert (result.status, result.passed) == ("process_limit", False)
    assert "Resource temporarily unavailable" in result.reason


def test_a_memory_bomb_hits_the_memory_limit(sandbox: Sandbox) -> None:
    result = run(sandbox, "hog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))")
    assert (result.status, result.passed, result.reason) == ("memory_limit", False, "MemoryError")


FORKING_BOMB = """
import os, time
children = []
for i in range({children}):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray({each_mib} * 1024 * 1024)
            for at in range(0, len(block), 4096):
                block[at] = 1  # touch every page: resident, not only reserved
            time.sleep(3)
        finally:
            os._exit(0)
    children.append(pid)
ended = [os.waitpid(pid, 0)[1] for pid in children]
assert ended == [0] * len(children), ended  # a child the OOM killer ended fails the program
"""


def test_a_forking_memory_bomb_is_bounded_as_a_tree() -> None:
    """Six children of 200 MiB each under a 512 MiB limit: per process each fits, together they
    do not. With a control group the tree is held to 512 MiB (the OOM killer ends some child:
    ``memory_limit``; its peak measured); without one the process cap times the address space
    fits 512 MiB (a child cannot be made or cannot allocate)."""
    limits = Limits(wall_seconds=60, cpu_seconds=20, memory_mib=512, processes=16)
    tree = Sandbox(limits, concurrency=1)
    result = run(tree, FORKING_BOMB.format(children=6, each_mib=200))
    assert result.passed is False
    if tree.cgroups is not None:
        assert result.status == "memory_limit", (result.status, result.reason)
        assert result.peak_memory_mib is not None and result.peak_memory_mib <= 512
    else:
        assert result.status in ("process_limit", "memory_limit"), (result.status, result.reason)
        space, cap = limits.bound(cgroup=False)
        assert space * cap <= 512 * 1024 * 1024
    print(f"{tree.memory_bound()}: {result.status}, peak {result.peak_memory_mib} MiB")


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
    assert escape.passed is False
    assert "Errno 30" in escape.reason or "Permission" in escape.reason
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


# --- the kernel's surface: each refused call tried for real ---------------------------------

PROBE = """
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
numbers = json.loads({numbers!r})
CLONE_NEWUSER, SIGCHLD = 0x10000000, 17
pid = os.getpid()
args = {{
    "add_key": (b"user", b"sieval-probe", b"x", 1, -4),
    "request_key": (b"user", b"sieval-probe", None, 0),
    "keyctl": (0, -4, 0), "unshare": (CLONE_NEWUSER,), "setns": (-1, 0),
    "mount": (b"none", b"/tmp", b"tmpfs", 0, None), "umount2": (b"/tmp", 0),
    "pivot_root": (b"/tmp", b"/tmp"), "chroot": (b"/tmp",), "ptrace": (0, 0, 0, 0),
    "process_vm_readv": (pid, 0, 0, 0, 0, 0), "process_vm_writev": (pid, 0, 0, 0, 0, 0),
    "kcmp": (pid, pid, 0, 0, 0), "userfaultfd": (1,), "personality": (0xFFFFFFFF,),
    "open_tree": (-100, b"/", 0),
}}
found = {{}}
for name, nr in numbers.items():
    if name == "clone":
        continue
    ctypes.set_errno(0)
    ret = libc.syscall(nr, *args.get(name, (0, 0, 0, 0, 0, 0)))
    found[name] = "ok" if ret >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
ctypes.set_errno(0)
ret = libc.syscall(numbers["clone"], CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
if ret == 0:
    os._exit(0)
found["clone(CLONE_NEWUSER)"] = "ok" if ret >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
found["seccomp_mode"] = libc.prctl(21, 0, 0, 0, 0)  # PR_GET_SECCOMP: 2 under a filter
print(json.dumps(found))
"""


def _probe(sandbox: Sandbox, names: list[str]) -> dict[str, object]:
    _, table = TABLES[platform.machine()]
    numbers = json.dumps({name: table[name] for name in [*names, "clone3", "clone"]})
    code = PROBE.format(numbers=numbers).replace("\n", "\\n").replace("'", "\\'")
    # a child interpreter, not the program's own: the wrapper's audit hook refuses ctypes, and
    # containment must not rest on it
    program = (
        f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', '{code}'], check=True)\n"
    )
    result = run(sandbox, program)
    assert result.passed, (result.status, result.reason, result.stderr[-2000:])
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def test_every_refused_system_call_is_refused_by_the_kernel(sandbox: Sandbox) -> None:
    found = _probe(sandbox, list(REFUSED))
    assert found.pop("seccomp_mode") == 2
    assert found.pop("clone3") == "ENOSYS"  # so the C library falls back to clone
    assert found == {**{name: "EPERM" for name in REFUSED}, "clone(CLONE_NEWUSER)": "EPERM"}


def test_a_key_written_by_one_program_cannot_be_read_by_the_next(sandbox: Sandbox) -> None:
    writer = _probe(sandbox, ["add_key"])
    reader = _probe(sandbox, ["request_key", "keyctl"])
    assert (writer["add_key"], reader["request_key"], reader["keyctl"]) == ("EPERM",) * 3


def test_no_namespace_can_be_made_inside(sandbox: Sandbox) -> None:
    tries = "\n".join(
        f"r = subprocess.run({cmd!r}, capture_output=True)\nprint({cmd[1]!r}, r.returncode)"
        for cmd in (
            ["unshare", "-U", "true"], ["unshare", "-Urn", "true"], ["unshare", "-m", "true"],
            ["unshare", "-n", "true"], ["unshare", "-p", "-f", "true"],
        )
    )  # fmt: skip
    result = run(sandbox, "import subprocess\n" + tries)
    assert result.passed, result.stderr
    codes = [line.split() for line in result.stdout.splitlines()]
    assert len(codes) == 5 and all(code != "0" for _, code in codes), codes


def test_no_proc_and_no_host_files(sandbox: Sandbox) -> None:
    result = run(
        sandbox,
        "import os\nprint(sorted(os.listdir('/')))\nprint(os.path.exists('/proc/self/mem'))\n"
        "print(os.path.exists('/etc/passwd'), os.path.exists('/root/.ssh'))",
    )
    assert result.passed, result.stderr
    lines = result.stdout.splitlines()
    assert "proc" not in lines[0] and "etc" not in lines[0] and "home" not in lines[0]
    assert lines[1:] == ["False", "False False"]


def test_the_unsafe_modes_wrapper_is_not_dumpable() -> None:
    """Without a sandbox the program shares /proc with its user: the wrapper made itself
    non-dumpable, so its memory (the pass line's secret) cannot be opened, by the program nor by
    any other process of the user."""
    if ROOT:
        pytest.skip("root may open any process's memory; test_sandbox_rootless.py runs this")
    unsafe = Sandbox(LIMITS, concurrency=1, mode="unsafe", allow_unsafe=True)
    result = run(unsafe, "import os\nopen(f'/proc/{os.getpid()}/mem', 'rb')")
    assert (result.status, result.passed) == ("failed", False)
    assert result.reason.startswith("PermissionError"), result.reason


# --- output, concurrency, availability -------------------------------------------------------


def test_output_is_capped_keeping_its_head_and_tail() -> None:
    small = Sandbox(Limits(output_bytes=100), concurrency=1)
    result = run(small, "print('y' * 100000 + 'z' * 50)")
    assert result.passed and result.stdout.startswith("y" * 50)
    assert result.stdout.endswith("z" * 49 + "\n") and "bytes dropped" in result.stdout
    assert len(result.stdout) < 200


def test_a_failed_programs_reason_survives_a_flood_of_stderr(sandbox: Sandbox) -> None:
    """200 KiB written to stderr before the failure (the head alone kept, the traceback was
    lost): the reason comes from the wrapper's report, and the traceback's end is kept."""
    flood = "import sys\nsys.stderr.write('noise\\n' * 40000)\nassert 2 + 2 == 5, 'the real reason'"
    result = run(sandbox, flood)
    assert (result.status, result.reason) == ("failed", "AssertionError: the real reason")
    assert result.stderr.endswith("AssertionError: the real reason\n")
    assert result.stderr.startswith("noise\n") and "bytes dropped" in result.stderr


def test_the_reason_without_a_report_comes_from_the_end_of_stderr() -> None:
    kept = _Bounded(1000)
    kept.feed(b"x" * 100_000)
    kept.feed(b"\nBlockingIOError: [Errno 11] Resource temporarily unavailable\n")
    stderr = kept.text()
    result = verdict(
        report=Report(), exit_code=1, sig=None, timed_out=False, oom_kills=0, limits=LIMITS,
        stdout="", stderr=stderr, wall=0.1,
    )  # fmt: skip
    assert result.status == "process_limit"
    assert result.reason == "BlockingIOError: [Errno 11] Resource temporarily unavailable"


def test_the_reason_is_the_error_line_when_children_tracebacks_interleave() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/work/program.py", line 3, in <module>\n'
        "BlockingIOError: [Errno 11] Resource temporarily unavailable\n"
        "Traceback (most recent call last):\n"
        '  File "/work/program.py", line 3, in <module>\n'
        "    os.fork()\n"
    )
    result = verdict(
        report=Report(), exit_code=1, sig=None, timed_out=False, oom_kills=0, limits=LIMITS,
        stdout="", stderr=stderr, wall=0.1,
    )  # fmt: skip
    assert result.status == "process_limit"
    assert result.reason == "BlockingIOError: [Errno 11] Resource temporarily unavailable"


def test_runs_concurrently_within_the_bound(sandbox: Sandbox) -> None:
    async def many() -> list[bool]:
        results = await asyncio.gather(*(sandbox.run(f"print({i})") for i in range(6)))
        return [r.passed and r.stdout == f"{i}\n" for i, r in enumerate(results)]

    assert all(asyncio.run(many()))


def test_unavailable_names_every_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, no setpriv, no podman, no docker
    with pytest.raises(SandboxUnavailable) as raised:
        Sandbox()
    message = str(raised.value)
    for fix in ("apt-get install bubblewrap", "podman", "--allow-unsafe-code"):
        assert fix in message
    assert choose("auto", allow_unsafe=True) == "unsafe"
    with pytest.raises(SandboxUnavailable, match="--allow-unsafe-code"):
        choose("unsafe", allow_unsafe=False)


def test_a_container_runtime_without_an_engine_is_not_chosen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A ``docker`` client whose ``info`` fails (no engine, as on this machine) is detected, not
    assumed: it is named with its own words and never picked."""
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match="docker info' failed .Cannot connect"):
        choose("docker", allow_unsafe=False)


def test_as_root_the_user_namespace_mode_is_refused() -> None:
    if not ROOT:
        pytest.skip("as an ordinary user it is the mode auto picks")
    with pytest.raises(SandboxUnavailable, match="root uses bwrap-root"):
        choose("bwrap-userns", allow_unsafe=False)


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


# --- the canonical solutions: every one must pass --------------------------------------------


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
