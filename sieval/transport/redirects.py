"""Redirects, followed by the transport rather than aiohttp, so that credentials stay home.

At most ``MAX_REDIRECTS`` hops. No credential header (``SENSITIVE_HEADERS``: ``Authorization``,
``x-api-key``, ``x-goog-api-key``, ...) follows a redirect off the original origin (scheme, host
and port): aiohttp itself drops only ``Authorization``. 307/308 keep the method and body;
301/302/303 turn into a bodiless GET.
"""

from __future__ import annotations

import yarl

from sieval.transport.redaction import SENSITIVE_HEADERS

__all__ = ["MAX_REDIRECTS", "REDIRECTS", "next_hop"]

MAX_REDIRECTS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _origin(url: yarl.URL) -> tuple[str, str | None, int | None]:
    return (url.scheme, url.host, url.port)


def next_hop(
    url: yarl.URL,
    status: int,
    location: str,
    method: str,
    headers: dict[str, str],
    body: bytes | None,
) -> tuple[yarl.URL, str, dict[str, str], bytes | None]:
    """Where a redirect leads, and what may be sent there.

    Credential headers are kept only while the origin stays the one the caller named; the
    body is dropped (and the method becomes GET) unless the status is 307 or 308.
    """
    target = url.join(yarl.URL(location))
    if _origin(target) != _origin(url):
        headers = {k: v for k, v in headers.items() if k.lower() not in SENSITIVE_HEADERS}
    if status in (307, 308):
        return target, method, headers, body
    dropped = {"content-type", "content-length"}
    headers = {k: v for k, v in headers.items() if k.lower() not in dropped}
    return target, ("GET" if method != "HEAD" else method), headers, None
