"""``Sandbox``: starts each program in the chosen mode, bounds it, and reads how it ended.

Per program: a fresh secret (``secrets.token_hex``) and the source go to the wrapper's standard
input; a pipe is its report descriptor; a control group (``cgroup.py``, where one can be made)
holds its tree; stdout and stderr are read to their end, their first and last
``output_bytes / 2`` kept. A wall-clock timeout kills the whole process group (and with it the
PID namespace: every process the program started). ``Sandbox.run`` is a coroutine, bounded by
``concurrency``; a program that misbehaves is an ``Execution`` with its reason, never an
exception; ``SandboxUnavailable`` is raised only when the sandbox itself cannot be built.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from .cgroup import Cgroup, Cgroups, join
from .execution import MIB, Execution, Limits, read_report, verdict
from .modes import (
    ENVIRONMENT,
    Mode,
    SandboxUnavailable,
    bwrap_command,
    choose,
    container_command,
    unsafe_command,
)
from .seccomp import UnsupportedArchitecture, seccomp_filter

__all__ = ["Sandbox"]

REPORT_BYTES = 64 * 1024
AFTER_EXIT_SECONDS = 5.0
"""How long output is still read after the program's process ended (a daemonised child of an
unsafe-mode program may hold the pipes open for ever)."""
_NAMES = itertools.count()


class _Bounded:
    """Reads a stream to its end, keeping its first and last ``limit / 2`` bytes."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.half
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.feed(chunk)

    def raw(self) -> bytes:
        return (
            bytes(self.head + b"\n" + self.tail) if self.dropped else bytes(self.head + self.tail)
        )

    def text(self) -> str:
        middle = f"\n[… {self.dropped} bytes dropped …]\n" if self.dropped else ""
        head = self.head.decode("utf-8", "replace")
        return head + middle + self.tail.decode("utf-8", "replace")


class Sandbox:
    """Runs programs in one mode (``modes.py``), at most ``concurrency`` at a time.

    ``mode="auto"`` picks the strongest that works here; ``allow_unsafe`` lets it fall back to
    ``unsafe`` (no containment), which nothing else selects. ``python``: the interpreter run
    inside (default: the one running sieval, its base installation bound read-only)."""

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        concurrency: int = 2,
        python: str | None = None,
        uid_base: int = 61000,
        mode: str = "auto",
        allow_unsafe: bool = False,
    ) -> None:
        self.limits = limits or Limits()
        self.allow_unsafe = allow_unsafe
        self.mode: Mode = choose(mode, allow_unsafe=allow_unsafe)
        self.python = str(Path(python or sys.executable).resolve())
        self.prefix = (
            str(Path(sys.base_prefix).resolve())
            if python is None
            else str(Path(self.python).parents[1])
        )
        self.concurrency = concurrency
        self.uid_base = uid_base
        self.cgroups = Cgroups.find() if self.mode in ("bwrap-root", "unsafe") else None
        if self.mode == "bwrap-userns":
            self.cgroups = Cgroups.find()  # a delegated v2 subtree (SIEVAL_SANDBOX_CGROUP)
        self.seccomp: bytes | None = None
        if self.mode in ("bwrap-root", "bwrap-userns"):
            try:
                self.seccomp = seccomp_filter()
            except UnsupportedArchitecture as exc:
                raise SandboxUnavailable(str(exc)) from exc
        # one queue of free slots per event loop (an asyncio.Queue belongs to the loop it first
        # waited on; tests and run_sync start a loop per call)
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Queue[int]] = (
            weakref.WeakKeyDictionary()
        )

    # -- what it is ------------------------------------------------------------------------------

    def memory_bound(self) -> str:
        """How the tree's memory is bounded, in words (recorded with the run)."""
        limits = self.limits
        if self.mode in ("podman", "docker"):
            return f"the container's memory limit, {limits.memory_mib} MiB"
        if self.cgroups is not None:
            return f"{self.cgroups.describe()}: {limits.memory_mib} MiB for the process tree"
        if self.mode == "unsafe":
            return f"{limits.memory_mib} MiB of address space per process; processes not capped"
        space, cap = limits.bound(cgroup=False)
        return (
            f"no control group: {cap} processes × {space // MIB} MiB of address space "
            f"= {cap * space // MIB} MiB"
        )

    def describe(self) -> dict[str, Any]:
        """The mode and its limits, as a run records them."""
        return {
            "mode": self.mode,
            "unsafe": self.mode == "unsafe",
            "memory": self.memory_bound(),
            "seccomp": self.seccomp is not None or self.mode in ("podman", "docker"),
            "limits": {
                "wall_seconds": self.limits.wall_seconds,
                "cpu_seconds": self.limits.cpu_seconds,
                "memory_mib": self.limits.memory_mib,
                "processes": self.limits.bound(self._tree_bounded())[1],
                "file_size_mib": self.limits.file_size_mib,
            },
        }

    def check(self) -> None:
        """Run a trivial program; ``SandboxUnavailable`` (with the sandbox's own words) unless
        it passes. Done before a run's first request (on a thread of its own: the caller may be
        inside an event loop)."""
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(self.run_sync, "assert [1, 2][-1] == 2\n").result()
        if not result.passed:
            raise SandboxUnavailable(
                f"the {self.mode} sandbox did not pass a trivial program: {result.status}, "
                f"{result.reason}; {result.stderr.strip()[-300:]}"
            )

    def _tree_bounded(self) -> bool:
        return self.cgroups is not None or self.mode in ("podman", "docker")

    # -- running ---------------------------------------------------------------------------------

    async def run(self, program: str) -> Execution:
        """Run ``program`` (Python source) and report how it ended."""
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Queue()
            for slot in range(self.concurrency):
                slots.put_nowait(slot)
        slot = await slots.get()
        try:
            return await self._run(program, slot)
        finally:
            slots.put_nowait(slot)

    def run_sync(self, program: str) -> Execution:
        """``run`` for callers without an event loop."""
        return asyncio.run(self.run(program))

    def _wrapper_args(self) -> list[str]:
        """The resource limits the wrapper sets on itself before it reads the program (inside
        a user namespace a process count is the namespace's own, so it is set there)."""
        limits = self.limits
        # the unsafe mode caps no process count: the product rule cannot hold, so it is not used
        space, cap = limits.bound(self._tree_bounded() or self.mode == "unsafe")
        rlimits = {
            "cpu": (limits.cpu_seconds, limits.cpu_seconds + 1),
            "as": (space, space),
            "fsize": (limits.file_size_mib * MIB,) * 2,
            "nofile": (limits.open_files,) * 2,
            "core": (0, 0),
        }
        if self.mode in ("bwrap-root", "bwrap-userns"):
            rlimits["nproc"] = (cap, cap)
        return [a for k, (s, h) in rlimits.items() for a in ("--rlimit", f"{k}={s}:{h}")]

    async def _run(self, program: str, slot: int) -> Execution:
        limits = self.limits
        secret = secrets.token_hex(16)
        scratch = Path(tempfile.mkdtemp(prefix="sieval-sandbox-"))
        read_report_fd, write_report = os.pipe()
        read_status, write_status = os.pipe()
        seccomp_fd = -1
        group: Cgroup | None = None
        passed_fds: list[int] = [write_report]
        try:
            if self.seccomp is not None:
                seccomp_fd = os.memfd_create("sieval-seccomp")
                os.write(seccomp_fd, self.seccomp)
                os.lseek(seccomp_fd, 0, os.SEEK_SET)
            command = self._command(scratch, slot, write_status, seccomp_fd, write_report)
            if self.mode in ("bwrap-root", "bwrap-userns"):
                passed_fds += [write_status, seccomp_fd]
            if self.cgroups is not None:
                name = f"sieval-{os.getpid()}-{next(_NAMES)}"
                try:
                    group = self.cgroups.make(name, limits.memory_mib * MIB, limits.processes)
                except OSError as exc:
                    raise SandboxUnavailable(
                        f"could not make a control group under {self.cgroups.memory}: {exc}"
                    ) from exc
            procs = group.procs_files() if group is not None else []
            started = time.monotonic()
            try:
                process = await asyncio.create_subprocess_exec(
                    *command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    pass_fds=passed_fds,
                    start_new_session=True,
                    cwd=scratch,
                    env=_environment(self.mode),
                    preexec_fn=(lambda: join(procs)) if procs else None,
                )
            finally:
                for fd in (write_report, write_status, seccomp_fd):
                    if fd >= 0:
                        os.close(fd)
            out, err = _Bounded(limits.output_bytes), _Bounded(limits.output_bytes)
            report = _Bounded(2 * REPORT_BYTES)
            assert process.stdin and process.stdout and process.stderr
            feeding = asyncio.ensure_future(
                _feed(process.stdin, f"sieval-secret {secret}\n".encode() + program.encode())
            )
            readers = asyncio.gather(
                out.drain(process.stdout),
                err.drain(process.stderr),
                _drain_fd(read_report_fd, report),
            )
            timed_out = False
            try:
                await asyncio.wait_for(process.wait(), limits.wall_seconds)
            except TimeoutError:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
            with contextlib.suppress(ProcessLookupError):  # what an unsafe program left behind
                os.killpg(process.pid, signal.SIGKILL)
            try:
                await asyncio.wait_for(asyncio.shield(readers), AFTER_EXIT_SECONDS)
            except TimeoutError:
                readers.cancel()
            feeding.cancel()
            wall = time.monotonic() - started
            status = _read_status(read_status) if self.mode.startswith("bwrap") else {}
            peak = group.peak_bytes() if group is not None else None
            oom = group.oom_kills() if group is not None else 0
        finally:
            os.close(read_status)
            with contextlib.suppress(OSError):
                os.close(read_report_fd)
            if group is not None:
                group.remove()
            shutil.rmtree(scratch, ignore_errors=True)
        if self.mode.startswith("bwrap"):
            if "child-pid" not in status and not timed_out:
                raise SandboxUnavailable(
                    f"bubblewrap could not build the sandbox: {err.text()[-500:]}"
                )
            code = status.get("exit-code")
        else:
            code = process.returncode
            if code is not None and code < 0:
                code = 128 - code
        # a program killed by signal N ends with 128 + N (bubblewrap's and the shells' way)
        sig = code - 128 if code is not None and code > 128 else None
        exit_code = None if sig is not None or code is None else code
        if self.mode in ("podman", "docker"):  # the report came on stdout, the output on stderr
            report, out = out, _Bounded(0)
        return verdict(
            report=read_report(report.raw(), secret),
            exit_code=exit_code,
            sig=sig,
            timed_out=timed_out,
            oom_kills=oom,
            limits=limits,
            stdout=out.text(),
            stderr=err.text(),
            wall=wall,
            mode=self.mode,
            peak_bytes=peak,
        )

    def _command(
        self, scratch: Path, slot: int, status_fd: int, seccomp_fd: int, report_fd: int
    ) -> list[str]:
        limits = self.limits
        args = self._wrapper_args()
        if self.mode in ("bwrap-root", "bwrap-userns"):
            return bwrap_command(
                self.mode,
                python=self.python,
                prefix=self.prefix,
                work_bytes=limits.work_mib * MIB,
                status_fd=status_fd,
                seccomp_fd=seccomp_fd,
                report_fd=report_fd,
                wrapper_args=args,
                uid=self.uid_base + slot if self.mode == "bwrap-root" else None,
            )
        if self.mode in ("podman", "docker"):
            return container_command(
                self.mode,
                memory_bytes=limits.memory_mib * MIB,
                processes=limits.processes,
                work_bytes=limits.work_mib * MIB,
                wrapper_args=args,
            )
        return unsafe_command(
            python=self.python,
            program=scratch / "program.py",
            report_fd=report_fd,
            wrapper_args=args,
        )


def _environment(mode: Mode) -> dict[str, str] | None:
    """The child's environment: bubblewrap clears it itself (``--clearenv``); a container
    starts from the image's; the unsafe mode's child gets only what a program needs."""
    if mode == "unsafe":
        return {**ENVIRONMENT, "HOME": tempfile.gettempdir(), "TMPDIR": tempfile.gettempdir()}
    if mode in ("podman", "docker"):
        return None  # the runtime's client reads its own settings; --env alone reaches inside
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()


async def _drain_fd(fd: int, into: _Bounded) -> None:
    """Read a pipe's read end to its end (the report descriptor)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader),
        os.fdopen(fd, "rb", buffering=0, closefd=False),
    )
    try:
        await into.drain(reader)
    finally:
        transport.close()


def _read_status(fd: int) -> dict[str, int]:
    """bubblewrap's JSON status documents (``child-pid`` once the sandbox is up, ``exit-code``
    when the program ends), merged."""
    raw = b""
    with contextlib.suppress(BlockingIOError):
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
