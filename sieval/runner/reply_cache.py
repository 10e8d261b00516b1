"""An opt-in cache of replies across runs (``--cache DIR``), as lm-eval's ``--use_cache`` and
Inspect's ``cache=``.

A reply is kept under the sha256 of the server's serving fingerprint (engine, version, model,
dtype, wire, and the digest of its numerics) and the exact request sent (method, path, body
bytes): the same body to a server whose numerics differ is another key, so a cached reply is
never served across a numerics change. Without a fingerprint (the serving checks off) nothing is
cached. Only 200 replies are kept; a cached reply goes through the same checks as a sent one
(it is handed to the dialect's reader like any other), and the run counts and names its hits.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from ..serving.fingerprint import Fingerprint
from ..store.identity import canonical_json
from ..transport import HttpReply, HttpRequest, Transport

__all__ = ["ReplyCache", "fingerprint_key"]


class _Kept(msgspec.Struct, frozen=True):
    status: int
    headers: dict[str, str]
    body: bytes


def fingerprint_key(fingerprint: Fingerprint) -> str:
    """What of a fingerprint keys the cache: everything that names the server and its numerics
    (not its repeat noise, which varies between two measurements of one server)."""
    named = {
        "engine": fingerprint.engine,
        "version": fingerprint.version,
        "model": fingerprint.model,
        "dtype": fingerprint.dtype,
        "dialect": fingerprint.dialect,
        "probe": fingerprint.probe,
        "digest": fingerprint.digest,
    }
    return hashlib.sha256(canonical_json(named).encode()).hexdigest()


class ReplyCache:
    """A ``Transport`` that answers from ``directory`` what it kept for this fingerprint and
    request, and sends (then keeps) the rest."""

    def __init__(self, inner: Transport, directory: Path, fingerprint: Fingerprint) -> None:
        self.inner = inner
        self.directory = directory
        self.key = fingerprint_key(fingerprint)
        self.hits = 0
        self.sent = 0
        self.kept = 0

    def path(self, request: HttpRequest) -> Path:
        where = urlsplit(request.url)
        target = where.path + (f"?{where.query}" if where.query else "")
        digest = hashlib.sha256(
            f"sieval-reply-cache-1\n{self.key}\n{request.method} {target}\n".encode()
            + (request.body or b"")
        ).hexdigest()
        return self.directory / digest[:2] / f"{digest}.json"

    async def send(self, request: HttpRequest) -> HttpReply:
        path = self.path(request)
        try:
            kept = msgspec.json.decode(path.read_bytes(), type=_Kept)
        except (OSError, msgspec.ValidationError, msgspec.DecodeError):
            kept = None  # not kept, or unreadable: sent again (and kept anew)
        if kept is not None:
            self.hits += 1
            return HttpReply(status=kept.status, headers=kept.headers, body=kept.body)
        reply = await self.inner.send(request)
        self.sent += 1
        if reply.status == 200:
            self._keep(path, _Kept(status=reply.status, headers=reply.headers, body=reply.body))
        return reply

    def _keep(self, path: Path, kept: _Kept) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_suffix(f".{os.getpid()}.part")
            part.write_bytes(msgspec.json.encode(kept))
            os.replace(part, path)  # whole or absent: a reader never sees half a reply
            self.kept += 1
        except OSError:
            return  # a cache that cannot be written costs the run nothing

    def summary(self, label: str) -> str:
        """The line the run says of this model's cache."""
        total = self.hits + self.sent
        return (
            f"cache {self.directory}: {label}: {self.hits} of {total} replies from the cache, "
            f"{self.sent} sent ({self.kept} kept), keyed by its serving fingerprint"
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
