"""Entry point of the ``sieval`` console script: runs the app, whose commands' modules are
imported when they run (``app.COMMANDS``)."""

from __future__ import annotations

from .app import app

__all__ = ["app", "main"]


def main() -> None:
    app()
