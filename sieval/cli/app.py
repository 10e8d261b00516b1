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


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"sieval {version('sieval')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate LLMs through a checked, provider-neutral model IR."""
