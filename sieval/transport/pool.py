"""``Pool``: the connections held open to servers, shared by every transport that sends through it.

One ``aiohttp.ClientSession``, opened on first use (inside the running loop), and a gate per
origin (scheme, host and port) that lets at most ``connections`` requests at a time onto the
wire, so the origin never holds more than ``connections`` connections, idle pooled ones included
(one request holds one connection; an idle one is reused before a new one is opened). The gate
queues a request before aiohttp starts its clock, so waiting for a connection is not charged to
``Timeouts.total``.

A pool bounds connections, not the work asked of a server: how many requests are in flight is
its owner's business. An ``HttpTransport`` made without a pool opens its own, of
``Limits.concurrency`` connections per origin (a ``Model`` used alone); in a run, the
``HttpTransport``s of every model that reaches one server share that server's pool, sized by the
process's descriptor budget (``sieval.runner.endpoints``).
"""

from __future__ import annotations

import asyncio

import aiohttp

__all__ = ["Pool"]


class Pool:
    """An aiohttp session and a connection gate per origin, closed by ``aclose``."""

    def __init__(self, connections: int, *, trust_env: bool = False, user_agent: str = "sieval"):
        self.connections = connections
        """Requests on the wire at once per origin, and so its open connections."""
        self._trust_env = trust_env
        self._user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None
        self._gates: dict[str, asyncio.Semaphore] = {}

    @property
    def opened(self) -> bool:
        """Whether the session is open (it opens on the first request)."""
        return self._session is not None

    def session(self) -> aiohttp.ClientSession:
        """The session, opened on first use; its connector leaves the bound to the gates."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                trust_env=self._trust_env,
                headers={"User-Agent": self._user_agent},
            )
        return self._session

    def gate(self, origin: str) -> asyncio.Semaphore:
        """The gate of ``origin`` (``scheme://host:port``): hold it while a connection is used."""
        gate = self._gates.get(origin)
        if gate is None:
            gate = self._gates[origin] = asyncio.Semaphore(self.connections)
        return gate

    async def aclose(self) -> None:
        """Close the session and its connections; a later request opens a new one."""
        if self._session is not None:
            await self._session.close()
            self._session = None
