"""Frozen budgets for the transport: how long to wait and how hard to push.

Forms:

    Timeouts()                          connect 10 s, read 300 s, total 600 s per attempt
    Timeouts(read=30)                   a shorter gap allowed between received bytes
    replace(Timeouts(), total=60)       a per-call variant (``msgspec.structs.replace``)
    Limits(concurrency=8, retries=0)    8 requests in flight per endpoint, never retry
    Limits(max_reply_bytes=2**30)       replies of up to 1 GiB (64 MiB by default)
"""

from __future__ import annotations

import math

import msgspec

from sieval.errors import ConfigError

__all__ = ["MAX_REPLY_BYTES", "Limits", "Timeouts"]

MAX_REPLY_BYTES = 64 * 2**20
"""The default cap on one reply's body (``Limits.max_reply_bytes``), 64 MiB. The largest reply a
run asks for is a long prompt scored with alternatives at every position: measured on the
reference server's vLLM-shaped replies, about 1.4 KB a position with top-20 on ``vllm_native``
(``prompt_logprobs``) and 1.9 KB on ``openai_completions`` (echo), 0.15-0.2 KB with top-1; so 64
MiB holds a 32k-token prompt scored with top-20, and a generation of far more text than any
``max_tokens`` a task sets. A reply is held about twice while it is read (its chunks, then
joined), so 32 requests in flight hold at most about 4 GiB at the cap."""


def _check_positive(owner: str, field: str, value: object, example: str) -> None:
    """Raise ``ConfigError`` unless ``value`` is a positive, finite number."""
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )
    if not ok:
        raise ConfigError(
            f"{owner}.{field}={value!r} is not a positive number of seconds; "
            f"pass a finite number above zero, e.g. {owner}({field}={example})",
            path=f"{owner}.{field}",
            expected="positive finite number",
            received=value,
        )


def _check_count(owner: str, field: str, value: object, minimum: int, example: str) -> None:
    """Raise ``ConfigError`` unless ``value`` is an int of at least ``minimum``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(
            f"{owner}.{field}={value!r} is not a whole number >= {minimum}; "
            f"pass e.g. {owner}({field}={example})",
            path=f"{owner}.{field}",
            expected=f"int >= {minimum}",
            received=value,
        )


class Timeouts(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Time budgets of one attempt, in seconds."""

    total: float = 600.0
    """The whole attempt: connect, send, headers and the full body."""
    connect: float = 10.0
    """Opening the TCP (and TLS) connection."""
    read: float = 300.0
    """The longest gap between two reads from the socket (headers included)."""

    def __post_init__(self) -> None:
        _check_positive("Timeouts", "total", self.total, "600")
        _check_positive("Timeouts", "connect", self.connect, "10")
        _check_positive("Timeouts", "read", self.read, "300")


class Limits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How many requests run at once per endpoint, and how failures are retried."""

    concurrency: int = 32
    """Requests in flight at once per endpoint (scheme, host and port)."""
    retries: int = 4
    """Extra attempts after the first, for connect errors, timeouts, 429 and 5xx only."""
    backoff_base_s: float = 0.5
    """Ceiling of the first backoff; it doubles with every retry (full jitter below it)."""
    backoff_max_s: float = 30.0
    """Largest ceiling of a backoff drawn by the transport."""
    retry_after_max_s: float = 60.0
    """Longest wait honoured from a server's ``Retry-After`` header; a server asking for more
    is waited this long instead, and the transport says so (a warning, once per endpoint)."""
    outage_s: float = 300.0
    """How long an endpoint that has answered before may refuse connections, or answer a
    gateway's 502/504 (a server being restarted, behind a proxy or not), before a request fails:
    those errors are retried past ``retries`` until then, and are not counted among them, so an
    outage costs time, not samples."""
    max_reply_bytes: int = MAX_REPLY_BYTES
    """The most bytes one reply's body may hold, counted as it arrives (compressed) and as it is
    read (decompressed); a stream's whole body counts. A reply past it fails as a
    ``ContractViolation`` at once (a ``Content-Length`` above it before any byte is read), is
    never retried, and its connection is closed."""

    def __post_init__(self) -> None:
        _check_count("Limits", "concurrency", self.concurrency, 1, "32")
        _check_count("Limits", "retries", self.retries, 0, "4")
        _check_positive("Limits", "backoff_base_s", self.backoff_base_s, "0.5")
        _check_positive("Limits", "backoff_max_s", self.backoff_max_s, "30")
        _check_positive("Limits", "retry_after_max_s", self.retry_after_max_s, "60")
        _check_positive("Limits", "outage_s", self.outage_s, "300")
        _check_count("Limits", "max_reply_bytes", self.max_reply_bytes, 1, "67108864")
        if self.backoff_max_s < self.backoff_base_s:
            raise ConfigError(
                f"Limits.backoff_max_s={self.backoff_max_s!r} is below "
                f"backoff_base_s={self.backoff_base_s!r}; pass a cap at least as large as the base",
                path="Limits.backoff_max_s",
                expected=f">= {self.backoff_base_s!r}",
                received=self.backoff_max_s,
            )
