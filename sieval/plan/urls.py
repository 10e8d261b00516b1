"""What a model entry's ``endpoint`` URL says: the base URL, the server's origin, the key it takes.

``base_url`` drops the ``/v1`` an OpenAI SDK user types; ``check_endpoint_url`` refuses what is not
an http(s) URL with a host; ``origin`` names the server (scheme, host, port) and the user and
password it is reached with, what ``endpoints.py`` groups entries by; ``provider_key`` reads a
provider's conventional key variable only for that provider's own host.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple
from urllib.parse import SplitResult, urlsplit

from ..errors import ConfigError
from ..setting_names import named, setting
from ..transport.redaction import redact_url

__all__ = [
    "PROVIDER_KEYS",
    "Origin",
    "base_url",
    "check_endpoint_url",
    "origin",
    "provider_key",
]


def base_url(endpoint: str) -> str:
    """``endpoint`` without a trailing slash or ``/v1``: OpenAI SDK and lm-eval users type
    ``http://host:8000/v1``, and every dialect adds its own path (``/v1/completions``)."""
    url = endpoint.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


PROVIDER_KEYS = {
    "api.openai.com": "OPENAI_API_KEY",
    "api.anthropic.com": "ANTHROPIC_API_KEY",
    "generativelanguage.googleapis.com": "GEMINI_API_KEY",
}
"""A provider's conventional key variable, read only for that provider's own host."""


def provider_key(endpoint: str) -> str | None:
    """The conventional key for ``endpoint``'s host (``OPENAI_API_KEY`` for api.openai.com),
    else None: a key is never sent to a host it was not meant for."""
    try:
        host = (_host_part(endpoint).hostname or "").lower()
    except ValueError:  # not a URL (check_endpoint_url says why)
        return None
    name = PROVIDER_KEYS.get(host)
    return os.environ.get(name) or None if name else None


def _host_part(endpoint: str) -> SplitResult:
    """``endpoint``'s host and port as a URL of their own: the userinfo is no part of them (and
    a redacted password holds brackets, which ``urlsplit`` would read as an IPv6 host)."""
    netloc = re.split(r"[/?#]", endpoint.partition("://")[2], maxsplit=1)[0]
    return urlsplit("http://" + netloc.rpartition("@")[2])


def check_endpoint_url(endpoint: str, *, where: str = "") -> None:
    """Refuse an endpoint that is not an http(s) URL with a host and a port in 0-65535
    (``ConfigError`` naming ``endpoint``; the URL shown with its password redacted)."""
    shown = redact_url(endpoint)
    if not endpoint.startswith(("http://", "https://")):
        guess = _with_scheme(endpoint)
        fix = (
            f": did you mean {setting('endpoint', redact_url(guess))}?"
            if guess is not None
            else "; write it as http://HOST:PORT"
        )
        raise ConfigError(
            f"{where}{named('endpoint')} {shown!r} is neither 'embedded' nor an http(s) URL{fix}",
            path="endpoint",
        )
    try:
        parts = _host_part(endpoint)
        host, _ = parts.hostname, parts.port  # .port raises when out of range
    except ValueError as exc:  # an unclosed '[', a port that is not a number or out of range
        raise ConfigError(
            f"{where}{named('endpoint')} {shown!r} is not a valid URL ({exc}); write it as "
            "http://HOST:PORT (an IPv6 host in brackets: http://[::1]:8000), port 0-65535",
            path="endpoint",
        ) from None
    if not host:
        raise ConfigError(
            f"{where}{named('endpoint')} {shown!r} has no host; write it as http://HOST:PORT",
            path="endpoint",
        )


def _with_scheme(endpoint: str) -> str | None:
    """``http://`` + ``endpoint`` when that is a URL with a host (``localhost:8000``,
    ``10.0.0.5:8000/v1``); None for anything else (a typo of a word, an ``ftp://`` URL)."""
    if "://" in endpoint or not endpoint.strip():
        return None
    guess = "http://" + endpoint.strip()
    try:
        parts = _host_part(guess)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    return guess if host and (port is not None or "." in host or host == "localhost") else None


class Origin(NamedTuple):
    """The server a URL reaches, and the user and password in it."""

    scheme: str
    host: str
    port: int
    userinfo: str


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(endpoint: str) -> Origin:
    """``endpoint``'s scheme, host and port (lower-case, the scheme's port when none is written)
    and its user and password (``""`` when none): ``http://H`` and ``http://h:80/v1`` are one
    server. The URL is one ``check_endpoint_url`` accepts."""
    scheme = endpoint.partition("://")[0].lower()
    parts = _host_part(endpoint)
    netloc = re.split(r"[/?#]", endpoint.partition("://")[2], maxsplit=1)[0]
    host = parts.hostname or ""
    port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    return Origin(scheme, f"[{host}]" if ":" in host else host, port, netloc.rpartition("@")[0])
