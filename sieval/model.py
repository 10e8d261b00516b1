"""``Model`` = dialect + transport + limits: ``await model.run(Request) -> Response``.

Typical use, one ``Model`` per endpoint for the whole run:

    async with Model(dialect="openai_completions", base_url="http://127.0.0.1:8000",
                     model_id="gemma-3-270m") as model:
        response = await model.run(Request.completion("2+2=", sampling=Sampling(max_tokens=4)))

Every active request leaf is decided before a byte is sent (``Refused`` otherwise), the reply is
checked before it is believed (``ContractViolation``), and the response carries the decision
ledger, the redacted body sent, and timings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from .dialects.plane import Dialect, Lowered, lift, lower
from .dialects.registry import get_dialect
from .errors import ConfigError, SievalError
from .ir.defaults import with_defaults
from .ir.request import Request
from .ir.response import Response, Timings
from .transport import HttpRequest, HttpTransport, Limits, Timeouts, Transport, WireLog
from .transport.redaction import redact_json, redact_url

__all__ = ["Model"]


class Model:
    """One model behind one endpoint, reached through one dialect."""

    def __init__(
        self,
        *,
        dialect: str | Dialect,
        base_url: str,
        model_id: str,
        api_key: str | None = None,
        concurrency: int = 32,
        limits: Limits | None = None,
        timeouts: Timeouts | None = None,
        request_defaults: Mapping[str, Any] | None = None,
        wire_log: WireLog | str | Path | None = None,
        transport: Transport | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(
                f"concurrency_limit must be >= 1, got {concurrency}", path="concurrency_limit"
            )
        self.dialect = get_dialect(dialect) if isinstance(dialect, str) else dialect
        self.base_url = base_url.rstrip("/")
        self.model_id = model_id
        self._api_key = api_key
        self._secrets = (api_key,) if api_key else ()
        self.request_defaults = dict(request_defaults or {})
        self.headers = dict(headers or {})
        self.timeouts = timeouts or Timeouts()
        self._transport = transport or HttpTransport(
            timeouts=self.timeouts,
            limits=limits or Limits(concurrency=concurrency),
            wire_log=wire_log,
        )
        self._slots = asyncio.Semaphore(concurrency)
        self.concurrency = concurrency

    def __repr__(self) -> str:
        return (
            f"Model(dialect={self.dialect.id!r}, base_url={redact_url(self.base_url)!r}, "
            f"model_id={self.model_id!r})"
        )

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._transport.aclose()

    def prepare(self, request: Request) -> tuple[Request, Lowered]:
        """The request with this model's defaults applied, and its lowering (pure, no I/O)."""
        request = with_defaults(request, self.request_defaults)
        return request, lower(self.dialect, request, self.model_id)

    async def run(self, request: Request) -> Response:
        """Decide, send, check. Raises ``Refused`` before any I/O, or the error the reply earns."""
        _, lowered = self.prepare(request)
        timeout: Timeouts | None = None
        if request.scheduling.timeout_s is not msgspec.UNSET:
            budget = float(request.scheduling.timeout_s)
            timeout = msgspec.structs.replace(self.timeouts, total=budget, read=budget)
        headers = dict(self.headers)
        if self._api_key:
            headers.update(self.dialect.auth_headers(self._api_key))
        http = HttpRequest(
            url=self.base_url + lowered.route,
            method=lowered.method,
            headers=headers,
            body=msgspec.json.encode(lowered.body),
            stream=lowered.stream,
            secrets=self._secrets,
            timeout=timeout,
        )
        started = time.time()
        t0 = time.perf_counter()
        try:
            async with self._slots:
                queued = time.perf_counter() - t0
                reply = await self._transport.send(http)
            response = lift(self.dialect, lowered, reply.status, reply.headers, reply.body)
        except SievalError as exc:
            if exc.server is None:
                exc.server = redact_url(self.base_url, self._secrets)
            raise
        completed: Response = msgspec.structs.replace(
            response,
            requested_model=self.model_id,
            ledger=lowered.ledger,
            wire_body=redact_json(lowered.body, self._secrets) if self._secrets else lowered.body,
            timings=Timings(
                started=started,
                queued_s=queued,
                first_byte_s=reply.timings.first_byte_s,
                total_s=time.perf_counter() - t0,
                attempts=reply.attempts,
            ),
        )
        return completed
