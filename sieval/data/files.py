"""What a data path is, and how much of it a loader reads: the limits every reader passes.

A loader reads a whole split into memory, so an oversized file (a 10 GB sparse JSON Lines
file, a 3 GiB member of a zip, a gzip that inflates a thousandfold) would end in a
``MemoryError`` after minutes. Each reader checks first, and refuses with a ``ConfigError``
(exit 2) naming the file, its size, the limit and the setting that raises it:

- ``SIEVAL_DATA_MAX_BYTES`` (default 512 MiB): a file, a zip member, or the text a compressed
  file inflates to;
- ``SIEVAL_DATA_MAX_ROW_BYTES`` (default 64 MiB): one row, a line of a line-based file or an
  element of a JSON array.

The largest file of the stored benchmarks is about 10 MB and the longest row 0.3 MB, so the
defaults leave room for any real split. A value is a number of bytes, or one with a unit:
``2GiB``, ``800MB``, ``64K``.

A path that exists but is no regular file (a named pipe, a socket, a device, a directory) is
said as what it is: reading a pipe would wait for ever, and calling it "not found" sends the
user looking in the wrong place.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Protocol

from ..errors import ConfigError

__all__ = [
    "MAX_BYTES_ENV",
    "MAX_ROW_BYTES_ENV",
    "check_size",
    "max_bytes",
    "max_row_bytes",
    "present",
    "read_capped",
    "row_size",
    "row_too_big",
    "too_big",
]

MAX_BYTES_ENV = "SIEVAL_DATA_MAX_BYTES"
MAX_ROW_BYTES_ENV = "SIEVAL_DATA_MAX_ROW_BYTES"
_DEFAULT_MAX_BYTES = 512 * 2**20
_DEFAULT_MAX_ROW_BYTES = 64 * 2**20

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "kib": 2**10,
    "m": 10**6, "mb": 10**6, "mib": 2**20,
    "g": 10**9, "gb": 10**9, "gib": 2**30,
    "t": 10**12, "tb": 10**12, "tib": 2**40,
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def _limit(env: str, default: int) -> int:
    raw = os.environ.get(env)
    if raw is None or not raw.strip():
        return default
    match = _SIZE.match(raw)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or float(match.group(1)) * unit < 1:
        raise ConfigError(
            f"{env}={raw!r} is not a size; give a number of bytes or one with a unit, e.g. "
            f"{env}=2GiB",
            path=env,
            received=raw,
        )
    return int(float(match.group(1)) * unit)


def max_bytes() -> int:
    """The largest file, zip member or inflated text a loader reads (``SIEVAL_DATA_MAX_BYTES``)."""
    return _limit(MAX_BYTES_ENV, _DEFAULT_MAX_BYTES)


def max_row_bytes() -> int:
    """The largest row a loader decodes (``SIEVAL_DATA_MAX_ROW_BYTES``)."""
    return _limit(MAX_ROW_BYTES_ENV, _DEFAULT_MAX_ROW_BYTES)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit} ({n:,} bytes)"
    return f"{n:,} bytes"


def too_big(where: str, what: str, size: int | None, limit: int, env: str) -> ConfigError:
    """``WHERE: WHAT is SIZE, more than the limit of LIMIT; ...``, naming the setting."""
    said = f"more than {_size(limit)}" if size is None else _size(size)
    return ConfigError(
        f"{where}: {what} is {said}, over the limit of {_size(limit)} ({env}): a loader holds it "
        f"whole in memory, so it is refused; if the file is right, raise the limit: export "
        f"{env}=SIZE (e.g. 4GiB)",
        path=where,
        expected=limit,
        received=size,
    )


def present(path: Path) -> bool:
    """True for a regular file (or a link to one), False when nothing is there (then the hub may
    be tried); a ``ConfigError`` saying what it is when it is something else."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        _check_folders(path)
        return False
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror})", path=str(path)) from exc
    if stat.S_ISREG(mode):
        return True
    raise ConfigError(
        f"{path}: it is {_kind(mode)}, not a regular file, so it is not read (reading a pipe or "
        "a device may never end); put the data file itself there",
        path=str(path),
    )


def _check_folders(path: Path) -> None:
    """A ``ConfigError`` naming the nearest of ``path``'s parents that exists and is no
    directory (a data directory that is a pipe or a file)."""
    for parent in path.parents:
        try:
            mode = parent.stat().st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode):
            raise ConfigError(
                f"{parent}: it is {_kind(mode)}, not a directory, so {path} cannot be read in it; "
                "point --data-dir (or SIEVAL_DATA_DIR) at the directory that holds the datasets",
                path=str(parent),
            )
        return


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


def check_size(path: Path) -> int:
    """``path``'s size, once it is a regular file within ``max_bytes()`` (a ``ConfigError``
    otherwise: ``present``'s, or the one naming the limit)."""
    if not present(path):
        raise ConfigError(f"cannot read {path} (No such file or directory)", path=str(path))
    size = path.stat().st_size
    limit = max_bytes()
    if size > limit:
        raise too_big(str(path), "the file", size, limit, MAX_BYTES_ENV)
    return size


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def read_capped(stream: _Readable, where: str, what: str) -> bytes:
    """All of ``stream`` (an inflating reader: gzip, a zip member) up to ``max_bytes()``; a
    ``ConfigError`` naming ``where`` once it inflates past the limit."""
    limit = max_bytes()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise too_big(where, what, None, limit, MAX_BYTES_ENV)
    return data


def row_size(row: str | bytes, limit: int) -> int | None:
    """The size in bytes (UTF-8) of ``row`` when it is over ``limit``, else None (a text row is
    encoded only when it could be: a character takes at most four bytes)."""
    if isinstance(row, bytes):
        return len(row) if len(row) > limit else None
    if len(row) * 4 <= limit:
        return None
    size = len(row.encode("utf-8", errors="surrogatepass"))
    return size if size > limit else None


def row_too_big(where: str, size: int, limit: int) -> ConfigError:
    """The error for one row over ``max_row_bytes()``."""
    return too_big(where, "the row", size, limit, MAX_ROW_BYTES_ENV)
