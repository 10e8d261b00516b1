"""The typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="sieval",
    help="Evaluate LLMs through a checked, provider-neutral model IR.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Evaluate LLMs through a checked, provider-neutral model IR."""
