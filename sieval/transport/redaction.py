"""Redaction: secrets never reach logs, the wire log or error messages.

``redact`` works on any text, ``redact_headers`` on header maps, ``redact_url`` on URLs
(userinfo and key-like query parameters), ``redact_json`` on decoded JSON.
``collect_secrets`` adds the values of auth headers, the URL's userinfo and key-like query
parameters to the secrets a request declared, so a dialect that forgets one still leaks nothing.

URLs are parsed, not pattern-matched: the authority runs from ``//`` to the first ``/``, ``?``
or ``#`` and its userinfo ends at the *last* ``@`` (RFC 3986, and how yarl and ``urllib`` read
it), so a raw ``@`` inside a password stays inside the redacted part. ``user:password@`` keeps
the user (``user:[REDACTED]@``); a lone ``token@`` becomes ``[REDACTED]@``. Either way the
shown URL holds ``REDACTED``, which is how a run directory knows its stored endpoint lost a
secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

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
_QUERY_KEYS = frozenset(
    {"key", "apikey", "token", "accesstoken", "auth", "password", "secret", "sig", "signature"}
)
"""Query parameter names (lower case, ``-`` and ``_`` removed) whose values are secret."""
_MIN_DERIVED = 8  # shorter auth values (e.g. vLLM's "EMPTY") would blank ordinary words
_MIN_USERINFO = 4  # a URL's own userinfo is always redacted; in other text only from this length


def _ordered(secrets: Iterable[str]) -> list[str]:
    """Non-empty secrets, longest first so a secret inside another is not half-replaced."""
    return sorted({s for s in secrets if s}, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and every ``Bearer <token>`` replaced by ``[REDACTED]``."""
    for secret in _ordered(secrets):
        text = text.replace(secret, REDACTED)
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


class _Parts:
    """A URL cut into ``head`` (scheme and ``//``), ``userinfo`` (``None`` if absent), ``host``
    (host and port), ``path``, ``query`` (``None`` if absent) and ``tail`` (``#`` onwards)."""

    def __init__(self, url: str) -> None:
        scheme, sep, rest = url.partition("//")
        if not sep or any(c in scheme for c in "/?#"):  # no authority: all path and query
            scheme, sep, rest = "", "", url
        self.head = scheme + sep
        rest, hash_, fragment = rest.partition("#")
        self.tail = hash_ + fragment
        end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        if not sep:
            end = 0
        userinfo, at, self.host = rest[:end].rpartition("@")
        self.userinfo: str | None = userinfo if at else None
        self.path, q, query = rest[end:].partition("?")
        self.query: str | None = query if q else None

    def secrets(self) -> list[str]:
        """The password, or a lone token, of the userinfo (as written and percent-decoded)."""
        if self.userinfo is None:
            return []
        user, colon, password = self.userinfo.partition(":")
        value = password if colon else user
        return [v for v in {value, unquote(value)} if v and v != REDACTED]

    def secret_params(self) -> list[str]:
        """Values of key-like query parameters (as written and percent-decoded)."""
        found: list[str] = []
        for name, value in self._params():
            if value is not None and _secret_name(name):
                found.extend(v for v in {value, unquote(value)} if v)
        return found

    def _params(self) -> list[tuple[str, str | None]]:
        if self.query is None:
            return []
        out: list[tuple[str, str | None]] = []
        for piece in self.query.split("&"):
            name, eq, value = piece.partition("=")
            out.append((name, value if eq else None))
        return out

    def shown(self) -> str:
        """The URL with its userinfo secret and key-like query values replaced."""
        userinfo = ""
        if self.userinfo is not None:
            user, colon, _ = self.userinfo.partition(":")
            userinfo = (f"{user}:{REDACTED}" if colon else REDACTED) + "@"
        query = ""
        if self.query is not None:
            pieces = [
                name if value is None else f"{name}={REDACTED if _secret_name(name) else value}"
                for name, value in self._params()
            ]
            query = "?" + "&".join(pieces)
        return f"{self.head}{userinfo}{self.host}{self.path}{query}{self.tail}"


def _secret_name(name: str) -> bool:
    return unquote(name).lower().replace("-", "").replace("_", "") in _QUERY_KEYS


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """``url`` with its userinfo secret, key-like query values and ``secrets`` redacted.

    ``url`` is one URL, not text holding URLs (use ``redact`` with ``collect_secrets`` there).
    """
    return redact(_Parts(url).shown(), secrets)


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
    """``secrets`` plus auth header values, and the userinfo secret and key-like query values
    of ``url`` (each from a minimum length: a shorter one would blank ordinary words in text,
    while ``redact_url`` hides it in the URL itself whatever its length)."""
    found = list(secrets)
    for name, value in headers.items():
        if name.lower() in SENSITIVE_HEADERS:
            words = value.split(None, 1)  # "Bearer <token>", "Basic <token>" or "<token>"
            found.extend(v.strip() for v in (value, *words[-1:]) if len(v.strip()) >= _MIN_DERIVED)
    if url:
        parts = _Parts(url)
        found.extend(v for v in parts.secrets() if len(v) >= _MIN_USERINFO)
        found.extend(v for v in parts.secret_params() if len(v) >= _MIN_DERIVED)
    return tuple(_ordered(found))
