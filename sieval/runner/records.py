"""Per-sample records: ``results/<run>/<model>/<task>/records.jsonl``, append-only.

One JSON line per finished sample, written and flushed as the sample finishes, so a crash loses
at most the samples in flight. Lines are flushed to the OS one by one (a killed process loses
nothing written) and ``fsync``'d in batches, at most ``FSYNC_INTERVAL_S`` apart and at close: on
this machine's ext4 a flush costs ~3 us per line and an fsync ~135 us, so fsync per line would
cap a fast run at a few thousand samples a second for protection only against power loss.

What repeats is written once. Beside ``records.jsonl``, ``shared.jsonl`` holds, append-only,
each distinct decision ledger and each body template of the unit; a request's record names its
ledger (``"ledger": "L0"``) and keeps only the body fields that differ from its template
(``"body_ref": "B0"``). A long text field that begins like the same field of the template or of
an earlier request of the sample (a k-shot prompt and its choices, which repeat the whole context)
keeps only its tail, and ``body_prefix`` says where the head is: each prompt is stored once.
``expand_requests`` gives back the exact bodies and ledgers; every reader uses it. A shared line
is written and flushed before the first record that names it.

Schema evolution (STYLE 13): fields are only ever added, with defaults, at the end; an existing
field's type never changes (a field that takes a new form gains a union); ``schema_version`` is
bumped when a field is added. Version 3 added ``Record.sample``, ``RequestRecord.body_ref`` and
``status``, ledger ids, and stopped repeating the prompt beside the body; version 4 added
``RequestRecord.body_prefix`` (a prompt is stored once per sample, not once per choice) and
``Record.requests_common`` (the ledger id, body template and status every request of the sample
shares, stored once), and omits fields at their defaults. Version 5 stores a sample's request stats
and channels column-wise: ``requests_common`` also holds ``finish`` when every request ended the
same way; ``Record.requests_columns`` holds each ``usage`` and ``timings`` key every request has,
as ``"usage.input_tokens": [76, 74, ...]`` in request order (one value when all are equal), and
each text field every request's stored body has (``"body.prompt"``: what is left of each prompt),
taken out of the requests; ``Record.channels_columns`` names the channels that are lists of dicts
with the same keys, each written as one dict of lists (``{"logprob_sum": [...], "n_tokens":
[...]}``). Readers take 1 to 5: ``decode_record`` and ``read_records`` put every field back in its
request and channel, so a reader sees the ``Record`` the engine built.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

import msgspec

from ..errors import ConfigError
from .files import StorageError, repair_tail, storage_error
from .paths import segment

__all__ = [
    "FSYNC_INTERVAL_S",
    "SCHEMA_VERSION",
    "Outcome",
    "ReadResult",
    "Record",
    "RecordWriter",
    "RequestRecord",
    "Shared",
    "decode_record",
    "expand",
    "expand_requests",
    "first_reported_model",
    "latest_at",
    "read_records",
    "records_path",
    "scan",
    "statuses_at",
    "wire_log_path",
]

SCHEMA_VERSION = 5
"""Version of the record schema below; enters the run identity."""

FSYNC_INTERVAL_S = 1.0


class RequestRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One named request of a sample, as sent (and answered, when it was)."""

    prompt: Any = None
    """The input, only when no body was built (refused before lowering finished); versions 1-2
    wrote it always."""
    body: dict[str, Any] | None = None
    """The wire body sent, secrets redacted: whole, or (with ``body_ref``) the fields that differ
    from that template. ``expand`` gives the whole body."""
    ledger: list[dict[str, str]] | str = []
    """The dialect's decision per active leaf (``{leaf, outcome, path | reason}``), or the id of a
    ledger in ``shared.jsonl``."""
    reported_model: str | None = None
    """Versions 1-2 only (the record's own ``reported_model`` holds it)."""
    usage: dict[str, int] = {}
    timings: dict[str, float] = {}
    """``total_s`` (the exchange, retries included), ``first_byte_s`` (streamed replies; version
    3 wrote it always), ``attempts`` when > 1."""
    warnings: list[str] = []
    error: dict[str, Any] | None = None
    tokens: dict[str, Any] | None = None
    """With ``--record-tokens``: every input and sampled token as ``[text, logprob, id, top]``."""
    body_ref: str | None = None
    """The body template in ``shared.jsonl`` that ``body`` differs from."""
    status: int | None = None
    """The HTTP status of the last attempt (``None`` when nothing was answered)."""
    finish: list[str] = []
    """Each choice's finish reason, in the server's words (``""`` when it gave none); an empty
    answer (no text, no tool call) is ``"<reason>:empty"``."""
    body_prefix: dict[str, tuple[str, int]] = {}
    """Per top-level text field of ``body`` that holds only its tail: where its head is (``""``
    for the template's same field, else the key of an earlier request of the sample, expanded)
    and how many characters of it."""
    reply: str | None = None
    """A refused reply (``ContractViolation``) as received: its bytes as text, bounded (64 KiB)
    and redacted, to be read again and re-lifted without ``--wire-log``."""


class Record(msgspec.Struct, kw_only=True, omit_defaults=True):
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
    sample: dict[str, Any] | None = None
    """The sample as a reader needs it without the data files (the question or context, the
    choices, the gold label: the task's ``describe``)."""
    requests_common: dict[str, Any] = {}
    """``ledger``, ``body_ref``, ``status`` and (version 5) ``finish`` when every request of the
    sample has the same one (a finish list only when not empty): stored here once, not in each
    request. ``read_records`` puts them back."""
    requests_columns: dict[str, Any] = {}
    """Version 5, samples of 2 or more requests: per ``usage`` and ``timings`` key every request
    has, and per text field every request's ``body`` (as stored: what differs from its template)
    has (while those keys lead each request's dict in the same order, so each dict comes back in
    its own order), ``"usage.<key>"``, ``"timings.<key>"`` or ``"body.<field>"``: the requests'
    values in request order (a list), or one value when they are all equal. Those keys are not in
    the requests (a body left empty is omitted); the others (a key only some requests have, a
    field that is not text) stay there. ``read_records`` puts them back."""
    channels_columns: list[str] = []
    """Version 5: the channels stored column-wise. Each was a list of 2 or more dicts with the
    same keys in the same order and is written as ``{key: [each dict's value, ...]}``; the other
    channels are written as they are. ``read_records`` gives back the list of dicts."""


def records_path(run_dir: Path, model_dir: str, task: str, shard: int | None = None) -> Path:
    """A unit's ``records.jsonl``: ``<model>/<task>/``, or shard k's ``<model>/<task>/shards/<k>/``
    (each shard has its own ``shared.jsonl`` beside it: ledger and body ids are per file)."""
    unit = run_dir / segment(model_dir, key="model") / segment(task, key="task")
    return (unit if shard is None else unit / "shards" / str(shard)) / "records.jsonl"


def wire_log_path(run_dir: Path, model_dir: str, shard: int | None = None) -> Path:
    """A model's wire log (``--wire-log``): ``<model>/wire.jsonl``, or shard k's own
    ``<model>/shards/<k>/wire.jsonl`` (shards never append to one file)."""
    model = run_dir / segment(model_dir, key="model")
    return (model if shard is None else model / "shards" / str(shard)) / "wire.jsonl"


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Record)

_COMMON = ("ledger", "body_ref", "status")
"""Request fields (ids and the status) a record stores once when all its requests agree."""

_COLUMNS = ("usage", "timings", "body")
"""Request dicts whose shared keys a record stores as columns (``requests_columns``): all of
the stats; of the body (as stored: what differs from its template), the text fields."""


def _factor(
    requests: dict[str, RequestRecord],
) -> tuple[dict[str, RequestRecord], dict[str, Any], dict[str, Any]]:
    """``requests`` without what they all share and without their stats columns; the shared
    fields (``requests_common``) and the columns (``requests_columns``)."""
    if len(requests) < 2:
        return requests, {}, {}
    first, *rest = requests.values()
    common: dict[str, Any] = {
        name: getattr(first, name)
        for name in _COMMON
        if getattr(first, name) is not None
        and isinstance(getattr(first, name), str | int)
        and all(getattr(r, name) == getattr(first, name) for r in rest)
    }
    if first.finish and all(r.finish == first.finish for r in rest):
        common["finish"] = first.finish
    columns: dict[str, Any] = {}
    taken: dict[str, list[str]] = {}
    for name in _COLUMNS:
        dicts = [d for r in requests.values() if isinstance(d := getattr(r, name), dict)]
        if len(dicts) < len(requests):
            continue  # a request with no body (refused before lowering)
        keys = taken[name] = _leading_keys(dicts, text_only=name == "body")
        for key in keys:
            values = [d[key] for d in dicts]
            same = all(v == values[0] for v in values)
            columns[f"{name}.{key}"] = values[0] if same else values
    if not common and not columns:
        return requests, {}, {}
    cleared: dict[str, Any] = {"ledger": [], "body_ref": None, "status": None, "finish": []}
    strip = {name: cleared[name] for name in common}
    factored: dict[str, RequestRecord] = {}
    for k, r in requests.items():
        changes = dict(strip)
        for name, keys in taken.items():
            if keys:
                changes[name] = {key: v for key, v in getattr(r, name).items() if key not in keys}
        if changes.get("body") == {}:
            changes["body"] = None  # all in columns (omitted: every request has a body)
        factored[k] = msgspec.structs.replace(r, **changes)
    return factored, common, columns


def _leading_keys(dicts: list[dict[str, Any]], *, text_only: bool = False) -> list[str]:
    """The keys every dict has, in the first dict's order, cut where one of them stops leading
    some dict in that order (so that putting them back first restores each dict's own order);
    with ``text_only``, cut too at the first whose values are not all strings (so that a list is
    always a column, never a value)."""
    shared = [key for key in dicts[0] if all(key in d for d in dicts[1:])]
    if text_only:
        for i, key in enumerate(shared):
            if not all(isinstance(d[key], str) for d in dicts):
                shared = shared[:i]
                break
    for d in dicts:
        for i, key in enumerate(d):
            if i >= len(shared):
                break
            if key != shared[i]:
                shared = shared[:i]
                break
    return shared


def _columnar(channels: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``channels`` with each list of 2 or more dicts of the same keys (in the same order) as one
    dict of lists, and the names of those channels."""
    names: list[str] = []
    out = channels
    for name, value in channels.items():
        if not isinstance(value, list) or len(value) < 2 or not isinstance(value[0], dict):
            continue
        keys = list(value[0])
        if not keys or not all(isinstance(d, dict) and list(d) == keys for d in value[1:]):
            continue  # no keys: the column form would lose how many dicts there were
        if out is channels:
            out = dict(channels)
        out[name] = {key: [d[key] for d in value] for key in keys}
        names.append(name)
    return out, names


def decode_record(line: bytes) -> Record:
    """One line of ``records.jsonl`` as a whole ``Record`` (the shared request fields, the stats
    columns and the column-wise channels put back)."""
    return _unfactor(_decoder.decode(line))


def _unfactor(record: Record) -> Record:
    if not (record.requests_common or record.requests_columns or record.channels_columns):
        return record
    requests = record.requests
    if record.requests_common or record.requests_columns:
        common = record.requests_common
        stats: dict[str, dict[str, Any]] = {}
        for dotted, value in record.requests_columns.items():
            name, _, key = dotted.partition(".")
            stats.setdefault(name, {})[key] = value
        requests = {}
        for i, (k, r) in enumerate(record.requests.items()):
            changes = {n: list(v) if isinstance(v, list) else v for n, v in common.items()}
            for name, columns in stats.items():
                back = {key: v[i] if isinstance(v, list) else v for key, v in columns.items()}
                if name == "timings":  # as a dict[str, float] decodes (``attempts`` is an int)
                    back = {key: float(v) for key, v in back.items()}
                changes[name] = {**back, **(getattr(r, name) or {})}
            requests[k] = msgspec.structs.replace(r, **changes)
    channels = record.channels
    if record.channels_columns:
        channels = dict(channels)
        for name in record.channels_columns:
            columns = channels[name]
            rows = zip(*columns.values(), strict=True)
            channels[name] = [dict(zip(columns, row, strict=True)) for row in rows]
    return msgspec.structs.replace(
        record,
        requests=requests,
        channels=channels,
        requests_common={},
        requests_columns={},
        channels_columns=[],
    )


# -- what repeats, written once -----------------------------------------------------------------


class _SharedLine(msgspec.Struct):
    id: str
    ledger: list[dict[str, str]] | None = None
    body: dict[str, Any] | None = None


_shared_line = msgspec.json.Decoder(_SharedLine)

_MIN_PREFIX = 64
"""Shorter shared heads are stored as they are: a reference costs about 20 bytes."""


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (slice comparisons run in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class Shared:
    """The ledgers and body templates of one unit (``shared.jsonl``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        """The file it was loaded from (named when a record refers to an entry it lacks)."""
        self.ledgers: dict[str, list[dict[str, str]]] = {}
        self.bodies: dict[str, dict[str, Any]] = {}
        self._ledger_ids: dict[bytes, str] = {}
        self._templates: dict[frozenset[str], str] = {}
        self._next = {"L": 0, "B": 0}
        """Per id prefix, one more than the highest number in the file: when a line before it
        was damaged (lost), a new entry's id still never repeats one the file holds."""

    @classmethod
    def load(cls, path: Path) -> Shared:
        """The store of ``path`` (a ``shared.jsonl``; empty when absent). A torn last line is
        ignored: no record can name it, since a shared line is flushed before its records
        (``RecordWriter`` cuts it before appending)."""
        shared = cls(path)
        if not path.exists():
            return shared
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise storage_error(exc, path, doing="read") from None
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                entry = _shared_line.decode(line)
            except msgspec.DecodeError:
                continue
            prefix, number = entry.id[:1], entry.id[1:]
            if prefix in shared._next and number.isdigit():
                shared._next[prefix] = max(shared._next[prefix], int(number) + 1)
            if entry.ledger is not None:
                shared.ledgers[entry.id] = entry.ledger
                shared._ledger_ids[_encoder.encode(entry.ledger)] = entry.id
            if entry.body is not None:
                shared.bodies[entry.id] = entry.body
                shared._templates[frozenset(entry.body)] = entry.id
        return shared

    def _new_id(self, prefix: Literal["L", "B"]) -> str:
        held = len(self.ledgers if prefix == "L" else self.bodies)
        number = max(self._next[prefix], held)
        self._next[prefix] = number + 1
        return f"{prefix}{number}"

    def entry(self, kind: Literal["ledger", "body"], ref: str) -> Any:
        """The ledger or body template ``ref`` (``ConfigError`` naming the file when absent)."""
        found = (self.ledgers if kind == "ledger" else self.bodies).get(ref)
        if found is None:
            where = self.path or "shared.jsonl"
            raise ConfigError(
                f"{where} has no {kind} {ref!r}, which a record names: the file was damaged "
                "(a run before sieval repaired torn shared lines); rerun the samples that name it",
                path=str(where),
            )
        return found

    def compact_requests(
        self, requests: dict[str, RequestRecord], out: list[bytes]
    ) -> dict[str, RequestRecord]:
        """A sample's ``requests`` naming shared entries (new ones are appended to ``out`` as
        lines), each long text field cut to what an earlier request or the template lacks."""
        compacted: dict[str, RequestRecord] = {}
        whole: dict[str, dict[str, Any]] = {}
        for key, request in requests.items():
            short = self.compact(request, out)
            if request.body is not None and short.body:
                short = self._cut_heads(short, whole)
                whole[key] = request.body
            compacted[key] = short
        return compacted

    def _cut_heads(self, short: RequestRecord, earlier: dict[str, dict[str, Any]]) -> RequestRecord:
        assert short.body is not None and short.body_ref is not None
        template = self.bodies[short.body_ref]
        body = dict(short.body)
        heads: dict[str, tuple[str, int]] = {}
        for name, text in short.body.items():
            if not isinstance(text, str) or len(text) < _MIN_PREFIX:
                continue
            best, length = "", 0
            for source, other in [("", template), *earlier.items()]:
                head = other.get(name)
                if isinstance(head, str):
                    n = _common_prefix(text, head)
                    if n > length:
                        best, length = source, n
            if length >= _MIN_PREFIX:
                body[name] = text[length:]
                heads[name] = (best, length)
        if not heads:
            return short
        return msgspec.structs.replace(short, body=body, body_prefix=heads)

    def compact(self, request: RequestRecord, out: list[bytes]) -> RequestRecord:
        """``request`` naming shared entries (new ones are appended to ``out`` as lines)."""
        ledger: list[dict[str, str]] | str = request.ledger
        if isinstance(ledger, list) and ledger:
            key = _encoder.encode(ledger)
            ledger_id = self._ledger_ids.get(key)
            if ledger_id is None:
                ledger_id = self._new_id("L")
                self._ledger_ids[key] = ledger_id
                self.ledgers[ledger_id] = ledger
                out.append(_encoder.encode(_SharedLine(id=ledger_id, ledger=ledger)))
            ledger = ledger_id
        body, ref = request.body, None
        if body is not None:
            ref = self._templates.get(frozenset(body))
            if ref is None:
                ref = self._new_id("B")
                self._templates[frozenset(body)] = ref
                self.bodies[ref] = body
                out.append(_encoder.encode(_SharedLine(id=ref, body=body)))
            template = self.bodies[ref]
            body = {k: v for k, v in body.items() if template[k] != v}
        return msgspec.structs.replace(request, ledger=ledger, body=body, body_ref=ref)


def expand_requests(requests: dict[str, RequestRecord], shared: Shared) -> dict[str, RequestRecord]:
    """A sample's ``requests``, each with its whole body and ledger (what was sent and decided)."""
    whole: dict[str, RequestRecord] = {}
    for key, request in requests.items():
        whole[key] = expand(request, shared, whole)
    return whole


def expand(
    request: RequestRecord, shared: Shared, earlier: dict[str, RequestRecord] | None = None
) -> RequestRecord:
    """``request`` with its whole body and ledger; ``earlier`` holds the sample's requests before
    it, expanded, when its body names one (``expand_requests`` passes them)."""
    ledger = request.ledger
    if isinstance(ledger, str):
        ledger = shared.entry("ledger", ledger)
    body = request.body
    template: dict[str, Any] = {}
    if request.body_ref is not None:
        template = shared.entry("body", request.body_ref)
        body = {**template, **(body or {})}
    if request.body_prefix and body is not None:
        for name, (source, length) in request.body_prefix.items():
            origin = template if not source else ((earlier or {})[source].body or {})
            body[name] = origin[name][:length] + body[name]
    return msgspec.structs.replace(request, ledger=ledger, body=body, body_ref=None, body_prefix={})


# -- writing ------------------------------------------------------------------------------------


class RecordWriter:
    """Appends records to one ``records.jsonl`` (and what repeats to ``shared.jsonl``); flushes
    each line, fsyncs in batches. Opening repairs a torn last line of either file (a crash's,
    ``repair_tail``): ``repaired`` holds the bytes cut from ``records.jsonl``. A write that fails
    (a full disk) is a ``StorageError`` with ``stopped``; the writer then writes nothing more."""

    def __init__(self, path: Path, *, fsync_interval_s: float = FSYNC_INTERVAL_S) -> None:
        self.path = path
        self.shared_path = path.with_name("shared.jsonl")
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
        requests, common, columns = _factor(self.shared.compact_requests(record.requests, new))
        channels, columnar = _columnar(record.channels)
        line = msgspec.structs.replace(
            record,
            requests=requests,
            requests_common=common,
            requests_columns=columns,
            channels=channels,
            channels_columns=columnar,
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


class Outcome(msgspec.Struct, kw_only=True):
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

    def finishes(self) -> Iterator[list[str]]:
        """Each request's finish reasons, in request order (``RequestRecord.finish``)."""
        shared = self.requests_common.finish
        for request in self.requests.values():
            yield request.finish or shared


_outcome_decoder = msgspec.json.Decoder(Outcome)


class _Status(msgspec.Struct):
    sample_id: str
    status: str


_status_decoder = msgspec.json.Decoder(_Status)


def read_records(path: Path, *, repair: bool = False) -> ReadResult:
    """Every record of ``records.jsonl`` (the latest per sample id), decoded in full."""
    stats = [0, 0]
    records = {r.sample_id: _unfactor(r) for r in scan(path, _decoder, repair=repair, stats=stats)}
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
) -> Iterator[tuple[int, Outcome]]:
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
