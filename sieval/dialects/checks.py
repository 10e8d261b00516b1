"""Wire-neutral reply checks, and the one way their errors are built.

A ``Checker`` is bound to a dialect id; every reader gets one from ``table.lift``. Each check
either returns the checked value or raises ``ContractViolation`` with the dialect, the JSON path,
what was expected and what was received, in one sentence that says why the reply is not believed.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

import msgspec

from ..errors import ContractViolation
from ..ir.response import StructuredValue, TopEntry

__all__ = ["Checker", "best_first", "descending_rows"]


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


class _Indexed(Protocol):
    @property
    def index(self) -> int: ...


T = TypeVar("T", bound=_Indexed)


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

    def finite(self, path: str, values: Sequence[float | None]) -> None:
        """Every logprob is a finite number (``None`` passes: an unscored position)."""
        # checked whole first: a sum is finite exactly when every term is, short of overflow
        # (then the values are looked at one by one, as for any other doubt)
        nulls = values.count(None)
        scored = cast(Sequence[float], values)
        if nulls == 1 and values[0] is None:
            scored = cast(Sequence[float], values[1:])
        elif nulls:
            scored = [v for v in values if v is not None]
        total = sum(scored, 0.0)
        if math.isfinite(total):
            return
        for i, value in enumerate(values):
            if value is not None and not math.isfinite(value):
                raise self.violation(
                    f"{path}[{i}]",
                    f"{path}[{i}] is {value}: logprobs must be finite",
                    received=value,
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
        """
        self.finite(path, list(entries.values()))
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
    ) -> tuple[tuple[TopEntry, ...], int]:
        """A list of alternatives (any order) cut to the exact top-k, most likely first.

        ``entries`` must hold at least ``k`` alternatives (a server that lists the sampled token
        first and cuts at k, as vLLM's chat routes do, is asked for k + 1: sorted, its first k
        are exact either way). Returns the k alternatives and the scored token's index among
        them, or -1 when it is not among them.
        """
        self.finite(path, [e.logprob for e in entries])
        if len(entries) < k:
            raise self.violation(
                path,
                f"{path} lists {len(entries)} alternatives for top-k={k}: the reply is short",
                expected=k,
                received=len(entries),
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
