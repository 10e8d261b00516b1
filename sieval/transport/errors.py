"""The one boundary where aiohttp and asyncio exceptions become sieval errors.

``RULES`` is read top to bottom and the first matching row wins, so specific types come
before their bases. Each row says which sieval error to raise, what went wrong, how to fix
it (a setting named as the user sets it: ``--timeout`` or ``timeout_s``, ``settings.fill``), and
whether the attempt may be retried. Nothing outside this module names aiohttp's exception types.
"""

from __future__ import annotations

from collections.abc import Mapping

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
        "no connection was made within {connect:g} s",
        "check that the server is running and reachable, and the URL is right",
        retry=True,
    ),
    Rule(
        aiohttp.ServerTimeoutError,
        TransportTimeout,
        "the server sent no byte for {read:g} s",
        "lower the work per request (a shorter prompt, a smaller max_tokens), or raise the "
        "timeout ({timeout_s}), which also sets the wait for each byte (up to 300 s)",
        retry=True,
    ),
    Rule(
        TimeoutError,
        TransportTimeout,
        "the reply took longer than the timeout of {total:g} s",
        "raise the timeout ({timeout_s}), or lower the work per request",
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

    def to_error(
        self,
        head: str,
        detail: str,
        attempts: int,
        server: str,
        budgets: Mapping[str, float | None] | None = None,
    ) -> SievalError:
        """The sieval error for this failure; ``head`` and ``detail`` are already redacted.
        ``budgets`` (``connect``, ``read``, ``total``, in seconds) fill a timeout's ``what``."""
        cause = f" ({detail})" if detail else ""
        what = self.rule.what
        if budgets is not None and "{" in what:
            what = what.format_map({k: v or 0 for k, v in budgets.items()})
        text = f"{head}: {what}{cause}; {fill(self.rule.fix)}"
        if issubclass(self.rule.error, TransportError):
            return self.rule.error(
                text, attempts=attempts, server=server, cause=f"{head}: {what}{cause}"
            )
        return self.rule.error(text, server=server)


def classify(exc: BaseException) -> Failure | None:
    """The first rule matching ``exc``, or ``None`` when it is not a transport failure."""
    for rule in RULES:
        if isinstance(exc, rule.kind):
            return Failure(rule, exc)
    return None
