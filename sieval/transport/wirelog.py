"""The wire log: one JSON line per attempt, secrets redacted, flushed as written.

Each line holds ``exchange_id`` (shared by all attempts of one ``send``), ``attempt``,
``time``, ``method``, ``url``, ``request_headers``, ``request_body``, ``status`` (``null``
when no reply came), ``reply_headers``, ``reply_body``, ``error`` and ``timings``. Bodies
are stored as JSON when they parse, otherwise as text (SSE streams are text).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import msgspec

from sieval.transport.redaction import redact, redact_headers, redact_json, redact_url

__all__ = ["WireEntry", "WireLog", "body_for_log"]


class WireEntry(msgspec.Struct, kw_only=True):
    """One attempt as the wire log stores it (already redacted)."""

    exchange_id: str
    attempt: int
    time: float
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: Any
    status: int | None
    reply_headers: dict[str, str] | None
    reply_body: Any
    error: str | None
    timings: dict[str, float]


def body_for_log(body: bytes | None, secrets: Iterable[str]) -> Any:
    """``body`` redacted: decoded JSON when it parses, else text, ``None`` when absent."""
    if body is None:
        return None
    try:
        return redact_json(msgspec.json.decode(body), secrets)
    except (msgspec.DecodeError, RecursionError):  # not JSON, or too deep to walk as JSON
        return redact(body.decode("utf-8", errors="replace"), secrets)


class WireLog:
    """Appends exchanges to ``path`` as JSON lines; safe for concurrent writers in a process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._encoder = msgspec.json.Encoder()

    def record(
        self,
        *,
        exchange_id: str,
        attempt: int,
        method: str,
        url: str,
        request_headers: Mapping[str, str],
        request_body: bytes | None,
        secrets: Iterable[str],
        status: int | None = None,
        reply_headers: Mapping[str, str] | None = None,
        reply_body: bytes | None = None,
        error: str | None = None,
        timings: Mapping[str, float] | None = None,
    ) -> None:
        """Redact one attempt and append it as a line."""
        secrets = tuple(secrets)
        entry = WireEntry(
            exchange_id=exchange_id,
            attempt=attempt,
            time=time.time(),
            method=method,
            url=redact_url(url, secrets),
            request_headers=redact_headers(request_headers, secrets),
            request_body=body_for_log(request_body, secrets),
            status=status,
            reply_headers=None if reply_headers is None else redact_headers(reply_headers, secrets),
            reply_body=body_for_log(reply_body, secrets),
            error=None if error is None else redact(error, secrets),
            timings=dict(timings or {}),
        )
        self.write(entry)

    def write(self, entry: WireEntry) -> None:
        """Append ``entry`` as one line and flush it."""
        line = self._encoder.encode(entry) + b"\n"
        with self._lock:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("ab")
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        """Close the file; a later write opens it again."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
