"""The registry of all seven dialect ids, with import-time self-checks.

An active row comes from its dialect module's ``DIALECT`` table; a planned row names only what the
wire is (family, inputs, modalities, seed) until its module lands. Capability outcomes are derived
from the tables (``plane.capability_outcomes``), never written here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError
from . import openai_completions, vllm_native
from .plane import Dialect, capability_outcomes

__all__ = ["REGISTRY", "DialectRow", "get_dialect", "rows"]

Status = Literal["active", "not yet implemented"]


@dataclass(frozen=True)
class DialectRow:
    id: str
    status: Status
    route: str
    family: str
    input_kinds: tuple[str, ...]
    modalities: tuple[str, ...]
    seed: Literal["supported", "unsupported", "best-effort", "conditional"]
    capabilities: dict[str, str]
    dialect: Dialect | None = None


def _active(dialect: Dialect) -> DialectRow:
    dialect.check()
    caps = capability_outcomes(dialect)
    seed = caps["seed"]
    return DialectRow(
        id=dialect.id,
        status="active",
        route=dialect.route,
        family=dialect.family,
        input_kinds=tuple(sorted(dialect.input_kinds)),
        modalities=tuple(sorted(dialect.modalities)),
        seed="supported"
        if seed == "supported"
        else "unsupported"
        if seed == "no"
        else "conditional",
        capabilities=dict(caps),
        dialect=dialect,
    )


def _planned(
    id: str,
    route: str,
    family: str,
    inputs: tuple[str, ...],
    modalities: tuple[str, ...],
    seed: str,
) -> DialectRow:
    return DialectRow(
        id=id,
        status="not yet implemented",
        route=route,
        family=family,
        input_kinds=inputs,
        modalities=modalities,
        seed=seed,  # type: ignore[arg-type]
        capabilities={},
    )


_ROWS = (
    _active(openai_completions.DIALECT),
    _planned(
        "openai_chat",
        "/v1/chat/completions",
        "openai-compatible HTTP (Bearer)",
        ("chat",),
        ("text", "image"),
        "supported",
    ),
    _planned(
        "openai_responses",
        "/v1/responses",
        "openai-compatible HTTP (Bearer)",
        ("chat",),
        ("text", "image"),
        "unsupported",
    ),
    _planned(
        "anthropic_messages",
        "/v1/messages",
        "Anthropic HTTP (x-api-key + anthropic-version)",
        ("chat",),
        ("text", "image"),
        "unsupported",
    ),
    _planned(
        "google_genai",
        "/v1beta/models/{model}:generateContent",
        "Google HTTP (x-goog-api-key)",
        ("chat",),
        ("text", "image"),
        "supported",
    ),
    _planned(
        "sglang_native",
        "/generate",
        "SGLang HTTP (Bearer)",
        ("completion",),
        ("text", "image"),
        "conditional",
    ),
    _active(vllm_native.DIALECT),
)

REGISTRY: dict[str, DialectRow] = {row.id: row for row in _ROWS}
assert len(REGISTRY) == 7, "the registry must list all seven dialect ids exactly once"


def rows() -> tuple[DialectRow, ...]:
    return _ROWS


def get_dialect(dialect_id: str) -> Dialect:
    """The active dialect for an id, or ``ConfigError`` naming what exists and what works."""
    row = REGISTRY.get(dialect_id)
    active = sorted(r.id for r in _ROWS if r.status == "active")
    if row is None:
        close = difflib.get_close_matches(dialect_id, REGISTRY, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown dialect {dialect_id!r}.{hint} Known ids: {', '.join(REGISTRY)}.",
            path="dialect",
            received=dialect_id,
        )
    if row.dialect is None:
        raise ConfigError(
            f"dialect {dialect_id!r} is registered but not yet implemented; "
            f"active dialects: {', '.join(active)}",
            path="dialect",
            received=dialect_id,
        )
    return row.dialect
