"""Writing and reading ``records.jsonl``: append-only, one JSON line per finished sample.

One line per finished sample, written and flushed as the sample finishes, so a crash loses at most
the samples in flight. Lines are flushed to the OS one by one (a killed process loses nothing
written) and ``fsync``'d in batches, at most ``FSYNC_INTERVAL_S`` apart and at close: on this
machine's ext4 a flush costs ~3 us per line and an fsync ~135 us, so fsync per line would cap a
fast run at a few thousand samples a second for protection only against power loss.

Readers decode only what they need: ``read_records`` and ``decode_record`` whole records (what
``compact.py`` stored once put back), ``statuses_at`` a status per planned sample (a resume),
``latest_at`` each planned sample's ``SampleOutcome`` (the report), ``scan`` any ``Struct``.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

import msgspec

from ...errors import ConfigError
from ..files import StorageError, repair_tail, storage_error
from .compact import Shared, columnar, factor, unfactor
from .schema import Record, shared_path

__all__ = [
    "FAILED",
    "FSYNC_INTERVAL_S",
    "NOT_RUN",
    "SCORED",
    "ReadResult",
    "RecordWriter",
    "SampleOutcome",
    "decode_record",
    "first_reported_model",
    "latest_at",
    "read_records",
    "scan",
    "statuses_at",
]

FSYNC_INTERVAL_S = 1.0

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Record)


def decode_record(line: bytes) -> Record:
    """One line of ``records.jsonl`` as a whole ``Record`` (the shared request fields, the stats
    columns and the column-wise channels put back)."""
    return unfactor(_decoder.decode(line))


class RecordWriter:
    """Appends records to one ``records.jsonl`` (and what repeats to ``shared.jsonl``); flushes
    each line, fsyncs in batches. Opening repairs a torn last line of either file (a crash's,
    ``repair_tail``): ``repaired`` holds the bytes cut from ``records.jsonl``. A write that fails
    (a full disk) is a ``StorageError`` with ``stopped``; the writer then writes nothing more."""

    def __init__(self, path: Path, *, fsync_interval_s: float = FSYNC_INTERVAL_S) -> None:
        self.path = path
        self.shared_path = shared_path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, path.parent, doing="create") from None
        self.repaired = repair_tail(path)
        repair_tail(self.shared_path)
        self.shared = Shared.load(self.shared_path)
        self._file: IO[bytes] = self._open(path)
        self._shared_file: IO[bytes] | None = None
        self._interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self._dirty = False
        self._broken = False
        self.written = 0

    @staticmethod
    def _open(path: Path) -> IO[bytes]:
        try:
            return open(path, "ab")
        except OSError as exc:
            raise storage_error(exc, path, doing="write") from None

    def write(self, record: Record) -> None:
        if self._broken:
            raise StorageError(f"{self.path} stopped being written", path=str(self.path))
        new: list[bytes] = []
        requests, common, columns = factor(self.shared.compact_requests(record.requests, new))
        channels, columns_of = columnar(record.channels)
        line = msgspec.structs.replace(
            record,
            requests=requests,
            requests_common=common,
            requests_columns=columns,
            channels=channels,
            channels_columns=columns_of,
        )
        if new:
            if self._shared_file is None:
                self._shared_file = self._open(self.shared_path)
            self._append(self._shared_file, self.shared_path, b"\n".join(new) + b"\n")
        self._append(self._file, self.path, _encoder.encode(line) + b"\n")
        self._dirty = True
        self.written += 1
        if time.monotonic() - self._last_sync >= self._interval:
            self.sync()

    def _append(self, file: IO[bytes], path: Path, data: bytes) -> None:
        try:
            file.write(data)
            file.flush()
        except OSError as exc:
            self._broken = True
            raise storage_error(exc, path, doing="write", stopped=True) from None

    def sync(self) -> None:
        if self._dirty and not self._broken:
            try:
                if self._shared_file is not None:
                    os.fsync(self._shared_file.fileno())
                os.fsync(self._file.fileno())
            except OSError as exc:
                self._broken = True
                raise storage_error(exc, self.path, doing="write", stopped=True) from None
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Sync and close both files; after a failed write, close without writing again (what
        the buffers hold is a torn line at most, which the next open cuts)."""
        try:
            if not self._file.closed:
                self.sync()
        finally:
            for file in (self._file, self._shared_file):
                if file is not None and not file.closed:
                    try:
                        file.close()
                    except OSError:  # the unwritten rest of a line that failed already
                        if not self._broken:
                            raise


# -- reading ------------------------------------------------------------------------------------

T = TypeVar("T")


class ReadResult(msgspec.Struct, kw_only=True):
    records: dict[str, Record]
    """Latest record per sample id (a failed sample re-run on resume has two lines)."""
    lines: int
    truncated_bytes: int = 0
    """Length of an incomplete last line left by a crash (dropped), 0 when none."""


def scan(
    path: Path,
    decoder: msgspec.json.Decoder[T],
    *,
    repair: bool = False,
    stats: list[int] | None = None,
) -> Iterator[T]:
    """Each line of ``records.jsonl`` decoded with ``decoder`` (a Struct declaring only the fields
    a reader needs is much cheaper than a whole ``Record``), in file order, reading the file in
    blocks (memory flat in its size). A torn last line (a crash mid-write) is skipped, and counted
    in ``stats = [lines, truncated_bytes]``; with ``repair`` it is cut from the file first
    (``repair_tail``). A corrupt line elsewhere is a ``ConfigError`` naming it."""
    if not path.exists():
        return
    cut = repair_tail(path) if repair else 0
    number = 0
    pending = b""
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise storage_error(exc, path, doing="read") from None
    with file:
        while True:
            block = file.read(1 << 20)
            if not block:
                break
            data = pending + block
            lines = data.split(b"\n")
            pending = lines.pop()
            for line in lines:
                number += 1
                if not line.strip():
                    continue
                try:
                    yield decoder.decode(line)
                except msgspec.DecodeError as exc:
                    raise ConfigError(
                        f"{path}:{number}: not a valid record ({exc}); the records file was "
                        "edited or corrupted: remove that line (the sample runs again on "
                        "--resume) or start a fresh run",
                        path=str(path),
                    ) from exc
    truncated = cut
    if pending.strip():
        try:
            item = decoder.decode(pending)
        except msgspec.DecodeError:
            truncated = len(pending)
        else:  # a complete record whose newline never made it
            number += 1
            yield item
    if stats is not None:
        stats[:] = [number, truncated]


class _Finishes(msgspec.Struct):
    finish: list[str] = []


class SampleOutcome(msgspec.Struct, kw_only=True):
    """What the report and a resume read of a record: its outcome, not its bodies or channels
    (decoding only these fields is several times cheaper than a whole ``Record``)."""

    sample_id: str
    status: Literal["ok", "failed"]
    group: str | None = None
    metrics: dict[str, float] = {}
    prediction: Any = None
    """The extracted answer (a task with ``keeps_predictions`` votes over them)."""
    error: dict[str, Any] | None = None
    reported_model: str | None = None
    requests: dict[str, _Finishes] = {}
    requests_common: _Finishes = msgspec.field(default_factory=_Finishes)
    """The finish list every request shares, when the record stores it once (version 5)."""
    rerun: dict[str, Any] | None = None
    """A re-run's budget (``Record.rerun``), None for a sample's first run."""

    def finishes(self) -> Iterator[list[str]]:
        """Each request's finish reasons, in request order (``RequestRecord.finish``)."""
        shared = self.requests_common.finish
        for request in self.requests.values():
            yield request.finish or shared


_outcome_decoder = msgspec.json.Decoder(SampleOutcome)


class _Status(msgspec.Struct):
    sample_id: str
    status: str


_status_decoder = msgspec.json.Decoder(_Status)


def read_records(path: Path, *, repair: bool = False) -> ReadResult:
    """Every record of ``records.jsonl`` (the latest per sample id), decoded in full."""
    stats = [0, 0]
    records = {r.sample_id: unfactor(r) for r in scan(path, _decoder, repair=repair, stats=stats)}
    return ReadResult(records=records, lines=stats[0], truncated_bytes=stats[1])


# -- reading by the plan's positions ------------------------------------------------------------
# What a run reads of a unit's records, kept as a few bytes per planned sample (never a dict keyed
# by id): ``position`` maps a sample id to its place in the task's samples (``Samples.position``),
# None for a sample the plan does not hold (its record is skipped).

NOT_RUN, SCORED, FAILED = 0, 1, 2


def statuses_at(
    path: Path,
    position: Callable[[str], int | None],
    size: int,
    *,
    repair: bool = False,
    stats: list[int] | None = None,
) -> bytearray:
    """Each planned sample's latest status: ``NOT_RUN``, ``SCORED`` or ``FAILED`` (what a resume
    needs to know)."""
    status = bytearray(size)
    for outcome in scan(path, _status_decoder, repair=repair, stats=stats):
        at = position(outcome.sample_id)
        if at is not None:
            status[at] = SCORED if outcome.status == "ok" else FAILED
    return status


class _Reported(msgspec.Struct):
    status: str
    reported_model: str | None = None


_reported_decoder = msgspec.json.Decoder(_Reported)


def first_reported_model(paths: Iterable[Path]) -> str | None:
    """The model id the first scored record of these files says the server reported (``None``
    when none has one): what a resumed run's replies must keep naming."""
    for path in paths:
        for record in scan(path, _reported_decoder):
            if record.status == "ok" and record.reported_model:
                return record.reported_model
    return None


def latest_at(
    path: Path, position: Callable[[str], int | None], size: int
) -> Iterator[tuple[int, SampleOutcome]]:
    """``(position, outcome)`` of each planned sample's latest record, in file order, holding one
    at a time: a first pass finds each sample's last line, the second decodes only those (a
    failed sample re-run on resume has two lines)."""
    last = array("I", [0]) * size
    for number, outcome in enumerate(scan(path, _status_decoder), 1):
        at = position(outcome.sample_id)
        if at is not None:
            last[at] = number
    for number, record in enumerate(scan(path, _outcome_decoder), 1):
        at = position(record.sample_id)
        if at is not None and last[at] == number:
            yield at, record
