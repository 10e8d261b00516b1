"""The servers a run reaches: one owner per endpoint, holding its budget and its connections.

An endpoint is what identifies a server to a client: the scheme, host and port of a model entry's
base URL, and the credentials it is reached with (the API key; a user and password in the URL).
Every entry that reaches the same endpoint (two labels, or two dialects, on one vLLM) shares one
``Endpoint``, which holds:

- ``budget``: the requests in flight the server is given, whichever of its entries sends them.
  When the entries name different ``concurrency_limit``s it is the largest: the limit describes
  what the server can take, the entry that says more is the one that knows it, and no entry is
  held below what it asked for. The run says so once (``Endpoints.notes``). A shard's entries
  carry their share of each limit (``shards.py``), so its endpoints get the share of the largest.
- ``slots``: the one semaphore of those requests. The scheduler takes a request's slot here
  before a slot of the run's global cap (``EvalConfig.concurrency``, the scheduler's own), so a
  saturated server never holds global slots idle.
- ``pool``: the connections every transport to the server shares, at most ``connections`` of
  them: the endpoint's share of the process's descriptors (``limits.py``); requests beyond it
  wait in the pool, never on a connection the process cannot open.

Every embedded entry starts its own reference server, so each is its own endpoint.

A model served by several replicas (``endpoint: [URL, ...]``) is one endpoint: its budget is
the model's one ``concurrency_limit`` (or ``replica_concurrency_limit`` times the replicas), its
pool holds each replica's connections, and its transports send each request to the
least-loaded healthy replica (``transport/replicas.py``), starting from replica ``first``
(a shard's index: shards spread over the replicas).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from ..plan.config import EMBEDDED
from ..plan.plan import PlannedModel
from ..plan.urls import base_url, origin
from ..transport import HttpTransport, Limits, Pool, Timeouts, Transport, WireLog, redact_url
from ..transport.replicas import ReplicaSet, ReplicaTransport
from .limits import Claim, connection_budgets

__all__ = ["Endpoint", "EndpointKey", "Endpoints", "endpoint_key"]


@dataclass(frozen=True)
class EndpointKey:
    """What identifies a server to the run (never written anywhere: it holds the key)."""

    origin: str
    """``scheme://host:port`` (the scheme's port when none is written), or ``embedded LABEL``."""
    credentials: tuple[str, ...] = field(default=(), repr=False)
    """The API key and the URL's user and password: two accounts on one host are two servers."""


def endpoint_key(pm: PlannedModel) -> EndpointKey:
    """The endpoint ``pm`` reaches."""
    if pm.config.endpoint == EMBEDDED:
        return EndpointKey(f"{EMBEDDED} {pm.label}")
    if len(pm.config.replicas) > 1:
        found = [origin(base_url(url)) for url in pm.config.replicas]
        where = ", ".join(f"{a.scheme}://{a.host}:{a.port}" for a in found)
        return EndpointKey(f"replicas {where}", (*(a.userinfo for a in found), pm.api_key or ""))
    at = origin(pm.config.base_url)
    return EndpointKey(f"{at.scheme}://{at.host}:{at.port}", (at.userinfo, pm.api_key or ""))


class Endpoint:
    """One server of a run: its budget, its slots and its pool, shared by its models."""

    def __init__(self, key: EndpointKey, models: list[PlannedModel], connections: int) -> None:
        self.key = key
        self.models = models
        """The entries that reach it, in config order."""
        self.budget = _budget(models)
        """Requests in flight at once, all its models together."""
        self.slots = asyncio.Semaphore(self.budget)
        """Taken by each request for its whole exchange, retries included."""
        self.pool = Pool(connections)
        """The connections every transport to the server shares (``connections`` of them: its
        share of the process's descriptors, at most ``budget``)."""
        first = models[0].config
        self.replicas: ReplicaSet | None = None
        """A model served by several replicas: them, their load and health; else None."""
        if len(first.replicas) > 1:
            secrets = tuple(pm.api_key for pm in models if pm.api_key)
            self.replicas = ReplicaSet(
                [base_url(url) for url in first.replicas],
                cap=first.replica_concurrency_limit,
                secrets=secrets,
            )

    @property
    def labels(self) -> list[str]:
        return [pm.label for pm in self.models]

    def transport(
        self,
        *,
        limits: Limits | None = None,
        timeouts: Timeouts | None = None,
        wire_log: WireLog | str | Path | None = None,
    ) -> Transport:
        """A transport on this endpoint's pool, with its own retries, timeouts and wire log (one
        model's, closed with it); the pool stays open until ``aclose``."""
        http = HttpTransport(limits=limits, timeouts=timeouts, wire_log=wire_log, pool=self.pool)
        if self.replicas is None:
            return http
        return ReplicaTransport(http, self.replicas, self.models[0].config.base_url)

    async def aclose(self) -> None:
        await self.pool.aclose()


class Endpoints:
    """The endpoints of a run's models, each model's by its label, and what the run says of them
    (a budget shared by entries, a budget above the open-file limit)."""

    def __init__(self, models: list[PlannedModel], *, fd_limit: int | None = None) -> None:
        groups: dict[EndpointKey, list[PlannedModel]] = {}
        for pm in models:
            groups.setdefault(endpoint_key(pm), []).append(pm)
        claims = [
            Claim(_who(group), _budget(group), _embedded(key)) for key, group in groups.items()
        ]
        budgets = connection_budgets(claims, limit=fd_limit)
        self.all = [
            Endpoint(key, group, connections)
            for (key, group), (connections, _) in zip(groups.items(), budgets, strict=True)
        ]
        self._by_label = {pm.label: ep for ep in self.all for pm in ep.models}
        self.notes = [_shared(ep) for ep in self.all if len(ep.models) > 1]
        self.notes += [note for _, note in budgets if note]
        """One line per endpoint its entries share, and per endpoint the open-file limit caps."""

    def __getitem__(self, label: str) -> Endpoint:
        return self._by_label[label]

    async def aclose(self) -> None:
        for ep in self.all:
            await ep.aclose()


def _budget(models: list[PlannedModel]) -> int:
    """The largest ``concurrency_limit`` of the entries on one server: its budget (replicas
    with a ``replica_concurrency_limit``: that times the replicas)."""
    first = models[0].config
    if len(first.replicas) > 1 and first.replica_concurrency_limit is not None:
        return first.replica_concurrency_limit * len(first.replicas)
    return max(pm.config.concurrency_limit for pm in models)


def _embedded(key: EndpointKey) -> bool:
    return key.origin.startswith(f"{EMBEDDED} ")


def _who(models: list[PlannedModel]) -> str:
    names = ", ".join(repr(pm.label) for pm in models)
    return f"model {names}" if len(models) == 1 else f"models {names}"


def _shared(ep: Endpoint) -> str:
    """The note of an endpoint two or more entries reach: the budget they share, and whose."""
    limits = {pm.config.concurrency_limit for pm in ep.models}
    said = (
        ", ".join(f"{pm.label!r} ({pm.config.concurrency_limit})" for pm in ep.models)
        if len(limits) > 1
        else ", ".join(repr(pm.label) for pm in ep.models)
    )
    which = (
        "the largest concurrency_limit of theirs" if len(limits) > 1 else "their concurrency_limit"
    )
    return (
        f"models {said} reach one server ({redact_url(ep.models[0].config.base_url)}): they share "
        f"its budget of {ep.budget} requests in flight ({which})"
    )
