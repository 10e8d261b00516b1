"""The record schema: ``Record`` (one finished sample) and ``RequestRecord`` (one of its requests),
and where a unit's records live (``records_path``).

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

Fields came later without a version bump, on purpose (the version enters the run identity, so a
bump would stop every run made before it from resuming): each has a default that is omitted, so
the records of a run that does not use it are byte for byte what version 5 wrote, and a version 5
reader skips it. ``Record.rerun`` is absent from every record but a re-run's (a reader that does
not know it reads that record as the answer it is); conversations (issue 35) added
``RequestRecord.turn``, ``role``, ``messages`` and ``output``, left out of a one-shot task's
records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgspec

from ..paths import segment

__all__ = [
    "RECORDS_FILE",
    "SCHEMA_VERSION",
    "SHARED_FILE",
    "Record",
    "RequestRecord",
    "records_path",
    "shared_path",
    "wire_log_path",
]

SCHEMA_VERSION = 5
"""Version of the record schema below; enters the run identity."""

RECORDS_FILE = "records.jsonl"
"""A unit's records, one JSON line per finished sample."""

SHARED_FILE = "shared.jsonl"
"""Beside ``RECORDS_FILE``: the ledgers and body templates its records name (``compact.py``)."""


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
    turn: int = 1
    """The conversation turn the call belongs to: 1 plus the same model's calls of the sample
    answered before it was made (one-shot requests, and calls sent together, share turn 1)."""
    role: str | None = None
    """The model role that answered it (``judge``); None: the evaluated model."""
    messages: list[dict[str, Any]] | None = None
    """A task that is not static: the chat messages this call added to its model's
    conversation (all of them on a first call; then what follows the last reply: the next
    question, the tool results), as the IR has them: ``{role, content: [parts]}``."""
    output: list[dict[str, Any]] | None = None
    """A task that is not static: each choice's answer, ``{text, tool_calls: [{call_id, name,
    arguments}], finish}`` (what ``sieval samples`` shows as the reply)."""
    replica: str | None = None
    """The replica that answered it (its base URL, redacted), for a model served by several
    (issue 40). Added without a new version on purpose: omitted when None, so a one-endpoint
    run's records are byte for byte what version 5 wrote, and a version 5 reader skips it."""


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
    rerun: dict[str, Any] | None = None
    """A re-run of a censored sample at a larger token budget (``--rerun-censored``,
    ``runner/rerun.py``): ``{"of": "censored", "factor": 4.0, "max_tokens": {request: N},
    "was": {request: M}}``, the budget that produced this answer and the one whose answer was
    censored (that record stays in the file, an earlier line); None for a sample's first run."""


def records_path(run_dir: Path, model_dir: str, task: str, shard: int | None = None) -> Path:
    """A unit's ``records.jsonl``: ``<model>/<task>/``, or shard k's ``<model>/<task>/shards/<k>/``
    (each shard has its own ``shared.jsonl`` beside it: ledger and body ids are per file)."""
    unit = run_dir / segment(model_dir, key="model") / segment(task, key="task")
    return (unit if shard is None else unit / "shards" / str(shard)) / RECORDS_FILE


def shared_path(records: Path) -> Path:
    """The ``shared.jsonl`` beside a ``records.jsonl``."""
    return records.with_name(SHARED_FILE)


def wire_log_path(run_dir: Path, model_dir: str, shard: int | None = None) -> Path:
    """A model's wire log (``--wire-log``): ``<model>/wire.jsonl``, or shard k's own
    ``<model>/shards/<k>/wire.jsonl`` (shards never append to one file)."""
    model = run_dir / segment(model_dir, key="model")
    return (model if shard is None else model / "shards" / str(shard)) / "wire.jsonl"
