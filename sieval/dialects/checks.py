"""Wire-neutral reply checks, and the one way their errors are built.

A ``Checker`` is bound to a dialect id; every reader gets one from ``table.lift``. Each check
either returns the checked value or raises ``ContractViolation`` with the dialect, the JSON path,
what was expected and what was received, in one sentence that says why the reply is not believed.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import Any, Protocol, TypeVar, cast

import msgspec

from ..errors import ContractViolation
from ..ir.response import StructuredValue, TopEntry

__all__ = [
    "LOGPROB_TOLERANCE",
    "SAME_LOGPROB",
    "Checker",
    "best_first",
    "descending_rows",
    "sampled_first",
    "sound",
    "top_contradiction",
]


def descending_rows(values: Sequence[float], width: int) -> bool:
    """Whether ``values``, rows of ``width`` laid end to end, is non-increasing within each row:
    compared column against next column, in C, not position by position."""
    return all(
        all(map(operator.ge, values[j::width], values[j + 1 :: width])) for j in range(width - 1)
    )


R = TypeVar("R")


def best_first(
    rows: Sequence[Sequence[R]],
    flat: Sequence[float],
    width: int | None,
    k: int,
    logprob: Callable[[R], float],
) -> list[Sequence[R]]:
    """Each row's ``k`` most likely alternatives, most likely first: the rows as listed when they
    already descend (all ``width`` long, their logprobs laid end to end in ``flat``), as vLLM and
    Gemini list them; else sorted, stably (ties keep the wire's order)."""
    if width is not None and descending_rows(flat, width):
        return [row[:k] for row in rows]
    return [sorted(row, key=logprob, reverse=True)[:k] for row in rows]


LOGPROB_TOLERANCE = 1e-6
"""How far above 0 a logprob may be and still be believed: a log-softmax computed stably is
at most 0 exactly (the best token's is 0 minus the log of a sum of at least 1), so the margin only
admits rounding by a server that computes or converts it otherwise (float32's spacing near 1 is
1.2e-7); 1e-6 nats is a probability of 1.000001, far below any difference a score reads."""

SAME_LOGPROB = 1e-6
"""How far two reports of one token's logprob (its own and its top-k entry) may differ: both
come from the same float32 value, printed through different paths."""


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


_KEY, _VALUE = itemgetter(0), itemgetter(1)
_TOKEN, _TOKEN_ID, _LOGPROB = attrgetter("token"), attrgetter("token_id"), attrgetter("logprob")


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

    def decode(self, body: bytes, decoder: msgspec.json.Decoder[Any]) -> Any:
        """Decode a reply body; malformed or mis-shaped JSON is a contract violation."""
        try:
            return decoder.decode(body)
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
        if sound(scored):
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

    def lists_agree(
        self, where: str, entries: Sequence[Any], lists: Sequence[Sequence[Any]]
    ) -> None:
        """Each position's top-k list (``lists[i]``, read by ``.token`` and ``.logprob`` as its
        sampled token ``entries[i]``) agrees with that token (``sampled_in_top``), checked whole
        first (``sampled_first``): vLLM lists the sampled token first at its own logprob."""
        firsts = [alts[0] for alts in lists]
        if sampled_first(
            list(map(_TOKEN, entries)),
            list(map(_LOGPROB, entries)),
            list(map(_TOKEN, firsts)),
            list(map(_LOGPROB, firsts)),
        ):
            return
        for i, (e, alts) in enumerate(zip(entries, lists, strict=True)):
            path = f"{where}[{i}].top_logprobs"
            self.sampled_in_top(path, e.token, e.logprob, alts, _TOKEN, _LOGPROB)

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

    def top_map(
        self,
        path: str,
        entries: Mapping[str, float],
        scored_text: str,
        scored_logprob: float,
        k: int,
    ) -> tuple[tuple[TopEntry, ...], int]:
        """A text-keyed top-k map: exactly k entries, or k + 1 with the scored token.

        Returns the k alternatives (most likely first) and the scored token's index among them,
        or -1 when it is not among them. A map short of k, or one holding another value for the
        scored token, means distinct tokens collapsed onto one text key (wire reference 7.8):
        refused. A collision that still leaves k entries cannot be detected from the map alone.
        With k + 1 the scored token is outside the top-k, so its logprob must not exceed the
        k-th's (``sampled_in_top``).
        """
        self.logprobs(path, list(entries.values()), keys=entries)
        count = len(entries)
        scored_in = scored_text in entries
        if not scored_in or count not in (k, k + 1):
            raise self.violation(
                path,
                f"{path} lists {count} alternatives for top-k={k} (scored token {scored_text!r} "
                f"{'present' if scored_in else 'absent'}); expected k, or k+1 with the scored "
                "token: tokens that decode alike collapsed, so this position cannot be trusted",
                expected=k,
                received=count,
            )
        if abs(entries[scored_text] - scored_logprob) > 1e-6:
            raise self.violation(
                path,
                f"{path} gives {scored_text!r} the logprob {entries[scored_text]} but the token's "
                f"own logprob is {scored_logprob}: another token with the same text overwrote it",
            )
        items = sorted(entries.items(), key=lambda kv: -kv[1])
        if count == k + 1:
            items = [kv for kv in items if kv[0] != scored_text]
            if scored_logprob > items[-1][1] + LOGPROB_TOLERANCE:  # above the k-th: refused
                self.sampled_in_top(path, scored_text, scored_logprob, items, _KEY, _VALUE)
            rank = -1
        else:
            rank = next(i for i, kv in enumerate(items) if kv[0] == scored_text)
        return tuple(TopEntry(token=t, logprob=lp) for t, lp in items), rank

    def top_list(
        self,
        path: str,
        entries: Sequence[TopEntry],
        k: int,
        scored: TopEntry,
        field: str = ".logprob",
    ) -> tuple[tuple[TopEntry, ...], int]:
        """A list of alternatives (any order) cut to the exact top-k, most likely first.

        ``entries`` must hold at least ``k`` alternatives (a server that lists the sampled token
        first and cuts at k, as vLLM's chat routes do, is asked for k + 1: sorted, its first k
        are exact either way) and agree with the scored token (``sampled_in_top``: matched by
        id when the scored token has one, else by text). Returns the k alternatives and the
        scored token's index among them, or -1 when it is not among them. ``field`` names the
        logprob on the wire, for the path of a bad value.
        """
        self.logprobs(path, [e.logprob for e in entries], field)
        if len(entries) < k:
            raise self.violation(
                path,
                f"{path} lists {len(entries)} alternatives for top-k={k}: the reply is short",
                expected=k,
                received=len(entries),
            )
        by_id = isinstance(scored.token_id, int)
        self.sampled_in_top(
            path,
            cast(int, scored.token_id) if by_id else scored.token,
            scored.logprob,
            entries,
            _TOKEN_ID if by_id else _TOKEN,
            _LOGPROB,
        )
        ranked = sorted(entries, key=lambda e: -e.logprob)[:k]
        rank = next(
            (
                i
                for i, e in enumerate(ranked)
                if e.token == scored.token and e.logprob == scored.logprob
            ),
            -1,
        )
        return tuple(ranked), rank

    def json_value(self, path: str, text: str, cut: bool) -> StructuredValue:
        """Structured output parsed; text that is not JSON (``cut``: at max_tokens) is refused."""
        try:
            return StructuredValue(value=msgspec.json.decode(text))
        except msgspec.DecodeError as exc:
            why = " (cut at max_tokens)" if cut else ""
            raise self.violation(
                path,
                f"{path}: the structured output is not valid JSON{why}: {text[:80]!r}; raise "
                "max_tokens or simplify the schema",
            ) from exc
