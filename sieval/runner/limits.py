"""How many connections this process can hold open, and the budget a model gets of them.

A ``concurrency_limit`` above what the process may open (``ulimit -n``, often 1024) makes every
connection beyond it fail with "Too many open files": a storm of tracebacks and a run many times
slower. So the soft limit is raised to the hard limit where the OS allows, and a model's
connections are capped below what is left (the embedded reference server, in this process, holds
the other end of each connection). The engine still keeps ``concurrency_limit`` requests in
flight; the transport queues the ones above the connection budget, and the run says so once.

The budget is the process's, not a model's: every model of a run has its own transport (and
an embedded model its own server), so ``connection_budgets`` splits the one budget between all
of them (max-min fair: a model that wants less leaves the rest to the others). Each transport
never opens more connections than its share, idle pooled ones included, so the sum of the
shares bounds the descriptors the run's connections can take.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from .config import EMBEDDED, ModelConfig

__all__ = ["RESERVED_FDS", "connection_budget", "connection_budgets", "open_file_limit"]

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


def connection_budget(
    config: ModelConfig, *, embedded: bool, limit: int | None = None
) -> tuple[int, str | None]:
    """``(connections, note)``: the model's connection cap, and a one-line note when the process
    limit is what set it (``None`` when ``concurrency_limit`` fits)."""
    available = (limit if limit is not None else open_file_limit()) - RESERVED_FDS
    per_connection = 2 if embedded else 1
    cap = max(1, available // per_connection)
    wanted = config.concurrency_limit
    if wanted <= cap:
        return wanted, None
    return cap, (
        f"model {config.label!r}: concurrency_limit {wanted} is more connections than this "
        f"process can hold open (open-file limit {available + RESERVED_FDS}"
        f"{', shared with the embedded server' if embedded else ''}); it keeps {wanted} requests "
        f"in flight over {cap} connections. Raise the limit with 'ulimit -n' to use more."
    )


def connection_budgets(
    configs: Sequence[ModelConfig], *, limit: int | None = None
) -> dict[str, tuple[int, str | None]]:
    """``{label: (connections, note)}``: the process's connection budget split between the
    models of one run (an embedded model's connection costs two descriptors)."""
    if len(configs) <= 1:
        return {
            c.label: connection_budget(c, embedded=c.endpoint == EMBEDDED, limit=limit)
            for c in configs
        }
    total = limit if limit is not None else open_file_limit()
    left = total - RESERVED_FDS
    cost = {c.label: 2 if c.endpoint == EMBEDDED else 1 for c in configs}
    share: dict[str, int] = {}
    waiting = sorted(configs, key=lambda c: c.concurrency_limit)
    while waiting:
        fair = max(1, left // sum(cost[c.label] for c in waiting))
        config = waiting.pop(0)
        share[config.label] = min(config.concurrency_limit, fair)
        left -= share[config.label] * cost[config.label]
    out: dict[str, tuple[int, str | None]] = {}
    for c in configs:
        given = share[c.label]
        if given >= c.concurrency_limit:
            out[c.label] = (given, None)
            continue
        other_end = ", each embedded server holding the other end" if cost[c.label] == 2 else ""
        out[c.label] = (
            given,
            f"model {c.label!r}: concurrency_limit {c.concurrency_limit} is more connections "
            f"than this process can hold open (open-file limit {total}, shared by "
            f"{len(configs)} models{other_end}); it keeps {c.concurrency_limit} requests in "
            f"flight over {given} connections. "
            "Raise the limit with 'ulimit -n' to use more.",
        )
    return out
