"""One model served by several replicas: each request to the least-loaded healthy one.

``ReplicaSet`` holds the replicas' base URLs and, per replica, its requests in flight and whether
it is still in the run. ``ReplicaTransport`` is a transport like any other (one ``send``): it
takes a request built on the model's base URL (the first replica's), sends it to the replica
``ReplicaSet.acquire`` picks (the fewest in flight; ties go to the next in turn, starting from
``first``, so shards and concurrent runs spread over them), and names that replica on the reply.

A replica that cannot be reached (it refuses connections or drops them: a ``TransportError``
with no HTTP status) is taken out for the rest of the run, and the request is sent again to
another replica: a request is answered once or fails once, so nothing is lost and nothing is
scored twice (a sample's record is written after its requests are answered). A replica that
answers 429 or 5xx past its retries may be ill or may have been sent a request no server takes,
so the request goes to another replica first: if one answers it, the replicas that failed it are
taken out; if every replica left fails it with a status, the request fails with that error and
the replicas stay. When every replica is out, the request fails naming each replica's reason. A
timeout is the request's own (a long prompt), never the replica's: it fails the request, the
replica stays.

Budgets: the scheduler holds the model's one budget (``runner/endpoints.py``); with a per-replica
``cap`` no replica takes more than ``cap`` at once, and ``acquire`` waits for one to free.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import msgspec

from sieval.errors import TransportError, TransportTimeout
from sieval.transport.redaction import redact_url
from sieval.transport.types import HttpReply, HttpRequest, Transport

__all__ = ["Replica", "ReplicaSet", "ReplicaTransport"]

logger = logging.getLogger("sieval.transport")


@dataclass
class Replica:
    base: str
    """The replica's base URL (secrets kept: requests are sent to it)."""
    shown: str
    """``base`` redacted: what records and messages name."""
    in_flight: int = 0
    served: int = 0
    """Requests it answered."""
    out: str | None = None
    """Why it was taken out of the run; None while it is in."""


class ReplicaSet:
    """The replicas of one model and their load."""

    def __init__(
        self,
        bases: list[str],
        *,
        cap: int | None = None,
        first: int = 0,
        secrets: tuple[str, ...] = (),
    ) -> None:
        if not bases:
            raise ValueError("a ReplicaSet needs at least one base URL")
        self.replicas = [Replica(b.rstrip("/"), redact_url(b.rstrip("/"), secrets)) for b in bases]
        self.cap = cap
        self._turn = first % len(bases)
        self._changed = asyncio.Condition()

    def __len__(self) -> int:
        return len(self.replicas)

    @property
    def healthy(self) -> list[Replica]:
        return [r for r in self.replicas if r.out is None]

    async def acquire(self, tried: set[str]) -> Replica:
        """The least-loaded healthy replica not in ``tried`` (base URLs), counted in flight;
        with a cap, waits until one has room. ``TransportError`` when none is left."""
        async with self._changed:
            while True:
                left = [r for r in self.healthy if r.base not in tried]
                if not left:
                    raise self.none_left()
                order = self.replicas[self._turn :] + self.replicas[: self._turn]
                room = [
                    r for r in order if r in left and (self.cap is None or r.in_flight < self.cap)
                ]
                if room:
                    chosen = min(room, key=lambda r: r.in_flight)  # first of the least loaded
                    self._turn = (self.replicas.index(chosen) + 1) % len(self.replicas)
                    chosen.in_flight += 1
                    return chosen
                await self._changed.wait()

    async def release(self, replica: Replica, *, answered: bool) -> None:
        async with self._changed:
            replica.in_flight -= 1
            replica.served += answered
            self._changed.notify_all()

    async def take_out(self, replica: Replica, reason: str) -> None:
        """Take ``replica`` out of the run (its requests in flight fail over as they return)."""
        async with self._changed:
            if replica.out is None:
                replica.out = reason
                left = len(self.healthy)
                logger.warning(
                    "replica %s taken out of the run (%s); %d left", replica.shown, reason, left
                )
            self._changed.notify_all()

    def none_left(self) -> TransportError:
        """The error of a request no replica is left to answer."""
        said = "; ".join(f"{r.shown}: {r.out}" for r in self.replicas if r.out)
        return TransportError(
            f"every replica of the model failed ({said}); bring one back and resume the run",
            server=", ".join(r.shown for r in self.replicas),
        )


class ReplicaTransport:
    """Sends each request to a replica of ``replicas`` (see the module docstring)."""

    def __init__(self, inner: Transport, replicas: ReplicaSet, base: str) -> None:
        self.inner = inner
        self.replicas = replicas
        self.base = base.rstrip("/")
        """The base URL the requests are built on (the model's): replaced by the replica's."""

    async def send(self, request: HttpRequest) -> HttpReply:
        if not request.url.startswith(self.base):
            return await self.inner.send(request)  # not one of the model's routes
        path = request.url[len(self.base) :]
        tried: set[str] = set()
        # the replicas that failed this request with an HTTP status: out if another answers it
        suspects: list[tuple[Replica, TransportError]] = []
        while True:
            try:
                replica = await self.replicas.acquire(tried)
            except TransportError:
                if suspects:  # each replica left failed it with a status: the request's fault
                    raise suspects[-1][1] from None
                raise
            tried.add(replica.base)
            answered = False
            try:
                sent = msgspec.structs.replace(request, url=replica.base + path, failover=True)
                reply = await self.inner.send(sent)
                answered = True
            except TransportTimeout:
                raise  # the request's own budget, not the replica's health
            except TransportError as exc:
                if exc.status is None:  # not reached: the replica is down
                    await self.replicas.take_out(replica, exc.message)
                else:
                    suspects.append((replica, exc))
                continue
            finally:
                await self.replicas.release(replica, answered=answered)
            for failed, error in suspects:  # another replica answered what they failed
                await self.replicas.take_out(failed, error.message)
            return msgspec.structs.replace(reply, replica=replica.shown)

    async def aclose(self) -> None:
        await self.inner.aclose()
