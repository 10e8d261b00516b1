"""Opening the HTML report in Debian's headless ``chromium`` with no network, through playwright.

For the report's browser tests, ``bench/html_report.py`` and ``scripts/screenshots.py``; sieval
itself never starts a browser. ``scripts/browser.sh`` installs chromium; playwright is in the
``dev`` extra and imported only by the caller.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "launch_options", "offline"]

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium (``scripts/browser.sh``), not a browser build of playwright's own."""

CHROMIUM_ARGS = (
    "--no-sandbox",  # root on these machines
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # without these chromium dials out at start (updates, sync, field trials), which a closed
    # network refuses, and the refusals would muddle "the page made no request"
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def launch_options() -> dict[str, Any]:
    """The keyword arguments of ``playwright.chromium.launch`` (sync or async API) for headless
    chromium, or ``FileNotFoundError`` naming ``scripts/browser.sh``."""
    if not CHROMIUM.exists():
        raise FileNotFoundError(
            f"{CHROMIUM} is missing: run scripts/browser.sh (apt-get install chromium)"
        )
    return {"executable_path": str(CHROMIUM), "args": list(CHROMIUM_ARGS)}


def offline(page: Page, url: str) -> list[str]:
    """Let ``page`` (sync API) load ``url`` and nothing else: every other request is aborted
    and its URL appended to the returned list (empty for a page that loads nothing)."""
    attempted: list[str] = []

    def route(request: Route) -> None:
        if request.request.url == url:
            request.continue_()
        else:
            attempted.append(request.request.url)
            request.abort()

    page.route("**/*", route)
    return attempted
