"""Error envelopes of every wire, turned into the one taxonomy.

``server_message`` finds the server's own words in any envelope seen on the seven wires: OpenAI's
and vLLM's ``{"error": {"message", ...}}``, vLLM's bare ``{"error": "Unauthorized"}``, the flat
``{"object": "error", "message", ...}``, FastAPI's ``{"detail": ...}``, Anthropic's
``{"type": "error", "error": {"type", "message"}}`` and Google's ``{"error": {"code", "message",
"status"}}`` (wire reference 0.4). ``http_error`` makes the typed error of a non-2xx reply.
"""

from __future__ import annotations

import msgspec

from ..errors import ServerRejected, SievalError, TransportError

__all__ = ["http_error", "message_kind", "server_message"]


def server_message(body: bytes) -> str:
    """The server's own message from any known error envelope, else the body's text."""
    try:
        data = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):  # not JSON, or too deep to read as JSON
        text = body.decode("utf-8", "replace").strip()
        return text[:500] if text else "(empty body)"
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return msgspec.json.encode(data).decode()[:500]


_CLASSES = (
    (
        "context_overflow",
        ("maximum context length", "max_model_len", "context length", "maximum allowed length"),
    ),
    ("top_k_cap", ("greater than max allowed",)),
    # vLLM: "does not exist"; Google: "models/x is not found for API version v1beta";
    # LiteLLM 1.108.7: "Invalid model name passed in model=x"
    ("unknown_model", ("does not exist", "is not found for api version", "invalid model name")),
    # Google: "API key not valid"; LiteLLM 1.108.7 without a database answers a wrong key with a
    # 400 "No connected db." (it looks a key that is not the master key up in its database)
    ("key_refused", ("api key not valid", "no connected db", "authentication error")),
)


def message_kind(message: str) -> str | None:
    """A coarse class for a server message (``context_overflow``, ``top_k_cap``, ...), or None.

    vLLM's wording changed across versions (wire reference 7.6), so the match is loose.
    """
    low = message.lower()
    for name, needles in _CLASSES:
        if any(needle in low for needle in needles):
            return name
    return None


def http_error(dialect: str, status: int, body: bytes) -> SievalError:
    """The typed error for a non-2xx reply (429 and 5xx reach here only when retries are off)."""
    message = server_message(body)
    kind = message_kind(message)
    hint = f" [{kind}]" if kind else ""
    if 400 <= status < 500 and status != 429:
        return ServerRejected(
            f"{dialect}: the server rejected the request (HTTP {status}){hint}: {message}",
            status=status,
            server_message=message,
            dialect=dialect,
            path=kind,
        )
    return TransportError(
        f"{dialect}: the server failed (HTTP {status}): {message}", status=status, dialect=dialect
    )
