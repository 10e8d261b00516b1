"""The bytes of a reply the dialect refused (a ``ContractViolation``), kept in the sample's record,
bounded and redacted, so the failure can be read again and re-lifted without ``--wire-log``."""

from __future__ import annotations

from collections.abc import Iterable

from sieval.transport.redaction import redact

KEPT_BYTES = 64 * 1024
"""At most this many bytes of a reply are kept: the first three quarters and the last quarter
(a refused stream's fault is as often at its end as at its start)."""


def kept_reply(body: bytes, secrets: Iterable[str] = ()) -> str:
    """``body`` as text (UTF-8; a byte that is not is shown as U+FFFD), every secret redacted;
    past ``KEPT_BYTES``, its head and tail around a line naming how many bytes were left out."""
    if len(body) > KEPT_BYTES:
        head, tail = KEPT_BYTES * 3 // 4, KEPT_BYTES // 4
        cut = len(body) - head - tail
        marker = f"\n[sieval: {cut} of the reply's {len(body)} bytes left out here]\n".encode()
        body = body[:head] + marker + body[-tail:]
    return redact(body.decode("utf-8", "replace"), secrets)
