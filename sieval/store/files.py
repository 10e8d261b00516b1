"""A run's files on disk: what an ``OSError`` means to the user, atomic writes, torn tails.

Every read and write of a run file that can fail for a reason outside sieval (a full disk, a
read-only filesystem, no permission, a directory where a file belongs) becomes a
``StorageError`` (``sieval.errors``, a branch of its own): one sentence naming the file and the
fix, never a traceback. ``stopped`` tells a run that was writing samples when it happened
(``sieval eval`` exits 3: what was recorded is kept and ``--resume`` completes the run) from one
that could not start (exit 2).

``write_atomic`` writes a whole file through a hidden temporary beside it (no configured name
can start with a dot, so it never meets a run's own names) and ``os.replace``. ``repair_tail``
is the one repair of an append-only JSON-lines file (``records.jsonl``, ``shared.jsonl``, a
shard's, the wire log): a last line cut by a crash is removed, a complete last line whose
newline was lost gets it, so the next append starts on a line of its own.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import IO

import msgspec

from ..errors import StorageError

__all__ = ["StorageError", "repair_tail", "storage_error", "write_atomic"]

_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def storage_error(exc: OSError, path: Path, *, doing: str, stopped: bool = False) -> StorageError:
    """``exc`` (raised while ``doing`` something to ``path``) as one sentence with the fix."""
    where = str(path)
    code = exc.errno
    if code in _FULL:
        why = f"the disk is full ({exc.strerror}); free some space"
    elif code == errno.EISDIR:
        why = "it is a directory where sieval keeps a file; move it out of the way"
    elif code == errno.ENOTDIR:
        why = "a part of that path is a file, not a directory; move it out of the way"
    elif code == errno.EROFS:
        why = "the filesystem is read-only; choose a writable place (--out) or remount it"
    elif code in (errno.EACCES, errno.EPERM):
        why = "permission denied; make it writable for this user or choose another --out"
    else:
        why = f"{exc.strerror or exc}"
    return StorageError(f"cannot {doing} {where}: {why}", path=where, stopped=stopped)


def write_atomic(path: Path, data: bytes, *, stopped: bool = False) -> None:
    """Write ``data`` as the whole of ``path``, atomically (a reader sees the old file or the
    new one, never a part)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise storage_error(exc, path, doing="write", stopped=stopped) from None


_json = msgspec.json.Decoder()


def repair_tail(path: Path) -> int:
    """Make ``path`` (an append-only JSON-lines file) end with a whole line: a torn last line
    (a crash mid-write) is cut, a complete one missing its newline gets it. Returns the bytes
    cut (0 when none, or when the file does not exist)."""
    try:
        with open(path, "r+b") as file:
            size = file.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            file.seek(size - 1)
            if file.read(1) == b"\n":
                return 0
            start = _last_line_start(file, size)
            file.seek(start)
            tail = file.read()
            try:
                _json.decode(tail)
            except msgspec.DecodeError:
                file.truncate(start)
                return size - start
            file.write(b"\n")
            return 0
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise storage_error(exc, path, doing="repair") from None


def _last_line_start(file: IO[bytes], size: int) -> int:
    """The offset just after the last newline before ``size`` (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        file.seek(start)
        block = file.read(end - start)
        at = block.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0
