"""``sieval dialects``: every dialect id, its status and capability matrix, or one leaf's rows."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..dialects.registry import DialectRow, rows
from ..dialects.table import describe_leaf
from ..errors import did_you_mean
from ..ir.capabilities import CAPABILITIES
from ..ir.leaves import schema_leaves, schema_match
from . import common
from .app import app

_MARK = {"supported": "yes", "partial": "part", "no": "-"}


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


def render_dialects(table_rows: tuple[DialectRow, ...]) -> Group:
    """Two tables that fit 80 columns: the dialects with their route (never broken inside a
    word) and auth, then the capability matrix headed by the dialects' short names."""
    listing = Table(title="sieval dialects", box=box.SIMPLE_HEAD, pad_edge=False)
    listing.add_column("dialect", no_wrap=True)
    listing.add_column("input", no_wrap=True)
    listing.add_column("route, then auth")
    for r in table_rows:
        route = Text(r.route or "-", no_wrap=True, overflow="ellipsis")
        cell = Group(route, Text(r.auth or "-", style="dim"))
        listing.add_row(r.id, ", ".join(r.input_kinds) or "-", cell)
    matrix = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    matrix.add_column("capability", no_wrap=True)
    for r in table_rows:
        matrix.add_column(short_name(r.id), justify="center")
    for key in CAPABILITIES:
        matrix.add_row(key, *[_MARK.get(r.capabilities.get(key, ""), "?") for r in table_rows])
    return Group(listing, matrix)


_SHORT = {"completions": "compl", "responses": "resp", "messages": "", "genai": "", "native": ""}
"""Words a matrix header leaves out or shortens: the dialect's vendor stays, and what tells
apart two of one vendor's wires."""


def short_name(dialect_id: str) -> str:
    """A matrix header: ``openai_completions`` -> ``openai`` over ``compl``; ``vllm_native`` ->
    ``vllm``."""
    head, _, tail = dialect_id.partition("_")
    tail = _SHORT.get(tail, tail)
    return f"{head}\n{tail}" if tail else head


def leaf_decisions(leaf: str) -> list[dict[str, str]]:
    """What each dialect's table says about one request leaf (``--leaf``)."""
    out = []
    for r in rows():
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
        Console().print(render_leaf(leaf, decisions))
        return
    if as_json:
        typer.echo(json.dumps(dialect_matrix(), indent=2))
        return
    table_rows = rows()
    Console().print(render_dialects(table_rows))
    typer.echo("yes = supported, part = partly (see --leaf), - = refused before any request.")
