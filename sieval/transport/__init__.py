"""The transport: one async HTTP JSON client, a fake for tests, redaction and the wire log.

Typical use, one transport per model for its whole lifetime (models that reach one server may
share one ``Pool`` of connections: ``HttpTransport(pool=...)``):

    from sieval.transport import HttpRequest, HttpTransport

    async with HttpTransport(limits=Limits(concurrency=8)) as transport:
        reply = await transport.send(HttpRequest(url=url, headers=auth, body=payload))
"""

import typing as _typing

from sieval.transport.backoff import backoff_delay, retry_after_s
from sieval.transport.config import Limits, Timeouts
from sieval.transport.fake import FakeTransport, Handler, json_reply
from sieval.transport.redaction import (
    REDACTED,
    collect_secrets,
    redact,
    redact_headers,
    redact_json,
    redact_url,
)
from sieval.transport.types import HttpReply, HttpRequest, Timings, Transport
from sieval.transport.wirelog import WireLog

if _typing.TYPE_CHECKING:
    from sieval.transport.client import HttpTransport
    from sieval.transport.pool import Pool
    from sieval.transport.side_routes import get_json


_LAZY = ("HttpTransport", "Pool", "get_json")


def __getattr__(name: str) -> _typing.Any:
    """``HttpTransport``, ``Pool`` and ``get_json`` on first use: they import aiohttp, whose
    import costs more than the rest of sieval's (it builds its TLS contexts)."""
    if name == "HttpTransport":
        from sieval.transport.client import HttpTransport

        return HttpTransport
    if name == "Pool":
        from sieval.transport.pool import Pool

        return Pool
    if name == "get_json":
        from sieval.transport.side_routes import get_json

        return get_json
    raise AttributeError(f"module 'sieval.transport' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "REDACTED",
    "FakeTransport",
    "Handler",
    "HttpReply",
    "HttpRequest",
    "HttpTransport",
    "Limits",
    "Pool",
    "Timeouts",
    "Timings",
    "Transport",
    "WireLog",
    "backoff_delay",
    "collect_secrets",
    "get_json",
    "json_reply",
    "redact",
    "redact_headers",
    "redact_json",
    "redact_url",
    "retry_after_s",
]
