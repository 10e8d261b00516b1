"""How long to wait before the next attempt.

Attempt ``n`` (1 for the first retry) waits a uniformly drawn time in
``[0, min(backoff_max_s, backoff_base_s * 2 ** (n - 1))]`` ("full jitter"), but never less than
the server's ``Retry-After`` (seconds or HTTP-date), itself capped at ``retry_after_max_s``
(60 s unless configured; the transport warns when a server asks for more). ``Tries`` counts one
request's failed attempts against ``Limits.retries``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC
from email.utils import parsedate_to_datetime

from sieval.transport.config import Limits

__all__ = ["Tries", "backoff_delay", "retry_after_s"]


def retry_after_s(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds asked for by a ``Retry-After`` value, or ``None`` if absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT even when the zone is missing
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - now()
    if seconds != seconds:  # NaN
        return None
    return max(seconds, 0.0)


def backoff_delay(
    retry: int, limits: Limits, random: Callable[[], float], retry_after: float | None = None
) -> float:
    """Seconds to sleep before retry number ``retry`` (1-based); ``random()`` is in [0, 1)."""
    ceiling = min(limits.backoff_max_s, limits.backoff_base_s * 2.0 ** (retry - 1))
    delay = ceiling * random()
    if retry_after is not None:
        delay = max(delay, min(retry_after, limits.retry_after_max_s))
    return delay


class Tries:
    """One request's failed attempts: the transient failures in a row (429, 5xx, resets,
    timeouts) since the last attempt that found the endpoint away, and when it first did. An
    outage's waits are not retries, and a fault between them (a gateway answering 503 once while
    its upstream restarts) gets all of its own; ``outage_s`` counts from the first away."""

    __slots__ = ("down_since", "outage", "retried", "retries")

    def __init__(self, retries: int) -> None:
        self.retries = retries
        self.retried = 0
        self.down_since: float | None = None
        self.outage = False

    def failed(self, away: float | None, looked_away: bool) -> bool:
        """Count a failed attempt (``away``: ``HttpTransport``'s ``_away``'s answer for it, which
        ``looked_away`` when it refused or was a gateway's 502/504); whether to try again."""
        expired = looked_away and self.down_since is not None and away is None  # past outage_s
        self.outage = away is not None
        if self.outage:
            self.down_since, self.retried = away, 0
            return True
        self.retried += 1
        return self.retried <= self.retries and not expired
