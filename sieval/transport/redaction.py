"""Redaction: secrets never reach logs, the wire log or error messages.

``redact`` works on any text, ``redact_headers`` on header maps, ``redact_url`` on URLs
(userinfo passwords and key-like query parameters), ``redact_json`` on decoded JSON.
``collect_secrets`` adds the values of auth headers and key-like query parameters to the
secrets a request declared, so a dialect that forgets one still leaks nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "SENSITIVE_HEADERS",
    "collect_secrets",
    "redact",
    "redact_headers",
    "redact_json",
    "redact_url",
]

REDACTED = "[REDACTED]"

SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
    }
)
"""Header names (lower case) whose values are always blanked."""

_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_QUERY_KEYS = r"key|api[_-]?key|apikey|token|access[_-]?token|auth|password|secret|sig|signature"
_QUERY = re.compile(rf"(?i)([?&](?:{_QUERY_KEYS})=)([^&#]*)")
_USERINFO = re.compile(r"(//[^/?#@:]*:)([^/?#@]*)@")
_MIN_DERIVED = 8  # shorter auth values (e.g. vLLM's "EMPTY") would blank ordinary words


def _ordered(secrets: Iterable[str]) -> list[str]:
    """Non-empty secrets, longest first so a secret inside another is not half-replaced."""
    return sorted({s for s in secrets if s}, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and every ``Bearer <token>`` replaced by ``[REDACTED]``."""
    for secret in _ordered(secrets):
        text = text.replace(secret, REDACTED)
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """``url`` with secrets, userinfo passwords and key-like query values redacted."""
    url = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", url)
    url = _QUERY.sub(lambda m: m.group(1) + REDACTED, url)
    return redact(url, secrets)


def redact_headers(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """A copy of ``headers`` with auth headers and any value holding a secret blanked."""
    ordered = _ordered(secrets)
    out: dict[str, str] = {}
    for name, value in headers.items():
        hidden = name.lower() in SENSITIVE_HEADERS or any(s in value for s in ordered)
        out[name] = REDACTED if hidden else redact(value)
    return out


def redact_json(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Decoded JSON with every string (keys included) passed through ``redact``."""
    ordered = _ordered(secrets)
    if isinstance(value, str):
        return redact(value, ordered)
    if isinstance(value, list):
        return [redact_json(item, ordered) for item in value]
    if isinstance(value, dict):
        return {redact(str(k), ordered): redact_json(v, ordered) for k, v in value.items()}
    return value


def collect_secrets(
    headers: Mapping[str, str], secrets: Iterable[str] = (), url: str = ""
) -> tuple[str, ...]:
    """``secrets`` plus auth header values and key-like query values found in ``url``."""
    found = list(secrets)
    for name, value in headers.items():
        if name.lower() in SENSITIVE_HEADERS:
            words = value.split(None, 1)  # "Bearer <token>", "Basic <token>" or "<token>"
            found.extend(v.strip() for v in (value, *words[-1:]) if len(v.strip()) >= _MIN_DERIVED)
    found.extend(m.group(2) for m in _QUERY.finditer(url) if len(m.group(2)) >= _MIN_DERIVED)
    return tuple(_ordered(found))
