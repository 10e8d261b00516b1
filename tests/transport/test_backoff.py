"""Backoff delays and Retry-After parsing, without any waiting."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sieval.transport import Limits, backoff_delay, retry_after_s

LIMITS = Limits(backoff_base_s=0.5, backoff_max_s=4.0, retry_after_max_s=120)


def test_ceiling_doubles_then_caps() -> None:
    delays = [backoff_delay(n, LIMITS, lambda: 1.0) for n in range(1, 8)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0]


def test_full_jitter_scales_the_ceiling() -> None:
    assert backoff_delay(3, LIMITS, lambda: 0.25) == 0.5
    assert backoff_delay(3, LIMITS, lambda: 0.0) == 0.0


@given(st.integers(1, 60), st.floats(0, 1, exclude_max=True))
def test_delay_stays_within_bounds(retry: int, draw: float) -> None:
    delay = backoff_delay(retry, LIMITS, lambda: draw)
    assert 0.0 <= delay <= min(4.0, 0.5 * 2 ** (retry - 1))


@pytest.mark.parametrize(
    ("retry_after", "draw", "expected"),
    [(2.0, 0.0, 2.0), (0.1, 1.0, 0.5), (500.0, 0.5, 120.0), (0.0, 0.5, 0.25)],
)
def test_retry_after_is_a_floor_with_a_cap(
    retry_after: float, draw: float, expected: float
) -> None:
    assert backoff_delay(1, LIMITS, lambda: draw, retry_after) == expected


NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2", 2.0),
        (" 7 ", 7.0),
        ("1.5", 1.5),
        ("-3", 0.0),
        ("Wed, 01 Jan 2025 12:00:10 GMT", 10.0),
        ("Wed, 01 Jan 2025 12:00:10", 10.0),
        ("Wed, 01 Jan 2025 11:00:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        ("nan", None),
        (None, None),
    ],
)
def test_retry_after_parsing(value: str | None, expected: float | None) -> None:
    assert retry_after_s(value, now=lambda: NOW) == expected


def test_retry_after_default_clock() -> None:
    later = datetime.fromtimestamp(datetime.now(UTC).timestamp() + 30, UTC)
    seconds = retry_after_s(format_datetime(later, usegmt=True))
    assert seconds is not None and 25 <= seconds <= 31
