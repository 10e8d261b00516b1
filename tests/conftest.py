"""Shared test helpers: recorded fixtures and the live vLLM server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ("sweeps", "pytester")  # the sweeps' sample-or-full machinery; its own tests

FIXTURES = Path(__file__).parent / "fixtures"
VLLM_VERSION = "0.32.0"


def load_fixture(dialect: str, name: str, version: str = VLLM_VERSION) -> dict[str, Any]:
    """A recorded exchange: ``{"route", "method", "request", "status", "reply" | "reply_sse"}``."""
    data: dict[str, Any] = json.loads((FIXTURES / dialect / version / f"{name}.json").read_text())
    return data


def reply_bytes(fixture: dict[str, Any]) -> bytes:
    if "reply_sse" in fixture:
        return str(fixture["reply_sse"]).encode()
    return json.dumps(fixture["reply"]).encode()


@pytest.fixture(scope="session")
def vllm_url() -> str:
    """The live vLLM's base URL from SIEVAL_VLLM_URL.

    The README's test command (scripts/test) starts vLLM and sets it. Without it the live tests
    fail, unless SIEVAL_SKIP_LIVE=1 asks explicitly to skip them.
    """
    url = os.environ.get("SIEVAL_VLLM_URL")
    if url:
        return url.rstrip("/")
    if os.environ.get("SIEVAL_SKIP_LIVE") == "1":
        pytest.skip("live vLLM tests skipped on request (SIEVAL_SKIP_LIVE=1)")
    pytest.fail(
        "live tests need a running vLLM: run scripts/test (it starts one), or set "
        "SIEVAL_VLLM_URL=http://127.0.0.1:PORT, or SIEVAL_SKIP_LIVE=1 to skip them explicitly"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """scripts/test runs the offline tests (``-m "not live"``) while the servers boot, then
    ``tests/live`` (``-m live``): a live test elsewhere would never run, and an unmarked test in
    ``tests/live`` would run before its server is up."""
    live = Path(__file__).parent / "live"
    for item in items:
        if (live in item.path.parents) != (item.get_closest_marker("live") is not None):
            raise pytest.UsageError(
                f"{item.nodeid}: live tests (pytest.mark.live) go in tests/live/, and only they"
            )
