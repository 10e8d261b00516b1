"""Run untrusted Python (HumanEval and MBPP completions) in a sandbox, one process per program.

Each program runs under bubblewrap (Debian's ``bubblewrap``; https://github.com/containers/
bubblewrap), started as root, which builds for it:

- its own network namespace (only a loopback of its own: nothing on the host is reachable), and
  its own PID, IPC, UTS and (where the kernel allows) cgroup namespaces;
- a root file system of read-only binds only: ``/usr`` (with the ``/bin``, ``/lib``,
  ``/lib64`` links) and the running Python's installation; a fresh ``/proc`` and a minimal
  ``/dev``; nothing else of the host (no ``/etc``, ``/home``, ``/root``, data or repository);
- a throwaway working directory ``/work`` and a ``/tmp``, both size-capped tmpfs that vanish
  with the sandbox; the program is bound read-only at ``/work/program.py``;
- an empty environment (``--clearenv``) but ``PATH``, ``HOME``, ``TMPDIR`` and ``LANG``: the
  parent's variables (keys, tokens) are not there;
- ``--die-with-parent`` and ``--new-session``.

Inside, ``setpriv`` (util-linux) drops to an unprivileged uid of its own (``uid_base + slot``:
one per concurrent program, so process counts are per program) with no capabilities and
``no_new_privs``, then runs ``python -I -B /work/program.py``. Resource limits (``setrlimit``,
inherited): CPU seconds (SIGXCPU, then SIGKILL a second later), address space, file size, open
files, processes for that uid, no core dumps. A wall-clock timeout kills the whole process group
(and with it the PID namespace: every process the program started).

``Sandbox.run`` is a coroutine, bounded by ``concurrency``; each finished program becomes an
``Execution`` whose ``status`` says how it ended. A program that misbehaves is a failed
``Execution`` with its reason, never an exception; ``SandboxUnavailable`` is raised only when
the sandbox itself cannot be built (bubblewrap missing, namespaces refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["Execution", "Limits", "Sandbox", "SandboxUnavailable", "Status"]

Status = Literal[
    "passed", "failed", "timeout", "cpu_limit", "memory_limit", "file_size_limit",
    "process_limit", "killed",
]  # fmt: skip
MIB = 1024 * 1024


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot be built here (raised before or instead of running the program)."""


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """What one program may use. The defaults suit HumanEval / MBPP tests (each well under a
    second of CPU and 100 MiB)."""

    wall_seconds: float = 20.0
    cpu_seconds: int = 10
    memory_mib: int = 1024
    """Address space (RLIMIT_AS), so also what the program can allocate."""
    file_size_mib: int = 16
    """The largest file it may write (RLIMIT_FSIZE)."""
    work_mib: int = 64
    """Size of ``/work`` and of ``/tmp`` (tmpfs each)."""
    processes: int = 32
    """Processes and threads for its uid (RLIMIT_NPROC)."""
    open_files: int = 256
    output_bytes: int = 64 * 1024
    """Bytes of stdout and of stderr kept (the rest is read and dropped)."""


class Execution(msgspec.Struct, frozen=True, kw_only=True):
    status: Status
    passed: bool
    reason: str
    """Why it ended as it did: ``exit code 0``, the last line of its traceback, the limit hit."""
    exit_code: int | None
    """The program's exit code; None when a signal ended it."""
    signal: int | None
    """The signal that ended it, if one did."""
    stdout: str
    stderr: str
    wall_seconds: float


_TRACEBACK_STATUS: tuple[tuple[str, Status], ...] = (
    ("MemoryError", "memory_limit"),
    ("[Errno 27] File too large", "file_size_limit"),
    ("[Errno 11] Resource temporarily unavailable", "process_limit"),
    ("can't start new thread", "process_limit"),
)


def _bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed: apt-get install bubblewrap (scripts/sandbox.sh does it)"
        )
    return found


def _setpriv() -> str:
    found = shutil.which("setpriv")
    if found is None:  # pragma: no cover - util-linux is essential on Debian
        raise SandboxUnavailable("setpriv (util-linux) is not installed")
    return found


class _Bounded:
    """Reads a stream to its end, keeping the first ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = self.limit - len(self.kept)
            self.kept += chunk[: max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        tail = f"\n[… {self.dropped} more bytes dropped]" if self.dropped else ""
        return self.kept.decode("utf-8", "replace") + tail


class Sandbox:
    """Runs programs in bubblewrap, at most ``concurrency`` at a time."""

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        concurrency: int = 2,
        python: str | None = None,
        uid_base: int = 61000,
    ) -> None:
        if os.geteuid() != 0:
            raise SandboxUnavailable(
                "the sandbox drops each program to a uid of its own, which needs root; run as "
                "root (as CI does) or give up code execution"
            )
        self.limits = limits or Limits()
        self.python = str(Path(python or sys.executable).resolve())
        self.prefix = str(Path(sys.base_prefix).resolve()) if python is None else None
        self.bwrap = _bwrap()
        self.setpriv = _setpriv()
        # one queue of free uids per event loop (an asyncio.Queue belongs to the loop it first
        # waited on; tests and run_sync start a loop per call)
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Queue[int]] = (
            weakref.WeakKeyDictionary()
        )
        self.concurrency = concurrency
        self.uid_base = uid_base

    def _command(self, program: Path, uid: int, status_fd: int) -> list[str]:
        limits = self.limits
        binds = ["--ro-bind", "/usr", "/usr"]
        for link in ("bin", "lib", "lib64", "sbin"):
            target = Path("/") / link
            if target.is_symlink():
                binds += ["--symlink", os.readlink(target), f"/{link}"]
            elif target.is_dir():
                binds += ["--ro-bind", str(target), f"/{link}"]
        roots = [self.prefix] if self.prefix else [str(Path(self.python).parents[1])]
        for root in roots:
            if not root.startswith("/usr/"):
                binds += ["--ro-bind", root, root]
        size = str(limits.work_mib * MIB)
        return [
            self.bwrap,
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--json-status-fd", str(status_fd),
            *binds,
            "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
            "--perms", "1777", "--size", size, "--tmpfs", "/work",
            "--ro-bind", str(program), "/work/program.py",
            "--chdir", "/work", "--clearenv",
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/work",
            "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8",
            self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all",
            "--", self.python, "-I", "-B", "/work/program.py",
        ]  # fmt: skip

    def _rlimits(self) -> None:
        """Runs in the child before bwrap: limits every process of the sandbox inherits."""
        limits = self.limits
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mib * MIB,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mib * MIB,) * 2)
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes,) * 2)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    async def run(self, program: str) -> Execution:
        """Run ``program`` (Python source) and report how it ended."""
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Queue()
            for slot in range(self.concurrency):
                slots.put_nowait(self.uid_base + slot)
        uid = await slots.get()
        try:
            return await self._run(program, uid)
        finally:
            slots.put_nowait(uid)

    async def _run(self, program: str, uid: int) -> Execution:
        limits = self.limits
        scratch = Path(tempfile.mkdtemp(prefix="sieval-sandbox-"))
        read_status, write_status = os.pipe()
        try:
            source = scratch / "program.py"
            source.write_text(program)
            source.chmod(0o644)
            scratch.chmod(0o755)
            started = time.monotonic()
            try:
                process = await asyncio.create_subprocess_exec(
                    *self._command(source, uid, write_status),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    pass_fds=(write_status,),
                    start_new_session=True,
                    preexec_fn=self._rlimits,
                )
            finally:
                os.close(write_status)
            out, err = _Bounded(limits.output_bytes), _Bounded(limits.output_bytes)
            assert process.stdout is not None and process.stderr is not None
            readers = asyncio.gather(out.drain(process.stdout), err.drain(process.stderr))
            timed_out = False
            try:
                await asyncio.wait_for(process.wait(), limits.wall_seconds)
            except TimeoutError:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
            await readers
            wall = time.monotonic() - started
            status = _read_status(read_status)
        finally:
            os.close(read_status)
            shutil.rmtree(scratch, ignore_errors=True)
        if "child-pid" not in status and not timed_out:
            raise SandboxUnavailable(f"bubblewrap could not build the sandbox: {err.text()[-500:]}")
        return _execution(status, timed_out, limits, out.text(), err.text(), wall)

    def run_sync(self, program: str) -> Execution:
        """``run`` for callers without an event loop."""
        return asyncio.run(self.run(program))


def _read_status(fd: int) -> dict[str, int]:
    """bubblewrap's JSON status documents (``child-pid`` once the sandbox is up, ``exit-code``
    when the program ends), merged."""
    raw = b""
    while chunk := os.read(fd, 65536):
        raw += chunk
    merged: dict[str, int] = {}
    decoder = json.JSONDecoder()
    text, at = raw.decode(), 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        document, at = decoder.raw_decode(text, at)
        merged.update(document)
    return merged


def _execution(
    status: dict[str, int], timed_out: bool, limits: Limits, stdout: str, stderr: str, wall: float
) -> Execution:
    code = status.get("exit-code")
    # bubblewrap reports a program killed by signal N as exit code 128 + N
    sig = code - 128 if code is not None and code > 128 else None
    exit_code = None if sig is not None or code is None else code
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    kind: Status
    if timed_out:
        kind, reason = "timeout", f"killed after the {limits.wall_seconds:g} s wall-clock limit"
    elif sig in (signal.SIGXCPU, signal.SIGKILL) and wall >= limits.cpu_seconds:
        kind, reason = "cpu_limit", f"killed at the {limits.cpu_seconds} s CPU limit"
    elif sig is not None:
        kind, reason = "killed", f"killed by {signal.Signals(sig).name}"
    elif exit_code == 0:
        kind, reason = "passed", "exit code 0"
    else:
        kind = next((s for marker, s in _TRACEBACK_STATUS if marker in stderr), "failed")
        # forked children's tracebacks interleave, so the last line need not be the error
        marked = (
            line.strip()
            for line in reversed(stderr.splitlines())
            for marker, s in _TRACEBACK_STATUS
            if s == kind and marker in line
        )
        reason = next(marked, None) or last or f"exit code {exit_code}"
    return Execution(
        status=kind, passed=kind == "passed", reason=reason, exit_code=exit_code, signal=sig,
        stdout=stdout, stderr=stderr, wall_seconds=wall,
    )  # fmt: skip
