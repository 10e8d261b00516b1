"""The interpreter of dialect tables: the only code that walks what a dialect declares.

``vocabulary.py`` holds the vocabulary a dialect module declares; this module compiles a ``Dialect``
(every schema leaf resolved to one row, an exact row winning over a prefix row), lowers requests
with it and lifts replies:

``lower()`` decides every active leaf in schema order, whatever the order of the rows or of the
leaves, merges the writes (two values for one body path refuse the later leaf with a reason that
names both), applies the rules and the unset rows, and checks the wire evidence: every consumed
leaf's path exists in the body, list indices included. ``lift()`` turns a non-2xx status into the
dialect's error, decodes or folds the reply, reads it (``reading.read`` walks the dialect's reply
declaration) and enforces the channel guarantees.
Both are pure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from ..errors import Refused
from ..ir.capabilities import CAPABILITIES, capability_of
from ..ir.channels import CHANNELS, Guarantee, requested_channels
from ..ir.leaves import active_leaves, schema_leaves, schema_match
from ..ir.request import Request
from ..ir.response import Decision, Response
from ..ir.validate import validate
from .body import Body, has_path, top_key
from .reading import read
from .reply_checks import Checker
from .vocabulary import (
    PREFIX,
    Below,
    Demand,
    Dialect,
    Encode,
    Evidence,
    Excludes,
    Field,
    Fill,
    Group,
    GroupInput,
    Leaf,
    Lowered,
    NoOp,
    Options,
    Outcome,
    Refuse,
    Row,
    Rule,
    Write,
)

__all__ = [
    "Compiled",
    "capability_outcomes",
    "compile_dialect",
    "decide",
    "describe_leaf",
    "lift",
    "lower",
]


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _other(rule: Rule) -> str:
    if isinstance(rule, Excludes):
        return rule.other
    return rule.bound if isinstance(rule, Below) else rule.needs


@dataclass(frozen=True)
class Compiled:
    rows: dict[str, tuple[str, Row]]
    """schema leaf -> (the row's key, the row)."""
    rank: dict[str, int]
    """schema leaf -> its position in schema order (the order decisions are made in)."""
    decoder: msgspec.json.Decoder[Any]
    owned_keys: frozenset[str]
    """Top-level body keys the table writes: an option may never shadow one."""
    groups: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    """Group row key -> (rank of its first leaf, the schema leaves it covers)."""
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """schema leaf -> the top-level body keys its row may write."""
    guarantees: tuple[tuple[str, Callable[[Response], bool], bool], ...] = ()
    """What ``lift`` enforces, channel by channel: (name, presence test, never returned), for the
    channels the wire never returns and those it guarantees when asked (best effort is neither)."""
    option_owned: frozenset[str] = frozenset()
    """The names an ``Options`` row refuses: the IR's leaf names, its ``reserved`` names, and,
    for top-level options, the body keys the rest of the table writes."""


_IR_NAMES = frozenset(leaf.rsplit(".", 1)[-1] for leaf in schema_leaves())


def _covers(key: str, leaf: str) -> bool:
    return leaf.startswith(key[: -len(PREFIX)] + ".") if key.endswith(PREFIX) else leaf == key


def compile_dialect(dialect: Dialect) -> Compiled:
    leaves = schema_leaves()
    rank = {leaf: i for i, leaf in enumerate(leaves)}
    resolved: dict[str, tuple[str, Row]] = {}
    problems: list[str] = []
    for key, row in dialect.rows.items():
        if not any(_covers(key, leaf) for leaf in leaves):
            problems.append(f"row {key!r} matches no schema leaf")
        if isinstance(row, Group) and not key.endswith(PREFIX):
            problems.append(f"group row {key!r} must be a prefix such as 'structured_output.*'")
    for leaf in leaves:
        exact = dialect.rows.get(leaf)
        if exact is not None and not leaf.endswith(PREFIX):
            resolved[leaf] = (leaf, exact)
            continue
        prefixes = [k for k in dialect.rows if k.endswith(PREFIX) and _covers(k, leaf)]
        if leaf in dialect.rows:  # an open mapping's own row, e.g. "options.*"
            prefixes.append(leaf)
        if not prefixes:
            problems.append(f"leaf {leaf!r} has no row")
            continue
        best = max(prefixes, key=len)
        resolved[leaf] = (best, dialect.rows[best])
    for rule in dialect.rules:
        for name in (rule.leaf, _other(rule)):
            if name not in rank:
                problems.append(f"rule {rule!r} names {name!r}, not a schema leaf")
    problems += [f"unset row for unknown leaf {k!r}" for k in dialect.unset if k not in rank]
    problems += [f"unknown channel {c!r}" for c in dialect.channels if c not in CHANNELS]
    if problems:
        raise AssertionError(f"{dialect.id}: " + "; ".join(problems))
    groups: dict[str, tuple[int, tuple[str, ...]]] = {}
    owned: set[str] = set()
    options: Options | None = None
    for leaf, (key, row) in resolved.items():
        if isinstance(row, Group):
            first, covered = groups.get(key, (rank[leaf], ()))
            groups[key] = (min(first, rank[leaf]), (*covered, leaf))
        if isinstance(row, Field | Encode | Group):
            owned.update(row.keys)
        elif isinstance(row, Options):
            options = row
    owned.update(top_key(f.path) for f in dialect.unset.values() if isinstance(f, Fill))
    if dialect.endpoint.model_field:
        owned.add(dialect.endpoint.model_field)
    option_owned = _IR_NAMES
    if options is not None:
        option_owned |= options.reserved | (frozenset() if options.at else frozenset(owned))
    return Compiled(
        rows=resolved,
        rank=rank,
        decoder=msgspec.json.Decoder(dialect.reply.type),
        owned_keys=frozenset(owned),
        groups=groups,
        keys={
            leaf: row.keys if isinstance(row, Field | Encode | Group | Options) else ()
            for leaf, (_, row) in resolved.items()
        },
        option_owned=option_owned,
        guarantees=tuple(
            (name, channel.present, guarantee == Guarantee.NEVER)
            for name, channel in CHANNELS.items()
            if (guarantee := dialect.guarantee(name)) != Guarantee.BEST_EFFORT
        ),
    )


# -- lowering -----------------------------------------------------------------------------------


_INDICES = re.compile(r"\[(\d+)\]")


def _schema_of(ledger_leaf: str) -> str:
    """``input.chat.messages[2].content[0].image`` -> ``input.chat.messages.content.image``."""
    return _INDICES.sub("", ledger_leaf) if "[" in ledger_leaf else ledger_leaf


def _indices(ledger_leaf: str) -> tuple[int, ...]:
    return tuple(int(i) for i in _INDICES.findall(ledger_leaf)) if "[" in ledger_leaf else ()


_Order = tuple[int, tuple[int, ...], int, str]
_Decided = tuple[_Order, str, Outcome, tuple[str, ...]]
"""One ledger entry in the making: (sort key, leaf, outcome, the row's body keys). The sort key
is (rank of the row's first leaf, list indices, rank of the leaf, leaf): schema order, elements in
their order, never the order of the rows or of the active leaves."""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _group_value(request: Request, prefix: str) -> Any:
    node: Any = request
    for part in _parts(prefix):
        if hasattr(node, part):
            node = getattr(node, part)
        else:  # a tagged variant's name, e.g. "chat" in "input.chat": the value stays
            tag = getattr(getattr(node, "__struct_config__", None), "tag", None)
            if tag != part:
                return UNSET
    return node


@functools.lru_cache(maxsize=64)
def _parts(prefix: str) -> tuple[str, ...]:
    return tuple(prefix.split("."))


def _decide_rows(
    dialect: Dialect, request: Request, active: Mapping[str, Any]
) -> tuple[list[_Decided], dict[str, str]]:
    """Every active leaf's outcome, in schema order; plus ``schema leaf -> active path``."""
    comp = dialect.compiled
    rows, rank_of = comp.rows, comp.rank
    by_schema: dict[str, str] = {}
    decided: list[_Decided] = []
    groups: dict[str, list[str]] = {}
    for path, value in active.items():
        schema = path if path in rows else schema_match(path)
        if schema is None or schema not in rows:
            order: _Order = (len(rank_of), (), 0, path)
            decided.append((order, path, Refuse("no decision for this leaf"), ()))
            continue
        by_schema.setdefault(schema, path)
        key, row = rows[schema]
        if isinstance(row, Group):
            groups.setdefault(key, []).append(schema)
            continue
        if isinstance(row, Field):
            outcome: Outcome = Write(row.path, _plain(value))
        elif isinstance(row, Encode):
            outcome = row.fn(Leaf(path, value))
        elif isinstance(row, Options):
            outcome = _option(row, Leaf(path, value), comp.option_owned)
        else:
            outcome = row
        rank = rank_of[schema]
        decided.append(((rank, (), rank, path), path, outcome, comp.keys[schema]))
    for key, members in groups.items():
        row = dialect.rows[key]
        assert isinstance(row, Group)
        first = comp.groups[key][0]
        value = _group_value(request, key[: -len(PREFIX)])
        outcomes = row.fn(GroupInput(value=value, active=frozenset(members)))
        covered = set()
        for leaf, outcome in outcomes.items():
            schema = _schema_of(leaf)
            if schema in rank_of and rows[schema][0] != key and _covers(key, schema):
                continue  # a leaf of the group with its own, more exact row: that row decides it
            if schema not in rank_of or rows[schema][0] != key:
                outcome = Refuse(
                    f"the {key} group decided {leaf!r}, which is not one of its leaves"
                )
            covered.add(schema)
            order = (first, _indices(leaf), rank_of.get(schema, 0), leaf)
            decided.append((order, leaf, outcome, row.keys))
        for schema in set(members) - covered:
            bug = Refuse(f"the {key} group returned no decision for it: a dialect bug")
            decided.append(((first, (), rank_of[schema], schema), schema, bug, ()))
    decided.sort()  # by the order key alone: it ends with the leaf, so no two are equal
    return decided, by_schema


def _option(row: Options, leaf: Leaf, owned: frozenset[str]) -> Outcome:
    name, value = leaf.name, leaf.value
    if name in owned:
        return Refuse(f"option {name!r} names a field the IR owns; set that leaf instead")
    if name not in row.allowed:
        return Refuse(row.refusal.format(allowed=", ".join(sorted(row.allowed))))
    kind = row.allowed[name]
    if kind is not None and not kind.check(value):
        return Refuse(f"option {name!r}={value!r} is not {kind.kind}")
    return Write(row.at + name, _plain(value))


def _rule_refusals(
    dialect: Dialect, active: Mapping[str, Any], by_schema: Mapping[str, str]
) -> dict[str, str]:
    """schema leaf -> reason, for every leaf a cross-leaf rule refuses."""
    out: dict[str, str] = {}
    for rule in dialect.rules:
        if rule.leaf not in by_schema:
            continue
        if isinstance(rule, Excludes):
            if rule.other in by_schema:
                out.setdefault(rule.leaf, rule.reason)
        elif isinstance(rule, Below):
            if rule.bound in by_schema:
                value, bound = active[by_schema[rule.leaf]], active[by_schema[rule.bound]]
                if not value < bound:
                    out.setdefault(rule.leaf, rule.reason)
        elif rule.needs not in by_schema and rule.when(active[by_schema[rule.leaf]]):
            out.setdefault(rule.leaf, rule.reason)
    return out


def lower(dialect: Dialect, request: Request, model_id: str) -> Lowered:
    """Decide every active leaf and build the wire body, or raise ``Refused`` (no I/O)."""
    validate(request)
    return decide(dialect, request, model_id, active_leaves(request))


def decide(dialect: Dialect, request: Request, model_id: str, active: Mapping[str, Any]) -> Lowered:
    """``lower`` for a given map of active leaves (any order: the result never depends on it)."""
    decided, by_schema = _decide_rows(dialect, request, active)
    ruled = _rule_refusals(dialect, active, by_schema)
    wanted = requested_channels(by_schema)
    for channel in wanted:
        trigger = CHANNELS[channel].trigger
        if dialect.guarantee(channel) == Guarantee.NEVER and trigger is not None:
            ruled.setdefault(
                trigger, f"this wire never returns {channel} ({CHANNELS[channel].doc})"
            )
    endpoint = dialect.endpoint
    body = Body({endpoint.model_field: model_id} if endpoint.model_field else None)
    ledger: list[Decision] = []
    claims: list[Decision] = []
    stream = False
    refused = False
    for _, leaf, outcome, keys in decided:
        if ruled:
            reason = ruled.get(_schema_of(leaf))
            if reason is not None and not isinstance(outcome, Refuse):
                outcome = Refuse(reason)
        if isinstance(outcome, Write):
            outcome = _merge(body, leaf, keys, outcome)
        if isinstance(outcome, Write):
            ledger.append(Decision(leaf=leaf, outcome="consumed", path=outcome.path))
            stream = stream or leaf == "scheduling.stream"
        elif isinstance(outcome, Evidence):
            decision = Decision(leaf=leaf, outcome="consumed", path=outcome.path)
            ledger.append(decision)
            claims.append(decision)
            stream = stream or leaf == "scheduling.stream"
        elif isinstance(outcome, NoOp):
            ledger.append(Decision(leaf=leaf, outcome="noop", reason=outcome.reason))
        else:
            ledger.append(Decision(leaf=leaf, outcome="refused", reason=outcome.reason))
            refused = True
    for leaf, when_unset in dialect.unset.items():
        if leaf in by_schema:
            continue
        if isinstance(when_unset, Demand):
            ledger.append(Decision(leaf=leaf, outcome="refused", reason=when_unset.reason))
            refused = True
            continue
        conflict = body.write(when_unset.path, when_unset.value, leaf)
        if conflict is not None:
            reason = (
                f"its default conflicts with {conflict.other} at {conflict.path}: a dialect bug"
            )
            ledger.append(Decision(leaf=leaf, outcome="refused", reason=reason))
            refused = True
        else:
            shown = f"{_show(when_unset.value)}: {when_unset.reason}"
            ledger.append(
                Decision(leaf=leaf, outcome="defaulted", path=when_unset.path, reason=shown)
            )
    if refused:
        _refuse(dialect, ledger, active)
    _check_evidence(dialect, body, ledger, claims, stream)
    return Lowered(
        dialect=dialect.id,
        path=endpoint.url_path(model_id, stream),
        body=body.data,
        stream=stream,
        ledger=tuple(ledger),
        request=request,
        channels=wanted,
        method=endpoint.method,
    )


def _merge(body: Body, leaf: str, keys: tuple[str, ...], write: Write) -> Write | Refuse:
    writes = [(write.path, write.value), *write.also.items()] if write.also else None
    for path, value in writes or ((write.path, write.value),):
        if top_key(path) not in keys:
            return Refuse(
                f"the row writes {path!r} outside its declared keys {keys}: a dialect bug"
            )
        conflict = body.write(path, value, leaf)
        if conflict is not None:
            return Refuse(
                f"{conflict.other} already wrote {_show(conflict.existing)} to body field "
                f"{conflict.path!r} and this leaf needs {_show(conflict.new)} there: the wire "
                "has one field for both, so ask for values that agree"
            )
    return write


def _refuse(dialect: Dialect, ledger: list[Decision], active: Mapping[str, Any]) -> None:
    refused = [d for d in ledger if d.outcome == "refused"]
    first = refused[0]
    more = f" (and {len(refused) - 1} more: {', '.join(d.leaf for d in refused[1:])})"
    if first.leaf in active:
        shown = f"={_show(active[first.leaf])}"
    else:
        shown = " (unset)" if first.leaf in dialect.unset else ""
    raise Refused(
        f"{dialect.id} refused {first.leaf}{shown}: {first.reason}"
        + (more if len(refused) > 1 else ""),
        dialect=dialect.id,
        path=first.leaf,
        received=[d.leaf for d in refused],
        ledger=tuple(ledger),
    )


def _check_evidence(
    dialect: Dialect, body: Body, ledger: list[Decision], claims: list[Decision], stream: bool
) -> None:
    """Every claimed path exists in the body (a write's path exists once merged); a path starting
    with ``/`` is carried by the URL (Google streams through another path) and must be the
    endpoint's path for this call."""
    endpoint = dialect.endpoint
    url = endpoint.stream_path if stream and endpoint.stream_path else endpoint.path
    holes = body.holes()
    missing = [
        d
        for d in claims
        if isinstance(d.path, str)
        and not (d.path == url if d.path.startswith("/") else has_path(body.data, d.path))
    ]
    if holes or missing:
        what = f"list slots {holes} were never written" if holes else ""
        if missing:
            first = missing[0]
            what = f"it claims it wrote {first.leaf} to {first.path!r}, a path the body lacks"
        raise Refused(
            f"{dialect.id}: {what}: a dialect bug, please report it",
            dialect=dialect.id,
            path=missing[0].leaf if missing else None,
            ledger=tuple(ledger),
        )


# -- lifting ------------------------------------------------------------------------------------


def lift(
    dialect: Dialect, lowered: Lowered, status: int, headers: Mapping[str, str], body: bytes
) -> Response:
    """Turn a reply into a ``Response`` or raise a typed error; enforce the channel guarantees."""
    if not 200 <= status < 300:
        raise dialect.error(dialect.id, status, body)
    check = Checker(dialect.id)
    if lowered.stream:
        if dialect.stream is None:  # pragma: no cover - lower() never streams such a dialect
            raise AssertionError(f"{dialect.id} has no stream framing")
        reply = dialect.stream.fold(dialect.stream.framing.events(body, check), check)
    else:
        reply = check.decode(body, dialect.compiled.decoder)
    response = read(dialect.reply, lowered, reply, check)
    _enforce(dialect, lowered.channels, response, check)
    return response


def _enforce(dialect: Dialect, wanted: frozenset[str], response: Response, check: Checker) -> None:
    """In schema order of the channels, as the compiled table lists them: a channel the wire
    never returns must be absent; one it guarantees must be present when it was asked for."""
    for name, present, never in dialect.compiled.guarantees:
        if never:
            if present(response):
                raise check.violation(
                    name, f"the reply carries {name}, which this wire never returns"
                )
        elif name in wanted and not present(response):
            raise check.violation(
                name,
                f"{name} was requested and is missing from the reply; the server ignored the "
                "request for it",
            )


# -- what the tables say ------------------------------------------------------------------------


Support = Literal["supported", "partial", "no"]


def _accepts(row: Row) -> bool:
    return not isinstance(row, Refuse)


def capability_outcomes(dialect: Dialect) -> dict[str, Support]:
    """Per capability key: supported (every owned leaf has a row that is not a refusal), no, or
    partial. A ``Group`` or ``Encode`` row counts as accepting: it may still refuse values."""
    kinds: dict[str, set[bool]] = {key: set() for key in CAPABILITIES}
    for leaf in schema_leaves():
        kinds[capability_of(leaf)].add(_accepts(dialect.row_for(leaf)))
    out: dict[str, Support] = {}
    for key, seen in kinds.items():
        out[key] = "supported" if seen == {True} else "no" if seen == {False} else "partial"
    return out


def describe_leaf(dialect: Dialect, leaf: str) -> tuple[str, str]:
    """``(outcome, detail)`` for one schema leaf, from the table: what ``--leaf`` prints."""
    schema = schema_match(leaf)
    if schema is None:
        raise KeyError(leaf)
    key, row = dialect.compiled.rows[schema]
    via = f" (row {key})" if key != schema else ""
    if isinstance(row, Field):
        return "consumed", f"written to {row.path}{via}"
    if isinstance(row, Encode | Group | Options):
        return "encoded", f"{row.doc} [writes {', '.join(row.keys)}]{via}"
    if isinstance(row, NoOp):
        return "noop", row.reason + via
    return "refused", row.reason + via
