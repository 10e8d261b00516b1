"""One writer per run directory: an exclusive ``flock`` held for the whole run.

``sieval eval`` (a fresh run or ``--resume``) and ``sieval finalize`` hold ``RUN/run.lock``
exclusively; a shard holds it shared (shards run side by side) and its own
``RUN/shards/<k>.lock`` exclusively (one process per shard). A second writer is refused at once
with ``RunLocked`` (exit 2), naming the run and the pid of the process that holds it. The kernel
drops a ``flock`` when its process ends, however it ends (SIGKILL included), so a lock is never
left stale: the file stays, but nothing holds it. Works on local filesystems and on NFS (Linux
maps ``flock`` to NFS byte-range locks).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import ConfigError
from .files import storage_error

__all__ = ["LOCK_FILE", "RunLocked", "hold_run", "hold_shard", "shard_lock"]

LOCK_FILE = "run.lock"


class RunLocked(ConfigError):
    """Raised when another process is writing the run directory (or the shard)."""


def shard_lock(run_dir: Path, shard: int) -> Path:
    return run_dir / "shards" / f"{shard}.lock"


@contextlib.contextmanager
def hold_run(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir`` exclusively for the block (a whole run, a resume, a finalize)."""
    fd = _acquire(run_dir / LOCK_FILE, shared=False, refused=lambda: _refusal(run_dir))
    try:
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def hold_shard(run_dir: Path, shard: int) -> Iterator[None]:
    """Hold shard ``shard`` of ``run_dir`` for the block: the run shared, the shard exclusively."""
    run_fd = _acquire(run_dir / LOCK_FILE, shared=True, refused=lambda: _refusal(run_dir))
    try:
        path = shard_lock(run_dir, shard)
        try:
            path.parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, path.parent, doing="create") from None
        fd = _acquire(path, shared=False, refused=lambda: _refusal(run_dir, shard))
        try:
            yield
        finally:
            os.close(fd)
    finally:
        os.close(run_fd)


def _acquire(path: Path, *, shared: bool, refused: Callable[[], RunLocked]) -> int:
    """An open descriptor of ``path`` holding its lock; ``refused()`` builds the error when
    another process holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise storage_error(exc, path, doing="lock") from None
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise refused() from None
    if not shared:  # the holder's pid, for the message a second writer gets
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as exc:
            os.close(fd)
            raise storage_error(exc, path, doing="write") from None
    return fd


def _refusal(run_dir: Path, shard: int | None = None) -> RunLocked:
    if shard is not None:
        pid = _pid(shard_lock(run_dir, shard))
        if pid is None:  # the shard is free: the run is held whole (eval --resume, finalize)
            return _refusal(run_dir)
        return RunLocked(
            f"shard {shard} of {run_dir} is already running (pid {pid}); wait for it to "
            "finish, or stop that process, then rerun this command",
            path="run",
        )
    pid = _holder(run_dir / LOCK_FILE)
    if pid is not None:
        return RunLocked(
            f"{run_dir} is being written by another sieval process (pid {pid}); wait for it "
            "to finish, or stop that process, then rerun this command",
            path="run",
        )
    running = _running_shards(run_dir)
    who = ", ".join(f"shard {k} (pid {p})" for k, p in running) or "another sieval process"
    return RunLocked(
        f"{run_dir} is being written by {who}; wait for it to finish, or stop it, then rerun "
        "this command",
        path="run",
    )


def _holder(path: Path) -> int | None:
    """The pid of the process holding ``path`` exclusively (None when none does). A holder that
    has just taken the lock may not have written its pid yet: an empty file is read again for a
    moment rather than shown without the pid."""
    for _ in range(50):
        if not _held_exclusively(path):
            return None
        pid = _pid(path)
        if pid is not None:
            return pid
        time.sleep(0.01)
    return None


def _held_exclusively(path: Path) -> bool:
    """Whether a process holds ``path`` exclusively (a shared lock cannot be taken beside it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _pid(path: Path) -> int | None:
    """The pid in a held lock file (None when it is not held or holds no pid)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 32).decode(errors="replace").strip()
            return int(text) if text.isdigit() else None
        return None  # nobody holds it: a pid in it is a finished process's
    finally:
        os.close(fd)


def _running_shards(run_dir: Path) -> list[tuple[int, int]]:
    """``(shard, pid)`` of each shard whose lock is held."""
    found = []
    for path in sorted((run_dir / "shards").glob("*.lock")):
        pid = _pid(path)
        if pid is not None and path.stem.isdigit():
            found.append((int(path.stem), pid))
    return sorted(found)
