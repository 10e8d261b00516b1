"""Wire-neutral reply checks, and the one way their errors are built.

A ``Checker`` is bound to a dialect id; every reader gets one from ``table.lift``. Each check
either returns the checked value or raises ``ContractViolation`` with the dialect, the JSON path,
what was expected and what was received, in one sentence that says why the reply is not believed.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, cast

import msgspec

from ..errors import ContractViolation
from ..ir.response import StructuredValue

__all__ = [
    "DEEP",
    "LOGPROB_TOLERANCE",
    "MAX_TOKEN_COUNT",
    "SAME_LOGPROB",
    "Checker",
    "sampled_first",
    "sound",
    "top_contradiction",
    "walked",
    "walking",
]

_WALK: ContextVar[bool] = ContextVar("sieval_walk", default=False)


@contextmanager
def walked() -> Iterator[None]:
    """Inside it, every check whole-channel path is skipped (``walking()`` is true): each check
    and channel primitive takes its position-by-position walk, the reference that names the first
    bad position. For tests of their agreement, and for reading one doubtful reply slowly."""
    token = _WALK.set(True)
    try:
        yield
    finally:
        _WALK.reset(token)


def walking() -> bool:
    """Whether whole-channel paths are off (inside ``walked()``)."""
    return _WALK.get()


R = TypeVar("R")

LOGPROB_TOLERANCE = 1e-6
"""How far above 0 a logprob may be and still be believed: a log-softmax computed stably is
at most 0 exactly (the best token's is 0 minus the log of a sum of at least 1), so the margin only
admits rounding by a server that computes or converts it otherwise (float32's spacing near 1 is
1.2e-7); 1e-6 nats is a probability of 1.000001, far below any difference a score reads."""

SAME_LOGPROB = 1e-6
"""How far two reports of one token's logprob (its own and its top-k entry) may differ: both
come from the same float32 value, printed through different paths."""


MAX_TOKEN_COUNT = 10**9
"""The largest token count a reply is believed to report: 100 times the longest context window
served today (10M tokens). A larger count is no count but a corrupt number, and believed it would
swamp a ``--budget-tokens`` stop or a cost figure."""

DEEP = "is nested deeper than the JSON decoder follows (about 1,000 levels)"
"""What a JSON text too deep to decode is said to be (msgspec's ``RecursionError``)."""


def sound(values: Sequence[float]) -> bool:
    """Whether ``values`` (no ``None``) are all log-probabilities: finite and at most
    ``LOGPROB_TOLERANCE``, checked whole (a sum and a max, in C). The gate of every fast path."""
    return math.isfinite(sum(values, 0.0)) and (not values or max(values) <= LOGPROB_TOLERANCE)


def sampled_first(
    tokens: Sequence[Any],
    owns: Sequence[float],
    first_tokens: Sequence[Any],
    first_logprobs: Sequence[float],
) -> bool:
    """Whether every position's list starts with its sampled token at its own logprob, as vLLM
    lists them: the whole-channel form of ``top_contradiction`` (a list compare and a max, in C),
    which then needs asking only when this is false."""
    return tokens == first_tokens and (
        not owns or max(map(abs, map(operator.sub, first_logprobs, owns))) <= SAME_LOGPROB
    )


def top_contradiction(
    token: str | int,
    own: float,
    row: Sequence[R],
    key: Callable[[R], Any],
    logprob: Callable[[R], float],
    exact: bool = True,
) -> str | None:
    """Why ``row`` contradicts the sampled token's own logprob, or ``None`` (see
    ``Checker.sampled_in_top``, which raises it; fast paths ask this to pick their walk)."""
    if not row:
        return None
    first = row[0]  # vLLM lists the sampled token first: the usual position is settled here
    if key(first) == token and abs(logprob(first) - own) <= SAME_LOGPROB:
        return None
    listed = [logprob(e) for e in row if key(e) == token]
    if any(abs(v - own) <= SAME_LOGPROB for v in listed):
        return None
    lossy = isinstance(token, str) and (not token or "\ufffd" in token)
    if listed and not lossy:
        return (
            f"lists the sampled token {token!r} with the logprob {listed[0]} but its own logprob "
            f"is {own}: the alternatives contradict the sampled token"
        )
    if exact:
        floor = min(map(logprob, row))
        if own > floor + LOGPROB_TOLERANCE:
            return (
                f"does not rank the sampled token {token!r} among its top-{len(row)}, yet its own "
                f"logprob {own} is above the lowest of them ({floor}): the list is not the "
                f"top-{len(row)}"
            )
    return None


class _Indexed(Protocol):
    @property
    def index(self) -> int: ...


T = TypeVar("T", bound=_Indexed)
V = TypeVar("V")


class Checker:
    """The checks every reader shares, with errors that name the dialect and the path."""

    __slots__ = ("dialect",)

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def violation(
        self, path: str, message: str, *, expected: Any = None, received: Any = None
    ) -> ContractViolation:
        """The error to raise: ``raise check.violation("usage", "...")``."""
        return ContractViolation(
            f"{self.dialect}: {message}",
            dialect=self.dialect,
            path=path,
            expected=expected,
            received=received,
        )

    def present(self, value: V | None, path: str, why: str) -> V:
        """``value``, which the reply must hold: ``None`` is "{path} is missing {why}"."""
        if value is None:
            raise self.violation(path, f"{path} is missing {why}")
        return value

    def first_unscored(self, path: str, values: Sequence[float | None], upto: int) -> None:
        """A scored prompt: position 0 has no condition, so its logprob is null, and every other
        position up to ``upto`` has one."""
        if not values or values[0] is not None:
            raise self.violation(
                f"{path}[0]", f"{path}[0] must be the unscored first position (a null logprob)"
            )
        if None in values[1:upto]:
            nulls = [i for i in range(1, min(upto, len(values))) if values[i] is None]
            raise self.violation(
                f"{path}[{nulls[0]}]",
                f"{path} is null at positions {nulls[:5]}: only the first may be unscored",
            )

    def all_scored(self, path: str, values: Sequence[float | None]) -> None:
        """Sampled tokens: every one has a logprob."""
        if None in values:
            raise self.violation(path, f"{path} holds a null logprob for a sampled token")

    def count(self, path: str, value: Any) -> Any:
        """``value``, a token count the reply reports: a whole number from 0 to
        ``MAX_TOKEN_COUNT`` (``None`` passes: not reported). The one check every count goes
        through, as every logprob goes through ``logprobs``."""
        if value is None or (type(value) is int and 0 <= value <= MAX_TOKEN_COUNT):
            return value
        raise self.violation(
            path,
            f"{path} is {value!r}, not a token count (a whole number from 0 to "
            f"{MAX_TOKEN_COUNT:,}): the reply's usage is not believed",
            expected=f"int in 0..{MAX_TOKEN_COUNT}",
            received=value,
        )

    def decode(self, body: bytes, decoder: msgspec.json.Decoder[Any]) -> Any:
        """Decode a reply body; malformed, mis-shaped or too deeply nested JSON is a contract
        violation."""
        try:
            return decoder.decode(body)
        except RecursionError as exc:
            raise self.violation(
                "",
                f"the reply body ({len(body)} bytes) {DEEP}: no reply of this wire is, so it is "
                "not believed",
            ) from exc
        except msgspec.ValidationError as exc:
            raise self.violation("", f"the reply does not have the expected shape: {exc}") from exc
        except msgspec.DecodeError as exc:
            nonfinite = any(word in body for word in (b"NaN", b"Infinity"))
            why = (
                "contains a non-finite number (NaN/Infinity)" if nonfinite else "is not valid JSON"
            )
            head = body[:120].decode("utf-8", "replace")
            raise self.violation(
                "", f"the reply body {why} ({len(body)} bytes, starting {head!r})"
            ) from exc

    def ordered(self, items: Sequence[T], n: int, path: str = "choices[].index") -> list[T]:
        """Choices sorted by index, which must be exactly 0..n-1, each once."""
        indices = sorted(item.index for item in items)
        if indices != list(range(n)):
            raise self.violation(
                path,
                f"the reply's choice indices are {indices}; expected exactly 0..{n - 1} for n={n}",
                expected=list(range(n)),
                received=indices,
            )
        return sorted(items, key=lambda item: item.index)

    def logprobs(
        self,
        path: str,
        values: Sequence[float | None],
        field: str = "",
        keys: Iterable[Any] | None = None,
    ) -> None:
        """Every value is a log-probability: finite and at most ``LOGPROB_TOLERANCE`` (``None``
        passes: an unscored position). The one check every logprob a reader lifts goes through.

        The error names ``path[i]`` (``path[key]`` with ``keys``, for a map) followed by
        ``field`` (e.g. ``".logprob"``), the JSON path of the value, and the value.
        """
        # checked whole first: a sum is finite exactly when every term is, short of overflow
        # (then the values are looked at one by one, as for any other doubt)
        nulls = values.count(None)
        scored = cast(Sequence[float], values)
        if nulls == 1 and values[0] is None:
            scored = cast(Sequence[float], values[1:])
        elif nulls:
            scored = [v for v in values if v is not None]
        if not _WALK.get() and sound(scored):
            return
        for i, value in enumerate(values):
            if value is None or (math.isfinite(value) and value <= LOGPROB_TOLERANCE):
                continue
            key = list(keys)[i] if keys is not None else None
            where = f"{path}[{json.dumps(str(key)) if keys is not None else i}]{field}"
            why = (
                "logprobs must be finite"
                if not math.isfinite(value)
                else f"a log-probability is at most 0 (rounding up to {LOGPROB_TOLERANCE} is "
                "allowed), so this is not one and the reply is not believed"
            )
            raise self.violation(where, f"{where} is {value}: {why}", received=value)

    def sampled_in_top(
        self,
        path: str,
        token: str | int,
        own: float,
        row: Sequence[R],
        key: Callable[[R], Any],
        logprob: Callable[[R], float],
        exact: bool = True,
    ) -> None:
        """The sampled token's own logprob agrees with the alternatives listed for its position.

        ``token`` is the sampled token's text or id, ``key`` gives the same of an alternative.
        Listed, its listed logprob must be its own (within ``SAME_LOGPROB``); absent from an
        ``exact`` list (the server's m best), its own logprob must not exceed the lowest listed
        (within ``LOGPROB_TOLERANCE``), else the list is not the top-m. Matched by text, a
        text that cannot name one token ("" or holding U+FFFD: byte pieces decode alike) may
        belong to another token: a listed value that differs then counts as absent.
        """
        reason = top_contradiction(token, own, row, key, logprob, exact)
        if reason is not None:
            raise self.violation(
                path, f"{path} {reason}, so this position cannot be trusted", received=own
            )

    def agree(self, path: str, counts: Mapping[str, Any], what: str) -> None:
        """The same quantity counted several ways must agree (``what`` names it)."""
        if len(set(counts.values())) != 1:
            raise self.violation(
                path,
                f"{what} is counted differently: {dict(counts)}; the reply is short or misaligned "
                "and is not trusted",
                received=dict(counts),
            )

    def json_value(self, path: str, text: str, cut: bool) -> StructuredValue:
        """Structured output parsed; text that is not JSON (``cut``: at max_tokens) is refused."""
        try:
            return StructuredValue(value=msgspec.json.decode(text))
        except RecursionError as exc:
            raise self.violation(
                path,
                f"{path}: the structured output {DEEP}, so it cannot be read; simplify the schema",
            ) from exc
        except msgspec.DecodeError as exc:
            why = " (cut at max_tokens)" if cut else ""
            raise self.violation(
                path,
                f"{path}: the structured output is not valid JSON{why}: {text[:80]!r}; raise "
                "max_tokens or simplify the schema",
            ) from exc
