"""A unit's call journal: ``calls.jsonl`` beside ``records.jsonl``, one line per answered call of a
task that is not static, written and flushed as the call is answered.

A conversation, a tool loop or a judged answer is several calls in a row, and ``records.jsonl``
gets its line only when the sample ends. So that a crash loses at most the call in flight, each
answered call is journaled at once: the sample, the call's record key, a hash of the body sent
and the reply as received (its status, its bytes with secrets redacted, its attempts and
timings). On ``--resume`` a sample that has no scored record runs again, and each call whose
body hashes the same as a journaled one is *replayed*: ``Model.replay`` lifts the kept reply
through the same checks a fresh one passes (rule 2), nothing is sent, and the record comes out as
the uninterrupted run's would. A call that differs (the conversation went another way) is sent.

Lines are flushed one by one and ``fsync``'d in batches, as ``records.jsonl`` is
(``io.RecordWriter``); a torn last line (a crash mid-write) is cut on open. The journal is
evidence, not state a reader needs: reports read only the records.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import msgspec

from ..files import repair_tail, storage_error

__all__ = ["JOURNAL_FILE", "CallJournal", "Journaled", "journal_path", "reply_text", "sent_hash"]

JOURNAL_FILE = "calls.jsonl"


class Journaled(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One answered call, as the journal keeps it."""

    sample: str
    key: str
    """The call's key in its sample's record (``turn2``, ``judge:verdict``)."""
    sent: str
    """The sha256 of the body sent (secrets redacted, JSON as the record keeps it)."""
    status: int
    body: str | None = None
    """The reply's bytes as UTF-8 text, secrets redacted."""
    body_base64: str | None = None
    """The reply's bytes when they are not UTF-8 text."""
    attempts: int = 1
    timings: dict[str, float] = {}
    """``started``, ``first_byte_s``, ``total_s``, ``wall_s`` of the exchange."""

    def reply_bytes(self) -> bytes:
        if self.body_base64 is not None:
            return base64.b64decode(self.body_base64)
        return (self.body or "").encode("utf-8")


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Journaled)


def journal_path(records: Path) -> Path:
    """The ``calls.jsonl`` beside a ``records.jsonl``."""
    return records.with_name(JOURNAL_FILE)


def sent_hash(body: dict[str, Any] | None) -> str:
    """The hash a journaled call is matched by: its body as sent (``Call.body``)."""
    return hashlib.sha256(_encoder.encode(body)).hexdigest()


def reply_text(raw: bytes, redact: Callable[[str], str]) -> dict[str, str]:
    """The reply's bytes as a journal line holds them: text (through ``redact``), else base64."""
    try:
        return {"body": redact(raw.decode("utf-8"))}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(raw).decode("ascii")}


class CallJournal:
    """Appends to one ``calls.jsonl``; ``entries`` holds what an earlier session journaled,
    by sample and key (the last line of a key wins)."""

    def __init__(self, path: Path, *, fsync_interval_s: float = 1.0) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, path.parent, doing="create") from None
        repair_tail(path)
        self.entries: dict[str, dict[str, Journaled]] = _read(path)
        self._file: IO[bytes] | None = None
        self._interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self._dirty = False

    def kept(self, sample: str, key: str) -> Journaled | None:
        return self.entries.get(sample, {}).get(key)

    def forget(self, sample: str) -> None:
        """The sample is recorded: its journaled calls are not needed again in this session."""
        self.entries.pop(sample, None)

    def write(self, entry: Journaled) -> None:
        if self._file is None:
            try:
                self._file = open(self.path, "ab")  # noqa: SIM115 - held until close()
            except OSError as exc:
                raise storage_error(exc, self.path, doing="write", stopped=True) from None
        try:
            self._file.write(_encoder.encode(entry) + b"\n")
            self._file.flush()
            self._dirty = True
            if time.monotonic() - self._last_sync >= self._interval:
                self.sync()
        except OSError as exc:
            raise storage_error(exc, self.path, doing="write", stopped=True) from None

    def sync(self) -> None:
        if self._file is not None and self._dirty:
            os.fsync(self._file.fileno())
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._file is None:
            return
        try:
            self.sync()
        except OSError as exc:
            raise storage_error(exc, self.path, doing="write", stopped=True) from None
        finally:
            self._file.close()


def _read(path: Path) -> dict[str, dict[str, Journaled]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise storage_error(exc, path, doing="read") from None
    entries: dict[str, dict[str, Journaled]] = {}
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = _decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # a damaged line: that call is sent again
        entries.setdefault(entry.sample, {})[entry.key] = entry
    return entries
