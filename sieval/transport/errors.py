"""The one boundary where aiohttp and asyncio exceptions become sieval errors.

``RULES`` is read top to bottom and the first matching row wins, so specific types come
before their bases. Each row says which sieval error to raise, what went wrong, how to fix
it, and whether the attempt may be retried. Nothing outside this module names aiohttp's
exception types.
"""

from __future__ import annotations

import aiohttp
import msgspec

from sieval.errors import ConfigError, SievalError, TransportError, TransportTimeout
from sieval.setting_names import fill

__all__ = ["RULES", "Failure", "Rule", "classify"]


class Rule(msgspec.Struct, frozen=True):
    """One row of the table: exceptions of ``kind`` become ``error``."""

    kind: type[BaseException]
    error: type[SievalError]
    what: str
    fix: str
    retry: bool


# ``{retries}`` names the setting as the run was started (``settings.fill``)
_CONNECT = "check that the server is running and the URL is right, or raise the retries ({retries})"
_FLAKY = "check the server's logs, or raise the retries ({retries})"

RULES: tuple[Rule, ...] = (
    Rule(
        aiohttp.ConnectionTimeoutError,
        TransportTimeout,
        "the connect budget ran out",
        "check the server is reachable, or raise Timeouts.connect",
        retry=True,
    ),
    Rule(
        aiohttp.ServerTimeoutError,
        TransportTimeout,
        "the read budget ran out waiting for bytes",
        "raise Timeouts.read, or lower the work per request",
        retry=True,
    ),
    Rule(
        TimeoutError,
        TransportTimeout,
        "the total budget ran out",
        "raise Timeouts.total, or lower the work per request",
        retry=True,
    ),
    Rule(aiohttp.ClientConnectorError, TransportError, "could not connect", _CONNECT, retry=True),
    Rule(
        aiohttp.ServerDisconnectedError,
        TransportError,
        "the server closed the connection",
        _FLAKY,
        retry=True,
    ),
    Rule(
        aiohttp.ClientPayloadError,
        TransportError,
        "the reply body was cut short",
        _FLAKY,
        retry=True,
    ),
    Rule(aiohttp.ClientConnectionError, TransportError, "the connection failed", _FLAKY, True),
    Rule(OSError, TransportError, "the connection failed", _FLAKY, retry=True),
    Rule(
        aiohttp.InvalidURL,
        ConfigError,
        "the URL is not valid",
        "fix the server's base URL",
        retry=False,
    ),
    Rule(
        aiohttp.TooManyRedirects,
        TransportError,
        "the server redirected too many times",
        "point the base URL at the final address",
        retry=False,
    ),
    Rule(
        aiohttp.ClientError,
        TransportError,
        "the reply was not valid HTTP",
        "check that the URL points at an HTTP server",
        retry=False,
    ),
)


class Failure(msgspec.Struct, frozen=True):
    """A classified exception: the matching rule and the original."""

    rule: Rule
    exc: BaseException

    def to_error(self, head: str, detail: str, attempts: int, server: str) -> SievalError:
        """The sieval error for this failure; ``head`` and ``detail`` are already redacted."""
        cause = f" ({detail})" if detail else ""
        text = f"{head}: {self.rule.what}{cause}; {fill(self.rule.fix)}"
        if issubclass(self.rule.error, TransportError):
            return self.rule.error(text, attempts=attempts, server=server)
        return self.rule.error(text, server=server)


def classify(exc: BaseException) -> Failure | None:
    """The first rule matching ``exc``, or ``None`` when it is not a transport failure."""
    for rule in RULES:
        if isinstance(exc, rule.kind):
            return Failure(rule, exc)
    return None
