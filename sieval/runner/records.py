"""Per-sample records: ``results/<run>/<model>/<task>/records.jsonl``, append-only.

One JSON line per finished sample, written and flushed as the sample finishes, so a crash loses
at most the samples in flight. Lines are flushed to the OS one by one (a killed process loses
nothing written) and ``fsync``'d in batches, at most ``FSYNC_INTERVAL_S`` apart and at close: on
this machine's ext4 a flush costs ~3 us per line and an fsync ~135 us, so fsync per line would
cap a fast run at a few thousand samples a second for protection only against power loss.

Schema evolution (STYLE 13): fields are only ever added, with defaults, at the end; an existing
field's type never changes; ``schema_version`` is bumped when a field is added.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from ..errors import ConfigError

__all__ = [
    "FSYNC_INTERVAL_S",
    "SCHEMA_VERSION",
    "ReadResult",
    "Record",
    "RecordWriter",
    "RequestRecord",
    "read_records",
]

SCHEMA_VERSION = 2
"""Version of the record schema below; enters the run identity."""

FSYNC_INTERVAL_S = 1.0


class RequestRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One named request of a sample, as sent (and answered, when it was)."""

    prompt: Any
    """The input: completion text (or token ids), or the chat messages."""
    body: dict[str, Any] | None = None
    """The wire body sent, secrets redacted (``None`` when refused before lowering finished)."""
    ledger: list[dict[str, str]] = msgspec.field(default_factory=list)
    """The dialect's decision per active leaf: ``{leaf, outcome, path}`` (consumed),
    ``{leaf, outcome, reason}`` (noop, refused) or both (defaulted)."""
    reported_model: str | None = None
    usage: dict[str, int] = msgspec.field(default_factory=dict)
    timings: dict[str, float] = msgspec.field(default_factory=dict)
    warnings: list[str] = msgspec.field(default_factory=list)
    error: dict[str, Any] | None = None
    tokens: dict[str, Any] | None = None
    """With ``--record-tokens``: every input and sampled token as ``[text, logprob, id, top]``."""


class Record(msgspec.Struct, kw_only=True):
    """One finished sample: scored (``status == "ok"``) or failed with its error."""

    schema_version: int
    sample_id: str
    status: Literal["ok", "failed"]
    model: str
    """The model's config label."""
    task: str
    group: str | None = None
    requests: dict[str, RequestRecord] = msgspec.field(default_factory=dict)
    channels: dict[str, Any] = msgspec.field(default_factory=dict)
    """The response channels the score used (``SampleResult.channels``)."""
    prediction: Any = None
    gold: Any = None
    metrics: dict[str, float] = msgspec.field(default_factory=dict)
    """Empty for a failed sample: a failure is never scored as right or wrong."""
    error: dict[str, Any] | None = None
    """``{class, message, ...}`` (``SievalError.to_record()``) for a failed sample."""
    reported_model: str | None = None
    """The model id the server reported (first request that reported one)."""
    started: float = 0.0
    """Unix time the sample started."""
    duration_s: float = 0.0


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Record)


class RecordWriter:
    """Appends records to one ``records.jsonl``; flushes each line, fsyncs in batches."""

    def __init__(self, path: Path, *, fsync_interval_s: float = FSYNC_INTERVAL_S) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(path, "ab")  # noqa: SIM115 - closed in close()
        self._interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self._dirty = False
        self.written = 0

    def write(self, record: Record) -> None:
        self._file.write(_encoder.encode(record) + b"\n")
        self._file.flush()
        self._dirty = True
        self.written += 1
        if time.monotonic() - self._last_sync >= self._interval:
            self.sync()

    def sync(self) -> None:
        if self._dirty:
            os.fsync(self._file.fileno())
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()


class ReadResult(msgspec.Struct, kw_only=True):
    records: dict[str, Record]
    """Latest record per sample id (a failed sample re-run on resume has two lines)."""
    lines: int
    truncated_bytes: int = 0
    """Length of an incomplete last line left by a crash (dropped), 0 when none."""


def read_records(path: Path, *, repair: bool = False) -> ReadResult:
    """Decode ``records.jsonl``. An incomplete last line (a crash mid-write) is dropped and
    counted; with ``repair`` it is also cut from the file so later appends start on a fresh
    line. A corrupt line elsewhere is a ``ConfigError`` naming it."""
    if not path.exists():
        return ReadResult(records={}, lines=0)
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    tail = data[end:]
    records: dict[str, Record] = {}
    lines = data[:end].split(b"\n")[:-1] if end else []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = _decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise ConfigError(
                f"{path}:{number}: not a valid record ({exc}); the records file was edited or "
                "corrupted, start a fresh run",
                path=str(path),
            ) from exc
        records[record.sample_id] = record
    truncated = 0
    if tail:
        try:
            record = _decoder.decode(tail)
        except msgspec.DecodeError:
            truncated = len(tail)
            if repair:
                with open(path, "r+b") as file:
                    file.truncate(end)
        else:  # a complete record whose newline never made it
            records[record.sample_id] = record
            if repair:
                with open(path, "ab") as file:
                    file.write(b"\n")
            lines.append(tail)
    return ReadResult(records=records, lines=len(lines), truncated_bytes=truncated)
