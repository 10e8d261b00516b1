"""``HttpTransport``: the one real transport, an aiohttp client that retries with care.

Connections come from a ``Pool`` (``sieval.transport.pool``): the transport's own, opened on the
first ``send`` and kept until ``aclose``, with at most ``Limits.concurrency`` requests on the wire
per origin (scheme, host, port); or one shared by the transports of every model that reaches one
server (``HttpTransport(pool=...)``: its owner sizes and closes it).
An attempt is retried only after a connect error, a timeout, a cut-short body, HTTP 429 or
HTTP 5xx; any other status, 4xx included, is returned as an ``HttpReply`` for the dialect to
judge. Backoff is described in ``sieval.transport.backoff``. Exceptions are translated once,
through ``sieval.transport.errors.RULES``.

Redirects are followed here, not by aiohttp, so that no credential header follows a redirect off
the original origin (``sieval.transport.redirects``).

A reply's body is bounded (``Limits.max_reply_bytes``): counted as it arrives, compressed, and as
it is read, decompressed (aiohttp decompresses in bounded chunks), a stream's whole body
included. Past the cap, or given a ``Content-Length`` above it, the read stops, the connection is
closed and the send fails as a ``ContractViolation`` naming the cap and its setting: a gzip bomb,
an endless stream or a runaway answer costs at most the cap, never the host's memory.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random as _random
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Self

import aiohttp
import msgspec
import yarl

from sieval.errors import ContractViolation, TransportError
from sieval.setting_names import fill
from sieval.transport.backoff import Tries, backoff_delay, retry_after_s
from sieval.transport.config import Limits, Timeouts
from sieval.transport.errors import classify
from sieval.transport.pool import Pool
from sieval.transport.redaction import collect_secrets, redact, redact_url
from sieval.transport.redirects import MAX_REDIRECTS, REDIRECTS, next_hop
from sieval.transport.types import HttpReply, HttpRequest, Timings
from sieval.transport.wirelog import WireLog

__all__ = ["HttpTransport", "excerpt"]

logger = logging.getLogger("sieval.transport")

EXCERPT_CHARS = 300


def excerpt(body: bytes, secrets: tuple[str, ...], limit: int = EXCERPT_CHARS) -> str:
    """A one-line, redacted excerpt of ``body`` of at most ``limit`` characters."""
    text = " ".join(redact(body.decode("utf-8", errors="replace"), secrets).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


GATEWAY = frozenset({502, 504})
"""A gateway's answers when the server behind it is away (LiteLLM, nginx in front of a vLLM being
restarted): after the endpoint has answered, waited for like refused connections (``outage_s``)."""


def _retryable(status: int, overload: frozenset[int] = frozenset()) -> bool:
    return status == 429 or status >= 500 or status in overload


def _plural(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


class _Raw(msgspec.Struct, frozen=True):
    """One attempt's reply before it becomes an ``HttpReply``."""

    status: int
    headers: dict[str, str]
    body: bytes
    first_byte_s: float
    total_s: float


class _Exchange(msgspec.Struct, frozen=True):
    """What stays the same across the attempts of one ``send``."""

    request: HttpRequest
    headers: dict[str, str]
    secrets: tuple[str, ...]
    url: yarl.URL
    shown_url: str
    endpoint: str
    timeout: aiohttp.ClientTimeout
    exchange_id: str


class HttpTransport:
    """Sends ``HttpRequest``s over one pooled aiohttp session.

    ``pool``: a shared one (its ``connections`` then bound the requests on the wire, not
    ``limits.concurrency``; ``trust_env`` and ``user_agent`` are the pool's); else the transport
    opens its own. ``sleep`` and ``random`` are seams for tests: backoff calls
    ``await sleep(seconds)`` and draws jitter from ``random()`` in [0, 1).
    """

    def __init__(
        self,
        *,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
        wire_log: WireLog | str | Path | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        clock: Callable[[], float] = time.monotonic,
        trust_env: bool = False,
        user_agent: str = "sieval",
        pool: Pool | None = None,
    ) -> None:
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or Limits()
        self.wire_log = WireLog(wire_log) if isinstance(wire_log, str | Path) else wire_log
        self._sleep = sleep
        self._random = random
        self._clock = clock
        self._answered: set[str] = set()  # endpoints that replied once: away now is an outage
        self._outages: dict[str, float] = {}  # endpoint -> when it was first found away
        self._owns_pool = pool is None
        self.pool = pool or Pool(
            self.limits.concurrency, trust_env=trust_env, user_agent=user_agent
        )
        self._capped: set[str] = set()  # endpoints already told of a capped Retry-After
        self._closed = False
        # what a send derives from its URL and timeouts, once per distinct value (the same few
        # URLs and budgets come back on every request of a run)
        self._urls: dict[tuple[str, tuple[str, ...]], tuple[yarl.URL, str, str]] = {}
        self._timeouts: dict[Timeouts, aiohttp.ClientTimeout] = {}
        self._id_prefix = uuid.uuid4().hex[:16]
        self._ids = itertools.count()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the wire log and the transport's own pool (a shared pool is its owner's to
        close); later ``send`` calls raise ``RuntimeError``."""
        self._closed = True
        if self._owns_pool:
            await self.pool.aclose()
        if self.wire_log is not None:
            self.wire_log.close()

    async def send(self, request: HttpRequest) -> HttpReply:
        """Send ``request``, retrying as described above, and return the full reply."""
        ex = self._prepare(request)
        started, wall0 = time.time(), time.monotonic()
        attempt = 0
        tries = Tries(self.limits.retries)
        while True:
            attempt += 1
            began = time.monotonic()
            try:
                raw = await self._attempt(ex)
            except ContractViolation as exc:  # the reply passed its cap: never retried
                self._log_wire(ex, attempt, error=exc.message, total_s=time.monotonic() - began)
                raise
            except Exception as exc:
                failure = classify(exc)
                if failure is None:
                    raise
                detail = self._redact_text(ex, f"{type(exc).__name__}: {exc}".rstrip(": "))
                self._log_wire(ex, attempt, error=detail, total_s=time.monotonic() - began)
                refused = isinstance(exc, aiohttp.ClientConnectorError)
                how = "refuses connections" if refused else None
                again = tries.failed(self._away(ex, how, tries.down_since), how is not None)
                if refused and ex.request.failover:
                    again = False  # another replica takes it: no wait for this one
                if failure.rule.retry and again:
                    await self._pause(ex, attempt, tries, f"{failure.rule.what}: {detail}", None)
                    continue
                head = f"{request.method} {ex.shown_url} failed after {_plural(attempt)}"
                budgets = {
                    "connect": ex.timeout.sock_connect,
                    "read": ex.timeout.sock_read,
                    "total": ex.timeout.total,
                }
                raise failure.to_error(head, detail, attempt, ex.endpoint, budgets) from exc
            self._log_wire(ex, attempt, raw=raw)
            overload = ex.request.overload
            if raw.status < 500 or raw.status in overload:
                self._answered.add(ex.endpoint)
            # a final answer ends the outage; a gateway's own 429 does not say its upstream is back
            if not _retryable(raw.status, overload) and ex.endpoint in self._outages:
                away_s = self._clock() - self._outages.pop(ex.endpoint)
                logger.warning("%s answers again, after %.0f s away", ex.endpoint, away_s)
            # an error event inside a 2xx stream is retried as the status it stands for
            said = ex.request.in_band(raw.body) if ex.request.in_band and raw.status < 300 else None
            if _retryable(raw.status, overload) or (said is not None and _retryable(said)):
                gateway = raw.status in GATEWAY
                how = (
                    f"answers {raw.status} (a gateway whose upstream is away)" if gateway else None
                )
                if tries.failed(self._away(ex, how, tries.down_since), gateway):
                    wait = retry_after_s(raw.headers.get("retry-after"))
                    if wait is not None and wait > self.limits.retry_after_max_s:
                        self._say_capped(ex, wait)
                    why = f"HTTP {raw.status}" if said is None else f"an in-band HTTP {said}"
                    await self._pause(ex, attempt, tries, why, wait)
                    continue
                if said is None:
                    raise self._status_error(ex, raw, attempt)
            timings = Timings(
                started=started,
                first_byte_s=raw.first_byte_s,
                total_s=raw.total_s,
                wall_s=time.monotonic() - wall0,
            )
            return HttpReply(
                status=raw.status,
                headers=raw.headers,
                body=raw.body,
                attempts=attempt,
                timings=timings,
                exchange_id=ex.exchange_id,
            )

    def _prepare(self, request: HttpRequest) -> _Exchange:
        """Resolve defaults, secrets and the endpoint once per ``send``."""
        if self._closed:
            raise RuntimeError("HttpTransport is closed; create a new one to send more requests")
        headers = dict(request.headers)
        present = {name.lower() for name in headers}
        if request.body is not None and "content-type" not in present:
            headers["Content-Type"] = "application/json"
        if "accept" not in present:
            headers["Accept"] = "text/event-stream" if request.stream else "application/json"
        secrets = collect_secrets(request.headers, request.secrets, request.url)
        known = self._urls.get((request.url, secrets))
        if known is None:
            url = yarl.URL(request.url)
            endpoint = f"{url.scheme}://{url.host}:{url.port}"
            known = self._urls[(request.url, secrets)] = (
                url,
                endpoint,
                redact_url(request.url, secrets),
            )
        t = request.timeout or self.timeouts
        timeout = self._timeouts.get(t)
        if timeout is None:
            timeout = self._timeouts[t] = aiohttp.ClientTimeout(
                total=t.total, sock_connect=t.connect, sock_read=t.read
            )
        return _Exchange(
            request=request,
            headers=headers,
            secrets=secrets,
            url=known[0],
            shown_url=known[2],
            endpoint=known[1],
            timeout=timeout,
            # unique per send: this transport's random prefix and a count (32 hex digits)
            exchange_id=f"{self._id_prefix}{next(self._ids):016x}",
        )

    async def _attempt(self, ex: _Exchange) -> _Raw:
        """One try: wait for a connection to the origin, send, read the whole body."""
        session = self.pool.session()
        async with self.pool.gate(ex.endpoint):
            t0 = time.monotonic()
            url, method, sent, body = ex.url, ex.request.method, ex.headers, ex.request.body
            hops = 0
            while True:
                async with session.request(
                    method, url, headers=sent, data=body, timeout=ex.timeout, allow_redirects=False
                ) as resp:
                    location = resp.headers.get("Location")
                    if resp.status not in REDIRECTS or location is None:
                        return await self._read(ex, resp, t0)
                if hops == MAX_REDIRECTS:
                    raise aiohttp.TooManyRedirects(resp.request_info, resp.history)
                hops += 1
                # a header dropped on leaving the origin stays dropped, even if a later hop
                # leads back to it
                url, method, sent, body = next_hop(url, resp.status, location, method, sent, body)

    async def _read(self, ex: _Exchange, resp: aiohttp.ClientResponse, t0: float) -> _Raw:
        """The whole reply of one response, with its timings measured from ``t0``; at most
        ``Limits.max_reply_bytes`` of it (``_too_large`` past that)."""
        headers_s = time.monotonic() - t0
        first_byte_s: float | None = None
        chunks: list[bytes] = []
        cap, read = self.limits.max_reply_bytes, 0
        declared = resp.content_length
        if declared is not None and declared > cap:
            resp.close()
            raise self._too_large(ex, f"its Content-Length is {declared:,} bytes")
        content = resp.content
        async for chunk in content.iter_any():
            if first_byte_s is None:
                first_byte_s = time.monotonic() - t0
            read += len(chunk)
            arrived = getattr(content, "total_raw_bytes", 0)  # compressed, as received
            if read > cap or arrived > cap:
                resp.close()
                what = "its stream had not ended" if ex.request.stream else "it had not ended"
                counted = f"{max(read, arrived):,} bytes"
                raise self._too_large(ex, f"{what} after {counted}")
            chunks.append(chunk)
        headers: dict[str, str] = {}
        for name, value in resp.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return _Raw(
            status=resp.status,
            headers=headers,
            body=b"".join(chunks),
            first_byte_s=headers_s if first_byte_s is None else first_byte_s,
            total_s=time.monotonic() - t0,
        )

    def _too_large(self, ex: _Exchange, what: str) -> ContractViolation:
        """The error of a reply past ``Limits.max_reply_bytes`` (``what``: how it showed)."""
        cap = self.limits.max_reply_bytes
        shown = f"{cap / 2**20:.4g} MiB" if cap >= 2**20 else f"{cap:,} bytes"
        return ContractViolation(
            f"{ex.request.method} {ex.shown_url}: the reply is larger than the cap of "
            f"{shown} ({what}), so it was not read further and is not believed; "
            + fill("raise the cap ({max_reply_mib}) if this server's replies are meant to be")
            + " this large",
            path="body",
            expected=f"<= {cap} bytes",
            server=ex.endpoint,
        )

    @staticmethod
    def _redact_text(ex: _Exchange, text: str) -> str:
        """Free text (an exception's message) with the request's URL shown redacted."""
        for form in (ex.request.url, str(ex.url)):
            text = text.replace(form, ex.shown_url)
        return redact(text, ex.secrets)

    def _say_capped(self, ex: _Exchange, asked: float) -> None:
        """Say (a warning the first time per endpoint, then at info) that a Retry-After was cut."""
        level = logging.INFO if ex.endpoint in self._capped else logging.WARNING
        self._capped.add(ex.endpoint)
        logger.log(
            level,
            "%s asked to wait %g s before a retry (Retry-After); waiting the cap of %g s "
            "instead (raise retry_after_max_s in the model's config to wait longer)",
            ex.shown_url,
            asked,
            self.limits.retry_after_max_s,
        )

    def _away(self, ex: _Exchange, how: str | None, down_since: float | None) -> float | None:
        """When this request first found the endpoint away (``how``: it refuses connections,
        or a gateway in front of it answers 502/504), while the endpoint, which has answered
        before, is within ``outage_s`` of that: a server being restarted; else None."""
        if how is None or ex.endpoint not in self._answered or ex.request.failover:
            return None
        now = self._clock()
        since = now if down_since is None else down_since
        if ex.endpoint not in self._outages:
            self._outages[ex.endpoint] = now
            logger.warning(
                "%s %s after answering before (a restart?); requests wait for it up to "
                "outage_s=%g s each",
                ex.endpoint,
                how,
                self.limits.outage_s,
            )
        return since if now - since < self.limits.outage_s else None

    async def _pause(
        self, ex: _Exchange, attempt: int, tries: Tries, reason: str, wait: float | None
    ) -> None:
        """Log the retry and sleep the backoff."""
        delay = backoff_delay(attempt, self.limits, self._random, wait)
        if tries.outage:  # riding out an outage (``_away``): not one of the retries
            reason += (
                f"; the server answered before, so it is waited for up to "
                f"outage_s={self.limits.outage_s:g} s"
            )
        logger.info(
            "retrying %s %s in %.2f s: attempt %d failed (%s; %d of %d retries spent)",
            ex.request.method,
            ex.shown_url,
            delay,
            attempt,
            reason,
            tries.retried,
            self.limits.retries,
        )
        await self._sleep(delay)

    def _status_error(self, ex: _Exchange, raw: _Raw, attempts: int) -> TransportError:
        """The error raised when 429/5xx outlasted the retries."""
        busy = "overloaded" if raw.status in ex.request.overload else "rate-limiting"
        fix = fill(
            f"the server is {busy}; lower the concurrency ({{concurrency_limit}}) or raise the "
            "retries ({retries})"
            if raw.status == 429 or raw.status in ex.request.overload
            else "check the server's logs, or raise the retries ({retries})"
        )
        return TransportError(
            f"{ex.request.method} {ex.shown_url} answered HTTP {raw.status} on "
            f"{_plural(attempts)} (body: {excerpt(raw.body, ex.secrets)!r}); {fix}",
            status=raw.status,
            attempts=attempts,
            server=ex.endpoint,
            received=raw.status,
        )

    def _log_wire(
        self,
        ex: _Exchange,
        attempt: int,
        *,
        raw: _Raw | None = None,
        error: str | None = None,
        total_s: float = 0.0,
    ) -> None:
        """Append one attempt to the wire log, if there is one."""
        if self.wire_log is None:
            return
        self.wire_log.record(
            exchange_id=ex.exchange_id,
            attempt=attempt,
            method=ex.request.method,
            url=ex.request.url,
            request_headers=ex.headers,
            request_body=ex.request.body,
            secrets=ex.secrets,
            status=None if raw is None else raw.status,
            reply_headers=None if raw is None else raw.headers,
            reply_body=None if raw is None else raw.body,
            error=error,
            timings=(
                {"first_byte_s": raw.first_byte_s, "total_s": raw.total_s}
                if raw is not None
                else {"total_s": total_s}
            ),
        )
