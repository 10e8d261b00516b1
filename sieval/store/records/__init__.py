"""Per-sample records: ``results/<run>/<model>/<task>/records.jsonl``, append-only.

Three modules, one concept each:

- ``schema``: what a line holds (``Record``, ``RequestRecord``), its versions, and where a unit's
  files live (``records_path``, ``shared_path``, ``wire_log_path``);
- ``compact``: what repeats is written once (``shared.jsonl``, the columns of a record) and put
  back on reading (``expand_requests``);
- ``io``: the append-only writer (``RecordWriter``) and the readers, each decoding only what it
  needs (``read_records``, ``statuses_at``, ``latest_at``, ``scan``).

and ``call``, which builds a request's record from the ``Call`` that sent it, ``bounded``,
what a record keeps of a text too long to keep whole, and ``journal``, the per-call journal that
lets a resumed conversation replay its answered calls. Every name is importable from here.
"""

from .bounded import STORED_TEXT_CHARS, bounded_text, stored_channels
from .call import error_record, finish_reasons, request_record
from .compact import Shared, expand, expand_requests
from .io import (
    FAILED,
    FSYNC_INTERVAL_S,
    NOT_RUN,
    SCORED,
    ReadResult,
    RecordWriter,
    SampleOutcome,
    decode_record,
    first_reported_model,
    latest_at,
    read_records,
    scan,
    statuses_at,
)
from .journal import JOURNAL_FILE, CallJournal, Journaled, journal_path, reply_text, sent_hash
from .schema import (
    RECORDS_FILE,
    SCHEMA_VERSION,
    SHARED_FILE,
    Record,
    RequestRecord,
    records_path,
    shared_path,
    wire_log_path,
)

__all__ = [
    "FAILED",
    "FSYNC_INTERVAL_S",
    "JOURNAL_FILE",
    "NOT_RUN",
    "RECORDS_FILE",
    "SCHEMA_VERSION",
    "SCORED",
    "SHARED_FILE",
    "STORED_TEXT_CHARS",
    "CallJournal",
    "Journaled",
    "ReadResult",
    "Record",
    "RecordWriter",
    "RequestRecord",
    "SampleOutcome",
    "Shared",
    "bounded_text",
    "decode_record",
    "error_record",
    "expand",
    "expand_requests",
    "finish_reasons",
    "first_reported_model",
    "journal_path",
    "latest_at",
    "read_records",
    "records_path",
    "reply_text",
    "request_record",
    "scan",
    "sent_hash",
    "shared_path",
    "statuses_at",
    "stored_channels",
    "wire_log_path",
]
