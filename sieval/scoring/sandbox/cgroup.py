"""One control group per program: the memory (and process count) of its whole tree, bounded.

A resource limit (``RLIMIT_AS``) is per process, so a program that forks holds the limit once
per child (5.4 GiB through 6 children under a 1 GiB limit). A control group counts every page
the tree holds (heap, page cache, its tmpfs files) against one limit; past it the kernel's OOM
killer ends a process of the group, read back as ``memory_limit``.

Where one can be made (``Cgroups.find``):

- **cgroup v2** (one ``cgroup2`` mount, ``memory`` enabled for children): a group under the
  directory ``SIEVAL_SANDBOX_CGROUP`` names (a delegated subtree, e.g. from
  ``systemd-run --user -p Delegate=yes``), else, as root, under the hierarchy's root;
  ``memory.max``, ``memory.swap.max = 0``, ``pids.max``;
- **cgroup v1** (a ``memory`` hierarchy, and ``pids`` when mounted), as root: a group under the
  process's own memory group; ``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes``
  (no swap beyond it), ``pids.max``.

Nowhere (no hierarchy, or not writable: an ordinary user without delegation) the sandbox falls
back to sizing the resource limits so their product fits (``Limits`` in ``execution.py``).
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cgroup", "Cgroups"]

MOUNTS = Path("/proc/self/mountinfo")
OWN = Path("/proc/self/cgroup")


@dataclass(frozen=True)
class Cgroups:
    """Where program groups are made, and which cgroup version's files they have."""

    version: int
    memory: Path
    """The parent directory of each program's memory group."""
    pids: Path | None
    """The parent of each program's pids group (v1: its own hierarchy; v2: ``memory``)."""

    @classmethod
    def find(cls) -> Cgroups | None:
        """The place this process can make program groups in, or None."""
        override = os.environ.get("SIEVAL_SANDBOX_CGROUP")
        mounts = _mounts()
        if override:
            path = Path(override)
            return cls(2, path, path) if _usable_v2(path) else None
        if "cgroup2" in mounts and os.geteuid() == 0:
            root = mounts["cgroup2"]
            if _usable_v2(root):
                return cls(2, root, root)
        if "memory" in mounts and os.geteuid() == 0:
            memory = mounts["memory"] / _own("memory").lstrip("/")
            pids = mounts["pids"] / _own("pids").lstrip("/") if "pids" in mounts else None
            if os.access(memory, os.W_OK):
                return cls(1, memory, pids if pids and os.access(pids, os.W_OK) else None)
        return None

    def describe(self) -> str:
        return f"a cgroup v{self.version}" + (" (memory, pids)" if self.pids else " (memory)")

    def make(self, name: str, memory_bytes: int, processes: int) -> Cgroup:
        """A fresh group ``name`` with its limits set (raises ``OSError`` when it cannot)."""
        memory = self.memory / name
        memory.mkdir()
        dirs = [memory]
        try:
            if self.version == 2:
                _write(memory / "memory.max", memory_bytes)
                with contextlib.suppress(OSError):  # absent without swap accounting
                    _write(memory / "memory.swap.max", 0)
                with contextlib.suppress(OSError):
                    _write(memory / "pids.max", processes)
            else:
                _write(memory / "memory.limit_in_bytes", memory_bytes)
                with contextlib.suppress(OSError):
                    _write(memory / "memory.memsw.limit_in_bytes", memory_bytes)
                if self.pids is not None:
                    pids = self.pids / name
                    pids.mkdir()
                    dirs.append(pids)
                    _write(pids / "pids.max", processes)
        except OSError:
            Cgroup(self.version, tuple(dirs)).remove()
            raise
        return Cgroup(self.version, tuple(dirs))


@dataclass(frozen=True)
class Cgroup:
    """One program's group (a directory per hierarchy)."""

    version: int
    dirs: tuple[Path, ...]

    def procs_files(self) -> list[str]:
        """The files a process writes ``0`` into to join (before it starts the sandbox)."""
        return [str(d / "cgroup.procs") for d in self.dirs]

    def peak_bytes(self) -> int | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.dirs[0] / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def oom_kills(self) -> int:
        """How many processes of the group the OOM killer ended."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            for line in (self.dirs[0] / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Kill what is left in the group and remove it (its processes die with their PID
        namespace; reaping them takes a moment)."""
        for d in self.dirs:
            for _ in range(100):
                with contextlib.suppress(OSError):
                    for pid in (d / "cgroup.procs").read_text().split():
                        with contextlib.suppress(OSError):
                            os.kill(int(pid), 9)
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def join(files: list[str]) -> None:
    """Move the calling process into a group (in the child, before it starts bubblewrap)."""
    for name in files:
        fd = os.open(name, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


def _write(path: Path, value: int) -> None:
    path.write_text(str(value))


def _mounts() -> dict[str, Path]:
    """``cgroup2`` and each v1 controller, to where they are mounted."""
    found: dict[str, Path] = {}
    try:
        lines = MOUNTS.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        kind, options = (
            fields[dash + 1],
            fields[dash + 3].split(",") if len(fields) > dash + 3 else [],
        )
        mount = Path(fields[4])
        if kind == "cgroup2":
            found.setdefault("cgroup2", mount)
        elif kind == "cgroup":
            for option in options:
                if option in ("memory", "pids"):
                    found.setdefault(option, mount)
    return found


def _own(controller: str) -> str:
    """This process's group in a v1 controller's hierarchy (``/`` when not listed)."""
    try:
        for line in OWN.read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                return path
    except (OSError, ValueError):
        pass
    return "/"


def _usable_v2(path: Path) -> bool:
    try:
        enabled = (path / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False
    return "memory" in enabled and os.access(path, os.W_OK)
