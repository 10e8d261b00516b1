"""``sieval dialects``: every dialect id, its status and capability matrix, or one leaf's rows."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..dialects.registry import DialectRow, rows
from ..dialects.table import describe_leaf
from ..errors import did_you_mean
from ..ir.capabilities import CAPABILITIES
from ..ir.leaves import schema_leaves, schema_match
from . import common
from .app import app

_MARK = {"supported": "yes", "partial": "partial", "no": "-"}


def dialect_matrix() -> list[dict[str, Any]]:
    """The registry as plain data (what ``--json`` prints)."""
    return [
        {
            "id": r.id,
            "status": r.status,
            "route": r.route,
            "auth": r.auth,
            "input_kinds": list(r.input_kinds),
            "capabilities": r.capabilities,
            "summary": r.summary,
        }
        for r in rows()
    ]


def render_dialects(table_rows: tuple[DialectRow, ...]) -> Table:
    table = Table(title="sieval dialects", show_lines=False)
    table.add_column("capability")
    for r in table_rows:
        table.add_column(r.id, justify="center", overflow="fold")
    for label, values in (
        ("status", [r.status for r in table_rows]),
        ("route", [r.route or "-" for r in table_rows]),
        ("auth", [r.auth or "-" for r in table_rows]),
        ("input", [", ".join(r.input_kinds) or "-" for r in table_rows]),
    ):
        table.add_row(label, *values, style="bold" if label == "status" else None)
    table.add_section()
    for key in CAPABILITIES:
        table.add_row(key, *[_MARK.get(r.capabilities.get(key, ""), "?") for r in table_rows])
    return table


def leaf_decisions(leaf: str) -> list[dict[str, str]]:
    """What each dialect's table says about one request leaf (``--leaf``)."""
    out = []
    for r in rows():
        if r.dialect is None:
            out.append({"dialect": r.id, "outcome": "planned", "detail": r.summary})
            continue
        outcome, detail = describe_leaf(r.dialect, leaf)
        out.append({"dialect": r.id, "outcome": outcome, "detail": detail})
    return out


def render_leaf(leaf: str, decisions: list[dict[str, str]]) -> Table:
    table = Table(title=f"{leaf}: each dialect's row", show_lines=True)
    for column in ("dialect", "outcome", "detail"):
        table.add_column(column, overflow="fold")
    for d in decisions:
        table.add_row(d["dialect"], d["outcome"], escape(d["detail"]))
    return table


@app.command()
def dialects(
    as_json: bool = typer.Option(False, "--json", help="Print as JSON data."),
    leaf: str | None = typer.Option(
        None,
        "--leaf",
        help="Show each dialect's decision for one request leaf, e.g. sampling.seed.",
    ),
) -> None:
    """List the dialects with their status and capability matrix (from their tables)."""
    if leaf is not None:
        if schema_match(leaf) is None:
            hint = did_you_mean(leaf, schema_leaves())
            raise common.fail(
                f"{leaf!r} is not a request leaf.{hint} Leaves: {', '.join(schema_leaves())}"
            )
        decisions = leaf_decisions(leaf)
        if as_json:
            typer.echo(json.dumps(decisions, indent=2))
            return
        Console(width=160).print(render_leaf(leaf, decisions))
        return
    if as_json:
        typer.echo(json.dumps(dialect_matrix(), indent=2))
        return
    Console(width=200).print(render_dialects(rows()))
    typer.echo("'?' = planned: its capabilities are derived when its table lands.")
