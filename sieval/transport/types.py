"""The transport seam: a prepared request in, the full reply out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import msgspec

from sieval.errors import ConfigError
from sieval.transport.config import Timeouts

__all__ = ["HttpReply", "HttpRequest", "Timings", "Transport"]


class HttpRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One HTTP exchange as a dialect prepared it; the transport adds nothing but defaults."""

    url: str
    """Absolute ``http://`` or ``https://`` URL."""
    method: str = "POST"
    """HTTP method, e.g. ``"POST"`` or ``"GET"``."""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    """Headers as sent, auth included (``Authorization``, ``x-api-key`` ...)."""
    body: bytes | None = None
    """Already-encoded JSON, or ``None`` for no body."""
    stream: bool = False
    """The reply is server-sent events; it is still read to the end."""
    secrets: tuple[str, ...] = ()
    """Strings redacted from logs, the wire log and error messages."""
    timeout: Timeouts | None = None
    """Budgets for this call; ``None`` uses the transport's."""
    overload: frozenset[int] = frozenset()
    """Statuses the wire answers when overloaded (Anthropic's 529): retried and reported as a
    rate limit is (the dialect's ``Retry``)."""
    in_band: Callable[[bytes], int | None] | None = None
    """The status an error inside a 2xx body stands for (an error event in a stream), or None:
    a retryable one is retried like that status; after the retries the body is returned."""
    failover: bool = False
    """Another replica can take this request (``replicas.py``): a server that refuses
    connections fails it at once, neither retried nor waited for as an outage."""

    def __post_init__(self) -> None:
        if not self.url.lower().startswith(("http://", "https://")):
            raise ConfigError(
                "HttpRequest.url must be an absolute http:// or https:// URL; "
                "join the endpoint path to the server's base URL",
                path="HttpRequest.url",
                expected="absolute http(s) URL",
            )


class Timings(msgspec.Struct, frozen=True, kw_only=True):
    """When an exchange ran and how long it took, in seconds."""

    started: float
    """Unix time at which the first attempt began."""
    first_byte_s: float
    """From the start of the final attempt to the first body byte (or headers if no body)."""
    total_s: float
    """Duration of the final attempt, body read in full."""
    wall_s: float
    """Duration of all attempts, backoff sleeps included."""


class HttpReply(msgspec.Struct, frozen=True, kw_only=True):
    """A reply read in full; any status except 429/5xx after retries is returned as is."""

    status: int
    """HTTP status code."""
    headers: dict[str, str]
    """Reply headers with lower-case names; repeated headers joined by ``", "``."""
    body: bytes
    """The whole body (for SSE, the raw event stream)."""
    attempts: int = 1
    """Attempts made, this one included."""
    timings: Timings = msgspec.field(
        default_factory=lambda: Timings(started=0.0, first_byte_s=0.0, total_s=0.0, wall_s=0.0)
    )
    """Timing of the exchange."""
    exchange_id: str | None = None
    """Id of the exchange in the wire log (``None`` when not sent by ``HttpTransport``)."""
    replica: str | None = None
    """The replica that answered, its base URL redacted (``ReplicaTransport``), else None."""


@runtime_checkable
class Transport(Protocol):
    """Anything that can send an ``HttpRequest``: ``HttpTransport`` or ``FakeTransport``."""

    async def send(self, request: HttpRequest) -> HttpReply:
        """Send ``request`` and return its reply; raise ``TransportError`` when it cannot."""
        ...

    async def aclose(self) -> None:
        """Release connections and files; the transport is not used afterwards."""
        ...
