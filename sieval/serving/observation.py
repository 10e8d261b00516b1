"""What a probe's reply says, as values two replies can be compared on, and what probes cost.

An ``Observation`` holds every number a reply gave (the prompt's log-probabilities, then each
generated position's own log-probability and its top-k), each under a label naming where it came
from (``prompt 3 ' boils'``, ``out 0 top ' a'``), and the generated text. Two observations are
compared on the labels both hold (``differ``): a generation that took another path stops
sharing labels where the paths part, and its text says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..ir.request import Request
from ..ir.response import Response
from ..model import Call, Model
from ..scoring.uncertainty import quantiles

__all__ = [
    "Cost",
    "Difference",
    "Observation",
    "Sender",
    "Step",
    "differ",
    "merged",
    "observation_of",
    "observe",
]


class Cost(msgspec.Struct, kw_only=True):
    """What probes cost the server, from its own usage counts."""

    requests: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    unreported: int = 0
    """Replies without usage counts (their tokens are not in the sums)."""

    def add(self, other: Cost) -> None:
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.output_tokens += other.output_tokens
        self.unreported += other.unreported

    def __str__(self) -> str:
        unreported = f", {self.unreported} without usage counts" if self.unreported else ""
        return (
            f"{self.requests} request{'s' if self.requests != 1 else ''}, "
            f"{self.prompt_tokens} prompt and {self.output_tokens} output tokens{unreported}"
        )


@dataclass(frozen=True)
class Step:
    """One generated position: the token, its log-probability, the top-k alternatives."""

    token: str
    logprob: float | None
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Observation:
    values: dict[str, float]
    text: str
    error: str | None = None
    steps: tuple[Step, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


def observe(call: Call) -> Observation:
    if call.response is None:
        return Observation({}, "", f"{type(call.error).__name__}: {call.error}")
    return observation_of(call.response)


def observation_of(response: Response) -> Observation:
    """What a checked reply says (a recorded one too)."""
    return Observation(_values(response), _text(response), None, _steps(response))


def _steps(response: Response) -> tuple[Step, ...]:
    choice = response.choices[0] if response.choices else None
    if choice is None or not isinstance(choice.tokens, tuple):
        return ()
    return tuple(
        Step(
            t.text,
            t.logprob if isinstance(t.logprob, float) else None,
            tuple((e.token, e.logprob) for e in t.top) if isinstance(t.top, tuple) else (),
        )
        for t in choice.tokens
    )


def _text(response: Response) -> str:
    return response.choices[0].text if response.choices else ""


def _values(response: Response) -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(response.input_tokens, tuple):
        for i, token in enumerate(response.input_tokens):
            if isinstance(token.logprob, float):
                out[f"prompt {i} {token.text!r}"] = token.logprob
    choice = response.choices[0] if response.choices else None
    if choice is not None and isinstance(choice.tokens, tuple):
        for j, token in enumerate(choice.tokens):
            if isinstance(token.logprob, float):
                out[f"out {j} {token.text!r}"] = token.logprob
            if isinstance(token.top, tuple):
                for entry in token.top:
                    out[f"out {j} top {entry.token!r}"] = entry.logprob
    return out


@dataclass(frozen=True)
class Difference:
    """Two observations compared: how many shared values moved, by how much, and the texts."""

    compared: int
    moved: int
    max_abs: float
    where: str
    same_text: bool
    abs_diffs: tuple[float, ...] = ()

    @property
    def same(self) -> bool:
        return self.moved == 0 and self.same_text

    def summary(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "compared": self.compared,
            "moved": self.moved,
            "max_abs": self.max_abs,
            "same_text": self.same_text,
        }
        if self.moved:
            found["where"] = self.where
            found.update({k: v for k, v in quantiles(list(self.abs_diffs)).items() if k != "max"})
        return found


def differ(a: Observation, b: Observation) -> Difference:
    shared = [k for k in a.values if k in b.values]
    diffs = [(abs(b.values[k] - a.values[k]), k) for k in shared]
    moved = [(d, k) for d, k in diffs if d > 0.0]
    worst = max(moved) if moved else (0.0, "")
    return Difference(
        compared=len(shared),
        moved=len(moved),
        max_abs=worst[0],
        where=worst[1],
        same_text=a.text == b.text,
        abs_diffs=tuple(d for d, _ in moved),
    )


def merged(differences: Sequence[Difference]) -> Difference:
    """Several comparisons as one (the copies of a batch against the request alone)."""
    if not differences:
        return Difference(0, 0, 0.0, "", True)
    worst = max(differences, key=lambda d: d.max_abs)
    return Difference(
        compared=sum(d.compared for d in differences),
        moved=sum(d.moved for d in differences),
        max_abs=worst.max_abs,
        where=worst.where,
        same_text=all(d.same_text for d in differences),
        abs_diffs=tuple(x for d in differences for x in d.abs_diffs),
    )


@dataclass
class Sender:
    """Sends probes through one model and counts what they cost."""

    model: Model
    cost: Cost = field(default_factory=Cost)
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.model = self.model.probing()  # a probe is sent as written, not as the run's

    def mark(self) -> Cost:
        """What has been spent so far (for ``since``)."""
        return msgspec.structs.replace(self.cost)

    def since(self, mark: Cost) -> Cost:
        """What has been spent since ``mark``."""
        c = self.cost
        return Cost(
            requests=c.requests - mark.requests,
            prompt_tokens=c.prompt_tokens - mark.prompt_tokens,
            output_tokens=c.output_tokens - mark.output_tokens,
            unreported=c.unreported - mark.unreported,
        )

    async def one(self, request: Request) -> Observation:
        return (await self.many([request]))[0]

    async def many(self, requests: Sequence[Request]) -> list[Observation]:
        """``requests`` all at once (concurrently): what a batch is made of."""
        calls = await asyncio.gather(*(self.model.call(r) for r in requests))
        for call in calls:
            self._count(call)
        return [observe(c) for c in calls]

    def _count(self, call: Call) -> None:
        self.calls.append(call)
        if call.status is None:  # refused before I/O, or never answered: nothing was computed
            return
        self.cost.requests += 1
        usage = call.response.usage if call.response is not None else None
        prompt = usage.input_tokens if usage is not None else None
        output = usage.output_tokens if usage is not None else None
        if isinstance(prompt, int) and isinstance(output, int):
            self.cost.prompt_tokens += prompt
            self.cost.output_tokens += output
        else:
            self.cost.unreported += 1
