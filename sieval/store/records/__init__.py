"""Per-sample records: ``results/<run>/<model>/<task>/records.jsonl``, append-only.

Three modules, one concept each:

- ``schema``: what a line holds (``Record``, ``RequestRecord``), its versions, and where a unit's
  files live (``records_path``, ``shared_path``, ``wire_log_path``);
- ``compact``: what repeats is written once (``shared.jsonl``, the columns of a record) and put
  back on reading (``expand_requests``);
- ``io``: the append-only writer (``RecordWriter``) and the readers, each decoding only what it
  needs (``read_records``, ``statuses_at``, ``latest_at``, ``scan``).

and ``call``, which builds a request's record from the ``Call`` that sent it, and ``bounded``,
what a record keeps of a text too long to keep whole. Every name is importable from here.
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
    "NOT_RUN",
    "RECORDS_FILE",
    "SCHEMA_VERSION",
    "SCORED",
    "SHARED_FILE",
    "STORED_TEXT_CHARS",
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
    "latest_at",
    "read_records",
    "records_path",
    "request_record",
    "scan",
    "shared_path",
    "statuses_at",
    "stored_channels",
    "wire_log_path",
]
