"""How long to wait before the next attempt.

Attempt ``n`` (1 for the first retry) waits a uniformly drawn time in
``[0, min(backoff_max_s, backoff_base_s * 2 ** (n - 1))]`` ("full jitter"), but never less than
the server's ``Retry-After`` (seconds or HTTP-date), itself capped at ``retry_after_max_s``
(60 s unless configured; the transport warns when a server asks for more).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC
from email.utils import parsedate_to_datetime

from sieval.transport.config import Limits

__all__ = ["backoff_delay", "retry_after_s"]


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
