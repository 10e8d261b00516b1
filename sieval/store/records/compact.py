"""What repeats is written once: the compaction of a record on its way to ``records.jsonl`` and
its expansion on the way back.

Beside ``records.jsonl``, ``shared.jsonl`` holds, append-only, each distinct decision ledger and
each body template of the unit; a request's record names its ledger (``"ledger": "L0"``) and keeps
only the body fields that differ from its template (``"body_ref": "B0"``). A long text field that
begins like the same field of the template or of an earlier request of the sample (a k-shot prompt
and its choices, which repeat the whole context) keeps only its tail, and ``body_prefix`` says
where the head is: each prompt is stored once. ``expand_requests`` gives back the exact bodies and
ledgers; every reader uses it. A shared line is written and flushed before the first record that
names it (``io.RecordWriter``).

Within a record (version 5, ``schema.py``): ``factor`` stores once what every request shares and
the requests' stats as columns, ``columnar`` the channels that are lists of like dicts as columns;
``unfactor`` puts both back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec

from ...errors import ConfigError
from ..files import storage_error
from .schema import SHARED_FILE, Record, RequestRecord

__all__ = ["Shared", "columnar", "expand", "expand_requests", "factor", "unfactor"]

_encoder = msgspec.json.Encoder()

_COMMON = ("ledger", "body_ref", "status")
"""Request fields (ids and the status) a record stores once when all its requests agree."""

_COLUMNS = ("usage", "timings", "body")
"""Request dicts whose shared keys a record stores as columns (``requests_columns``): all of
the stats; of the body (as stored: what differs from its template), the text fields."""


def factor(
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


def columnar(channels: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
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


def unfactor(record: Record) -> Record:
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
            where = self.path or SHARED_FILE
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
