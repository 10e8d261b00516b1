"""``get_json``: the GET probes (``/health``, ``/version``, ``/v1/models``) decoded as JSON."""

from __future__ import annotations

from typing import Any

import msgspec

from sieval.errors import ContractViolation, ServerRejected
from sieval.transport.client import excerpt
from sieval.transport.config import Timeouts
from sieval.transport.redaction import collect_secrets, redact_url
from sieval.transport.types import HttpRequest, Transport

__all__ = ["get_json"]


async def get_json(
    transport: Transport,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    secrets: tuple[str, ...] = (),
    timeout: Timeouts | None = None,
) -> Any:
    """GET ``url`` and decode its JSON body (``None`` for an empty 2xx body).

    Raises ``ServerRejected`` for a 4xx, ``ContractViolation`` for any other non-2xx
    status or a body that is not JSON, and lets ``TransportError`` through.
    """
    request = HttpRequest(
        method="GET", url=url, headers=headers or {}, secrets=secrets, timeout=timeout
    )
    reply = await transport.send(request)
    hidden = collect_secrets(request.headers, secrets, url)
    shown = redact_url(url, hidden)
    text = excerpt(reply.body, hidden)
    if 400 <= reply.status < 500:
        raise ServerRejected(
            f"GET {shown} was rejected with HTTP {reply.status} ({text!r}); "
            "check the URL and the API key",
            status=reply.status,
            server_message=text,
            path=shown,
        )
    if not 200 <= reply.status < 300:
        raise ContractViolation(
            f"GET {shown} answered HTTP {reply.status} ({text!r}); expected a 2xx JSON reply, "
            "check that the URL points at the API",
            path=shown,
            expected="2xx",
            received=reply.status,
        )
    if not reply.body.strip():
        return None
    try:
        return msgspec.json.decode(reply.body)
    except RecursionError as exc:
        raise ContractViolation(
            f"GET {shown} answered with JSON nested deeper than the decoder follows (about "
            "1,000 levels), which no API answers; check that the URL points at the API",
            path=shown,
            expected="JSON",
            received=text,
        ) from exc
    except msgspec.DecodeError as exc:
        raise ContractViolation(
            f"GET {shown} answered with a body that is not JSON ({text!r}); "
            "check that the URL points at the API",
            path=shown,
            expected="JSON",
            received=text,
        ) from exc
