"""The exception table: most specific rows first, every row reachable."""

from __future__ import annotations

import aiohttp
import pytest

from sieval.errors import ConfigError, TransportError, TransportTimeout
from sieval.transport.errors import RULES, classify


def test_rows_are_ordered_specific_first() -> None:
    for i, earlier in enumerate(RULES):
        for later in RULES[i + 1 :]:
            assert not issubclass(later.kind, earlier.kind), (later.kind, earlier.kind)


@pytest.mark.parametrize(
    ("exc", "error", "retry"),
    [
        (aiohttp.ConnectionTimeoutError(), TransportTimeout, True),
        (aiohttp.SocketTimeoutError(), TransportTimeout, True),
        (TimeoutError(), TransportTimeout, True),
        (aiohttp.ServerDisconnectedError(), TransportError, True),
        (aiohttp.ClientPayloadError("cut"), TransportError, True),
        (aiohttp.ClientConnectionResetError(), TransportError, True),
        (ConnectionResetError(), TransportError, True),
        (aiohttp.InvalidURL("x"), ConfigError, False),
        (aiohttp.ClientError(), TransportError, False),
    ],
)
def test_classify(exc: BaseException, error: type, retry: bool) -> None:
    failure = classify(exc)
    assert failure is not None
    assert (failure.rule.error, failure.rule.retry) == (error, retry)
    made = failure.to_error("GET http://h/ failed after 2 attempts", "", 2, "http://h:80")
    assert type(made) is error and made.server == "http://h:80"
    assert str(made).startswith("GET http://h/ failed after 2 attempts: ")
    assert getattr(made, "attempts", 2) == 2


def test_unknown_is_not_classified() -> None:
    assert classify(KeyError("x")) is None
