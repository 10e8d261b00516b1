"""What a run spent, read from its records, beside what was forecast: the ``cost`` entry of each
(model, task) in ``report.json``.

Spent is the usage the server reported, summed over every line of a unit's ``records.jsonl``:
a sample that failed and ran again on ``--resume`` was paid for twice, and counts twice. A reply
that reported no usage is counted in ``without_usage`` and left out of the sums (a budget counts
it at its forecast instead: ``stopping.Budget``); a request that was never answered (a connect
error, a timeout) spent nothing the server reported. The cost is the model's ``price:`` times
those sums, per million tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..store.records import scan

if TYPE_CHECKING:
    from ..plan.config import Price

__all__ = ["Spent", "charged", "spent_by_role", "spent_in"]


class Spent(msgspec.Struct, kw_only=True):
    """A unit's spending, as its records say."""

    records: int = 0
    """Record lines read (a sample run twice has two)."""
    requests: int = 0
    answered: int = 0
    """Requests the server answered (HTTP 200)."""
    input_tokens: int = 0
    output_tokens: int = 0
    without_usage: int = 0
    """Answered requests whose reply reported no usage, or only part of it (what it did report
    is in the sums above)."""
    retries: int = 0
    """Attempts sent again after a timeout, a 429 or a 5xx: a server may have computed the lost
    attempt too (a timed-out prompt counts in vLLM's ``/metrics``), with no usage to say so."""

    def cost(self, price: Price | None) -> float | None:
        return None if price is None else price.cost(self.input_tokens, self.output_tokens)


class _Request(msgspec.Struct):
    usage: dict[str, int] = {}
    status: int | None = None
    timings: dict[str, float] = {}
    role: str | None = None


class _Common(msgspec.Struct):
    status: int | None = None


class _Line(msgspec.Struct):
    """What a record says of its requests' usage (schema 1 to 5; version 5 may hold a usage key
    or the status once for all of them, in ``requests_columns`` / ``requests_common``)."""

    requests: dict[str, _Request] = {}
    requests_common: _Common = msgspec.field(default_factory=_Common)
    requests_columns: dict[str, Any] = {}


_line_decoder = msgspec.json.Decoder(_Line)


def charged(line: _Line) -> Iterator[tuple[bool, dict[str, int], int]]:
    """Each request of a record: whether it was answered, its usage, its attempts."""
    for answered, usage, attempts, _ in _charged(line):
        yield answered, usage, attempts


def _charged(line: _Line) -> Iterator[tuple[bool, dict[str, int], int, str | None]]:
    """``charged``, with the role that answered each request (None: the evaluated model)."""
    columns = line.requests_columns
    for i, request in enumerate(line.requests.values()):
        usage = dict(request.usage)
        attempts = int(request.timings.get("attempts", 1))
        for key, value in columns.items():
            at = value[i] if isinstance(value, list) else value
            if key.startswith("usage."):
                usage[key.removeprefix("usage.")] = at
            elif key == "timings.attempts":
                attempts = int(at)
        status = request.status if request.status is not None else line.requests_common.status
        answered = status == 200 or (status is None and bool(usage))  # schema 1-2: no status
        yield answered, usage, attempts, request.role


def spent_in(path: Path) -> Spent:
    """What the records at ``path`` say was spent by the evaluated model (nothing when there
    are none yet); ``spent_by_role`` has what the roles' models spent beside it."""
    return spent_by_role(path).get(None) or Spent()


def spent_by_role(path: Path) -> dict[str | None, Spent]:
    """What the records at ``path`` say each model spent: the evaluated model's under None,
    each role's (a judge's calls, recorded with the sample) under its name."""
    found: dict[str | None, Spent] = {None: Spent()}
    for line in scan(path, _line_decoder):
        for spent in found.values():
            spent.records += 1
        for answered, usage, attempts, role in _charged(line):
            spent = found.setdefault(role, Spent(records=found[None].records))
            spent.requests += 1
            spent.retries += attempts - 1
            spent.answered += answered
            spent.input_tokens += usage.get("input_tokens", 0)
            spent.output_tokens += usage.get("output_tokens", 0)
            spent.without_usage += answered and not {"input_tokens", "output_tokens"} <= set(usage)
    return found
