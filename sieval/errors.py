"""The one error taxonomy of sieval.

    SievalError                      anything sieval raises on purpose
    ├── ConfigError                  a config, CLI argument or data location is wrong (no I/O)
    │   ├── RunLocked                ... the run is being written by another process
    │   │                                (store/lock.py)
    │   └── Incomplete               ... finalize met planned samples without a record
    │                                    (cluster/finalize.py)
    ├── StorageError                 a run file could not be read or written (a full disk,
    │                                read-only, permissions); ``stopped`` when a run was recording
    ├── Refused                      a request was decided against before any byte was sent
    ├── ServerRejected               the server answered 4xx (other than 429) with its own message
    ├── ContractViolation            a reply was short, inconsistent or malformed
    ├── ExecutorError                BFCL's environment process died or refused a request
    │                                (scoring/bfcl_env.py)
    └── TransportError               connect failure, timeout, 429 or 5xx after the retries
        └── TransportTimeout         ... a timeout (also a builtin TimeoutError)

``sieval`` exits 2 for a ``ConfigError`` (nothing ran, or the run directory cannot be used) and
for a ``StorageError`` before a run records anything, 3 for a ``StorageError`` that stopped a
run (``stopped``: what was recorded is kept, and a resume completes it).

Every error carries structured fields (the dialect, the leaf or JSON path, what was expected and
what was received, the server) so that a record can store them, and its message is one sentence
that names the fix. A sample that fails is recorded with ``error_class`` and the message, never
scored as an answer.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ConfigError",
    "ContractViolation",
    "Refused",
    "ServerRejected",
    "SievalError",
    "StorageError",
    "TransportError",
    "TransportTimeout",
    "did_you_mean",
]


class SievalError(Exception):
    """Root of every error sieval raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        dialect: str | None = None,
        path: str | None = None,
        expected: Any = None,
        received: Any = None,
        server: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.dialect = dialect
        self.path = path
        self.expected = expected
        self.received = received
        self.server = server

    @property
    def error_class(self) -> str:
        """The taxonomy branch recorded per failed sample (e.g. ``"ServerRejected"``)."""
        for cls in type(self).__mro__:
            if cls in _BRANCHES:
                return cls.__name__
        return type(self).__name__

    def to_record(self) -> dict[str, Any]:
        """The error as plain data for a record (messages are already secret-free)."""
        data: dict[str, Any] = {"class": self.error_class, "message": self.message}
        for key in ("dialect", "path", "server"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


class ConfigError(SievalError, ValueError):
    """Raised when a config file, CLI argument or data location cannot be used as given."""


class StorageError(SievalError):
    """Raised when a run file cannot be read or written (a full disk, a read-only filesystem, no
    permission, a directory where a file belongs); the message names the file and the fix."""

    def __init__(self, message: str, *, path: str, stopped: bool = False) -> None:
        super().__init__(message, path=path)
        self.stopped = stopped
        """True when samples were being recorded: the run stopped and can be resumed."""


class Refused(SievalError):
    """Raised before I/O when a request leaf cannot be honoured or the request is invalid."""

    def __init__(self, message: str, *, ledger: tuple[Any, ...] = (), **kw: Any) -> None:
        super().__init__(message, **kw)
        self.ledger = ledger
        """The dialect's decisions up to the refusal (``Decision`` values), for the record."""


class ServerRejected(SievalError):
    """Raised when the server answers a 4xx (not 429); carries the server's own message."""

    def __init__(self, message: str, *, status: int, server_message: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.status = status
        self.server_message = server_message

    def to_record(self) -> dict[str, Any]:
        data = super().to_record()
        data["status"] = self.status
        return data


class ContractViolation(SievalError):
    """Raised when a reply is short, inconsistent or malformed: it is not believed."""


class TransportError(SievalError):
    """Raised when the server could not be reached or kept failing (connect, 429, 5xx)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        cause: str | None = None,
        **kw: Any,
    ):
        super().__init__(message, **kw)
        self.status = status
        self.attempts = attempts
        self.cause = cause
        """What failed, without the fix (a caller that names its own fix says this part)."""

    def to_record(self) -> dict[str, Any]:
        data = super().to_record()
        data["attempts"] = self.attempts
        if self.status is not None:
            data["status"] = self.status
        return data


class TransportTimeout(TransportError, TimeoutError):
    """Raised when a connect or read budget ran out on every attempt."""


_BRANCHES = (ConfigError, StorageError, Refused, ServerRejected, ContractViolation, TransportError)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` for the closest known name, or ``""`` (for "unknown ..." errors)."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""
