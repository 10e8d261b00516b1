"""The dialect plane: a dialect is a declarative table, and lowering and lifting walk it.

* Per request leaf, a **row**: ``Encode(fn)`` writes the leaf into the wire body and returns the
  body path it wrote (or, for a value the wire cannot take, a ``NoOp``/``Refuse``), ``NoOp(reason)``
  says why dropping the leaf changes nothing, ``Refuse(reason)`` says why it cannot be honoured.
* Per response channel, a **rule**: a guarantee and a lifter from the parsed reply.

``lower()`` decides every active leaf before any I/O and checks the wire evidence (each consumed
leaf's body path exists in the body); ``lift()`` turns a reply into a ``Response`` and enforces the
channel guarantees. Both are pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from ..errors import ContractViolation, Refused
from ..ir.capabilities import CAPABILITIES, capability_of
from ..ir.channels import CHANNELS, Guarantee, requested_channels
from ..ir.leaves import active_leaves, schema_leaves, schema_match
from ..ir.request import Request
from ..ir.response import Choice, Decision, Response, Usage
from ..ir.validate import validate

__all__ = [
    "PER_CHOICE_CHANNELS",
    "ChannelRule",
    "Dialect",
    "Encode",
    "LeafContext",
    "Lowered",
    "NoOp",
    "Parsed",
    "ParsedChoice",
    "Refuse",
    "Row",
    "body_has_path",
    "capability_outcomes",
    "lift",
    "lower",
]


@dataclass(frozen=True)
class NoOp:
    reason: str


@dataclass(frozen=True)
class Refuse:
    reason: str


@dataclass(frozen=True)
class LeafContext:
    """What an encoder sees: the whole request, the leaf and its value, the body so far."""

    request: Request
    leaf: str
    value: Any
    body: dict[str, Any]


@dataclass(frozen=True)
class Encode:
    fn: Callable[[LeafContext], str | NoOp | Refuse]


Row = Encode | NoOp | Refuse


@dataclass(frozen=True)
class ParsedChoice:
    index: int
    text: str
    finish_reason: str | msgspec.UnsetType = UNSET
    stop_reason: str | int | msgspec.UnsetType | None = UNSET


@dataclass(frozen=True)
class Parsed:
    """A reply after the dialect's own checks: core choice fields plus wire material for lifters."""

    choices: tuple[ParsedChoice, ...]
    model: str | msgspec.UnsetType = UNSET
    system_fingerprint: str | msgspec.UnsetType = UNSET
    wire: Any = None
    warnings: tuple[str, ...] = ()


ChannelLifter = Callable[[Parsed, "Lowered"], Any]


@dataclass(frozen=True)
class ChannelRule:
    guarantee: Guarantee
    lift: ChannelLifter | None = None
    """Returns the channel's value (a tuple per choice for per-choice channels) or UNSET;
    None when another channel's lifter fills it (top-k lives inside the token lists)."""


PER_CHOICE_CHANNELS = {
    "sampled_logprobs": "tokens",
    "token_ids": "token_ids",
    "structured_output": "structured_output",
    "reasoning": "reasoning",
    "tool_calls": "tool_calls",
}
_REQUEST_CHANNELS = {"input_logprobs": "input_tokens", "usage": "usage"}


@dataclass(frozen=True)
class Lowered:
    """A wire call decided in full: route, body, and the ledger of every active leaf."""

    dialect: str
    route: str
    body: dict[str, Any]
    stream: bool
    ledger: tuple[Decision, ...]
    request: Request
    channels: frozenset[str] = frozenset()
    """The response channels the request asks for (decided with the leaves, checked by lift)."""
    method: str = "POST"


@dataclass(frozen=True)
class Dialect:
    """One wire protocol as data. Support rows and capability outcomes are derived from it."""

    id: str
    route: str
    family: str
    input_kinds: frozenset[str]
    modalities: frozenset[str]
    rows: Mapping[str, Row]
    channels: Mapping[str, ChannelRule]
    base_body: Callable[[Request, str], dict[str, Any]]
    parse: Callable[[Lowered, int, Mapping[str, str], bytes], Parsed]
    auth_headers: Callable[[str], dict[str, str]]

    def check(self) -> None:
        """The import-time self-check: every leaf decided, every channel known and ruled."""
        leaves = set(schema_leaves())
        missing = leaves - set(self.rows)
        extra = set(self.rows) - leaves
        if missing or extra:
            raise AssertionError(f"{self.id}: undecided leaves {missing}, unknown leaves {extra}")
        if set(self.channels) != set(CHANNELS):
            raise AssertionError(f"{self.id}: channels {set(self.channels) ^ set(CHANNELS)}")
        for name, rule in self.channels.items():
            owner = PER_CHOICE_CHANNELS.get(name) or _REQUEST_CHANNELS.get(name)
            if rule.guarantee != Guarantee.NEVER and rule.lift is None and owner is not None:
                raise AssertionError(f"{self.id}: channel {name} has a guarantee but no lifter")


def capability_outcomes(dialect: Dialect) -> dict[str, Literal["supported", "partial", "no"]]:
    """Per capability key: supported (every owned leaf encoded or no-op), no, or partial."""
    kinds: dict[str, set[bool]] = {key: set() for key in CAPABILITIES}
    for leaf in schema_leaves():
        kinds[capability_of(leaf)].add(not isinstance(dialect.rows[leaf], Refuse))
    out: dict[str, Literal["supported", "partial", "no"]] = {}
    for key, seen in kinds.items():
        out[key] = "supported" if seen == {True} else "no" if seen == {False} else "partial"
    return out


def body_has_path(body: Mapping[str, Any], path: str) -> bool:
    node: Any = body
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _decide(dialect: Dialect, ctx: LeafContext) -> Decision:
    schema = schema_match(ctx.leaf)
    row = dialect.rows.get(schema) if schema is not None else None
    if row is None:
        return Decision(leaf=ctx.leaf, outcome="refused", detail="no decision for this leaf")
    result: str | NoOp | Refuse = row.fn(ctx) if isinstance(row, Encode) else row
    if isinstance(result, NoOp):
        return Decision(leaf=ctx.leaf, outcome="noop", detail=result.reason)
    if isinstance(result, Refuse):
        return Decision(leaf=ctx.leaf, outcome="refused", detail=result.reason)
    return Decision(leaf=ctx.leaf, outcome="consumed", detail=result)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def lower(dialect: Dialect, request: Request, model_id: str) -> Lowered:
    """Decide every active leaf and build the wire body, or raise ``Refused`` (no I/O)."""
    validate(request)
    body = dialect.base_body(request, model_id)
    ledger: list[Decision] = []
    leaves = active_leaves(request)
    for leaf, value in leaves.items():
        ledger.append(_decide(dialect, LeafContext(request, leaf, value, body)))
    wanted = frozenset(requested_channels(request))
    for name in sorted(wanted):
        rule = dialect.channels[name]
        if rule.guarantee == Guarantee.NEVER:
            ledger.append(
                Decision(leaf=name, outcome="refused", detail="this wire never returns it")
            )
    refused = [d for d in ledger if d.outcome == "refused"]
    if refused:
        first = refused[0]
        more = f" (and {len(refused) - 1} more: {', '.join(d.leaf for d in refused[1:])})"
        raise Refused(
            f"{dialect.id} refused {first.leaf}={_show(leaves.get(first.leaf, True))}: "
            + first.detail
            + (more if len(refused) > 1 else ""),
            dialect=dialect.id,
            path=first.leaf,
            received=[d.leaf for d in refused],
        )
    for d in ledger:
        if d.outcome == "consumed" and not body_has_path(body, d.detail):
            raise Refused(
                f"{dialect.id} claims it wrote {d.leaf} to {d.detail!r} but the body has no such "
                "path: a dialect bug, please report it",
                dialect=dialect.id,
                path=d.leaf,
            )
    return Lowered(
        dialect=dialect.id,
        route=dialect.route,
        body=body,
        stream=request.scheduling.stream,
        ledger=tuple(ledger),
        request=request,
        channels=wanted,
    )


def lift(
    dialect: Dialect, lowered: Lowered, status: int, headers: Mapping[str, str], body: bytes
) -> Response:
    """Turn a reply into a ``Response`` or raise a typed error; enforce the channel guarantees."""
    parsed = dialect.parse(lowered, status, headers, body)
    wanted = lowered.channels
    n = len(parsed.choices)
    per_choice: list[dict[str, Any]] = [{} for _ in range(n)]
    top: dict[str, Any] = {}
    for name, rule in dialect.channels.items():
        if rule.guarantee == Guarantee.NEVER or rule.lift is None:
            continue
        if name not in wanted and name != "usage":
            continue
        value = rule.lift(parsed, lowered)
        if value is UNSET:
            continue
        if name in PER_CHOICE_CHANNELS:
            if len(value) != n:
                raise ContractViolation(
                    f"{dialect.id}: channel {name} has {len(value)} entries for {n} choices",
                    dialect=dialect.id,
                    path=name,
                )
            for i, item in enumerate(value):
                if item is not UNSET:
                    per_choice[i][PER_CHOICE_CHANNELS[name]] = item
        else:
            top[_REQUEST_CHANNELS[name]] = value
    choices = tuple(
        Choice(
            index=c.index,
            text=c.text,
            finish_reason=c.finish_reason,
            stop_reason=c.stop_reason,
            **per_choice[i],
        )
        for i, c in enumerate(parsed.choices)
    )
    response = Response(
        choices=choices,
        input_tokens=top.get("input_tokens", UNSET),
        usage=top.get("usage", Usage()),
        model=parsed.model,
        system_fingerprint=parsed.system_fingerprint,
        dialect=dialect.id,
        warnings=parsed.warnings,
    )
    _enforce(dialect, wanted, response)
    return response


def _enforce(dialect: Dialect, wanted: frozenset[str], response: Response) -> None:
    for name, rule in dialect.channels.items():
        present = CHANNELS[name].present(response)
        if rule.guarantee == Guarantee.NEVER and present:
            raise ContractViolation(
                f"{dialect.id}: the reply carries channel {name}, which this wire never returns",
                dialect=dialect.id,
                path=name,
            )
        if name in wanted and rule.guarantee == Guarantee.PRESENT_OR_ERROR and not present:
            raise ContractViolation(
                f"{dialect.id}: channel {name} was requested and is missing from the reply; "
                "the server ignored the request for it",
                dialect=dialect.id,
                path=name,
            )
