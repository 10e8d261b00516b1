"""How many connections this process can hold open, and the share each server of a run gets.

A budget above what the process may open (``ulimit -n``, often 1024) makes every connection
beyond it fail with "Too many open files": a storm of tracebacks and a run many times slower. So
the soft limit is raised to the hard limit where the OS allows, and each endpoint's connections
are capped below what is left (the embedded reference server, in this process, holds the other
end of each connection). The endpoint still keeps its budget of requests in flight; its pool
queues the ones above its connections (``transport/pool.py``), and the run says so once.

The budget is the process's, not an endpoint's: every endpoint of a run has its own pool (and an
embedded model its own server), so ``connection_budgets`` splits the one budget between all of
them (max-min fair: an endpoint that wants less leaves the rest to the others). A pool never
opens more connections than its share, idle ones included, so the sum of the shares bounds the
descriptors the run's connections can take.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["RESERVED_FDS", "Claim", "connection_budgets", "open_file_limit"]

RESERVED_FDS = 64
"""Descriptors kept for everything else: records files, logs, the wire log, the event loop."""


@functools.cache
def open_file_limit() -> int:
    """The soft ``RLIMIT_NOFILE``, raised to the hard limit first where that is allowed."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return 1 << 16
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # pragma: no cover - a sandbox that forbids it
            pass
    return int(soft)


class Claim(NamedTuple):
    """What one endpoint of a run asks of the process's descriptors."""

    who: str
    """Whom a note names: ``model 'ref'``, or ``models 'a', 'b'`` on one server."""
    wanted: int
    """The endpoint's budget of requests in flight: one connection each."""
    embedded: bool
    """The server is in this process, so a connection costs two descriptors."""


def connection_budgets(
    claims: Sequence[Claim], *, limit: int | None = None
) -> list[tuple[int, str | None]]:
    """``(connections, note)`` per claim, in order: the process's connection budget split between
    a run's endpoints, and a one-line note where the open-file limit is what set a share
    (``None`` where the budget fits)."""
    total = limit if limit is not None else open_file_limit()
    left = total - RESERVED_FDS
    cost = [2 if c.embedded else 1 for c in claims]
    share = [0] * len(claims)
    waiting = sorted(range(len(claims)), key=lambda i: claims[i].wanted)
    while waiting:
        fair = max(1, left // sum(cost[i] for i in waiting))
        i = waiting.pop(0)
        share[i] = min(claims[i].wanted, fair)
        left -= share[i] * cost[i]
    out: list[tuple[int, str | None]] = []
    for claim, given, price in zip(claims, share, cost, strict=True):
        if given >= claim.wanted:
            out.append((given, None))
            continue
        if len(claims) > 1:
            other_end = ", each embedded server holding the other end" if price == 2 else ""
            shared = f", shared by {len(claims)} servers{other_end}"
        else:
            shared = ", shared with the embedded server" if price == 2 else ""
        out.append(
            (
                given,
                f"{claim.who}: concurrency_limit {claim.wanted} is more connections than this "
                f"process can hold open (open-file limit {total}{shared}); it keeps "
                f"{claim.wanted} requests in flight over {given} connections. "
                "Raise the limit with 'ulimit -n' to use more.",
            )
        )
    return out
