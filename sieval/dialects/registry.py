"""The registry of dialects: every module of this package with a ``DIALECT`` is found and checked.

A new dialect is one module (``dialects/<id>.py`` declaring ``DIALECT``); nothing here changes,
and a helper module (one without ``DIALECT``) needs no entry either. What a dialect supports is
derived from its table (``table.capability_outcomes``), never written here.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass

from ..errors import ConfigError, did_you_mean
from ..ir.request import ChatInput, CompletionInput
from .table import capability_outcomes
from .vocabulary import Dialect, Refuse

__all__ = ["DialectRow", "get_dialect", "registry", "rows"]


@dataclass(frozen=True)
class DialectRow:
    """What ``sieval dialects`` shows for one id, derived from its table."""

    id: str
    route: str
    auth: str
    input_kinds: tuple[str, ...]
    capabilities: dict[str, str]
    summary: str
    dialect: Dialect
    status: str = "active"
    """Every registered dialect is active (``sieval dialects --json`` prints it)."""


def _input_kinds(dialect: Dialect) -> tuple[str, ...]:
    kinds = []
    if not isinstance(dialect.row_for("input.completion.text"), Refuse):
        kinds.append(CompletionInput.__struct_config__.tag)
    if not isinstance(dialect.row_for("input.chat.messages"), Refuse):
        kinds.append(ChatInput.__struct_config__.tag)
    return tuple(str(k) for k in kinds)


def _active(dialect: Dialect) -> DialectRow:
    dialect.check()
    return DialectRow(
        id=dialect.id,
        route=dialect.endpoint.path,
        auth=dialect.auth.describe(),
        input_kinds=_input_kinds(dialect),
        capabilities=dict(capability_outcomes(dialect)),
        summary=dialect.summary,
        dialect=dialect,
    )


def _discover() -> dict[str, Dialect]:
    found: dict[str, Dialect] = {}
    for info in pkgutil.iter_modules(_package_path()):
        if info.name.startswith("_") or info.ispkg or info.name == "registry":
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        dialect = getattr(module, "DIALECT", None)
        if not isinstance(dialect, Dialect):
            continue
        if dialect.id in found:
            raise AssertionError(f"dialect id {dialect.id!r} is declared twice")
        found[dialect.id] = dialect
    return found


def _package_path() -> list[str]:
    package = importlib.import_module(__package__ or "sieval.dialects")
    return list(package.__path__)


@functools.cache
def registry() -> dict[str, DialectRow]:
    """Every dialect id, its table checked."""
    return {d.id: _active(d) for d in sorted(_discover().values(), key=lambda d: d.id)}


def rows() -> tuple[DialectRow, ...]:
    return tuple(registry().values())


def get_dialect(dialect_id: str) -> Dialect:
    """The dialect for an id, or ``ConfigError`` naming the known ids."""
    known = registry()
    row = known.get(dialect_id)
    if row is None:
        raise ConfigError(
            f"unknown dialect {dialect_id!r}.{did_you_mean(dialect_id, known)} Known ids: "
            f"{', '.join(known)}.",
            path="dialect",
            received=dialect_id,
        )
    return row.dialect
