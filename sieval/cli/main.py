"""Entry point of the ``sieval`` console script: imports each command module, then runs the app."""

from __future__ import annotations

from . import dialects as _dialects  # noqa: F401  (registers its commands)
from . import eval as _eval  # noqa: F401  (registers eval, tasks, report)
from .app import app

__all__ = ["main"]


def main() -> None:
    app()
