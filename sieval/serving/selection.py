"""Which serving checks a run's tasks depend on, read from the requests they will send.

* ``fingerprint``: always (what produced the scores);
* ``determinism``: tasks that score or generate greedily (it costs nothing: the fingerprint's
  two sends);
* ``batch_invariance``: scoring tasks run with more than one request in flight, and greedy
  generation (its text can change with any neighbour, yours or another client's);
* ``cache_invariance``: scoring and greedy tasks (few-shot prompts and a question's choices
  share their start);
* ``seed_repeat``: tasks that sample with a seed;
* ``server_defaults``: every task (mostly settled from the requests alone);
* ``tool_calls``: tasks that offer function tools (the server's tool parser);
* ``tool_prompt`` (whether the chat template shows the tools to the model): only when named
  (``--serving-checks``, ``sieval probe --checks``): the embedded reference server, whose
  template is the live Gemma 3's, would warn on every tool task it demonstrates.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from msgspec import UNSET

from ..errors import ConfigError
from ..ir.request import Request
from .defaults import kind_of

__all__ = ["ALL", "Needs", "needs_of", "parse_selection", "select"]

ALL = (
    "fingerprint",
    "determinism",
    "batch_invariance",
    "cache_invariance",
    "seed_repeat",
    "server_defaults",
    "tool_calls",
    "tool_prompt",
)


@dataclass(frozen=True)
class Needs:
    """The checks to run, and for each the run's tasks that depend on it."""

    checks: dict[str, list[str]] = field(default_factory=dict)
    requests: tuple[tuple[str, Request], ...] = ()
    """One request of each kind per task (task name, request as the model will send it)."""

    def __contains__(self, check: str) -> bool:
        return check in self.checks

    def tasks(self, check: str) -> list[str]:
        return self.checks.get(check, [])


def needs_of(requests: Iterable[tuple[str, Request]], concurrency: int) -> Needs:
    """The checks ``requests`` (task name, request with the model's defaults applied) depend on,
    at ``concurrency`` requests in flight."""
    kept: dict[tuple[str, str], Request] = {}
    offering: list[str] = []  # tasks offering function tools, in order
    for task, request in requests:
        kept.setdefault((task, kind_of(request)), request)
        if request.tools.functions and task not in offering:
            offering.append(task)
    checks: dict[str, list[str]] = {"fingerprint": [], "server_defaults": []}

    def need(check: str, task: str) -> None:
        tasks = checks.setdefault(check, [])
        if task not in tasks:
            tasks.append(task)

    for (task, kind), request in kept.items():
        need("server_defaults", task)
        if kind in ("scores", "greedy"):
            need("determinism", task)
            need("cache_invariance", task)
        if kind == "greedy" or (kind == "scores" and concurrency > 1):
            need("batch_invariance", task)
        if kind in ("sampled", "server") and request.sampling.seed is not UNSET:
            need("seed_repeat", task)
    for task in offering:
        need("tool_calls", task)
    ordered = {c: checks[c] for c in ALL if c in checks}
    return Needs(ordered, tuple((t, r) for (t, _), r in kept.items()))


def parse_selection(text: str) -> tuple[str, ...] | None:
    """``--serving-checks``: ``auto`` (None: what the tasks depend on), ``all``, ``off`` (none),
    or check names separated by commas; a ``ConfigError`` naming the known ones."""
    text = text.strip()
    if text == "auto":
        return None
    if text == "all":
        return ALL
    if text in ("off", "none", ""):
        return ()
    names = tuple(n.strip().replace("-", "_") for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise ConfigError(
            f"--serving-checks: unknown check {unknown[0]!r}; choose auto, all, off, or some of "
            f"{', '.join(ALL)} (comma-separated)",
            path="serving_checks",
        )
    return names


def select(needs: Needs, chosen: Sequence[str] | None) -> Needs:
    """``needs`` narrowed (or widened) to ``chosen`` (None: as the tasks need)."""
    if chosen is None:
        return needs
    checks = {c: needs.checks.get(c, []) for c in ALL if c in chosen}
    if "tool_prompt" in checks and "tool_calls" in needs.checks:
        checks["tool_prompt"] = needs.checks["tool_calls"]  # the same tasks depend on it
    return Needs(checks, needs.requests)
