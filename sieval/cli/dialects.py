"""``sieval dialects``: the seven dialect ids, their status and capability matrix."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from ..dialects.registry import DialectRow, rows
from ..ir.capabilities import CAPABILITIES
from .app import app

_MARK = {"supported": "yes", "partial": "partial", "no": "-"}


def dialect_matrix() -> list[dict[str, Any]]:
    """The registry as plain data (what ``--json`` prints)."""
    return [
        {
            "id": r.id,
            "status": r.status,
            "route": r.route,
            "family": r.family,
            "input_kinds": list(r.input_kinds),
            "modalities": list(r.modalities),
            "seed": r.seed,
            "capabilities": r.capabilities,
        }
        for r in rows()
    ]


def render_dialects(table_rows: tuple[DialectRow, ...]) -> Table:
    table = Table(title="sieval dialects", show_lines=False)
    table.add_column("capability")
    for r in table_rows:
        table.add_column(r.id, justify="center")
    for label, values in (
        ("status", [r.status for r in table_rows]),
        ("route", [r.route for r in table_rows]),
        ("input", [", ".join(r.input_kinds) for r in table_rows]),
        ("modalities", [", ".join(r.modalities) for r in table_rows]),
        ("seed", [r.seed for r in table_rows]),
    ):
        table.add_row(label, *values, style="bold" if label == "status" else None)
    table.add_section()
    for key in CAPABILITIES:
        table.add_row(key, *[_MARK.get(r.capabilities.get(key, ""), "?") for r in table_rows])
    return table


@app.command()
def dialects(
    as_json: bool = typer.Option(False, "--json", help="Print the matrix as JSON data."),
) -> None:
    """List the seven dialects with their status and capability matrix."""
    if as_json:
        typer.echo(json.dumps(dialect_matrix(), indent=2))
        return
    Console(width=200).print(render_dialects(rows()))
    typer.echo("'?' = not yet implemented: its capabilities are derived when its table lands.")
