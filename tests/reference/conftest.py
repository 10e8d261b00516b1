"""Shared fixtures: one reference server per session (plus a wide-logprobs one), one client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from sieval.reference import ReferenceServer, get_model
from sieval.reference.lm import ReferenceModel


@pytest.fixture(scope="session")
def model() -> ReferenceModel:
    return get_model()


@pytest.fixture(scope="session")
async def server() -> AsyncIterator[ReferenceServer]:
    async with ReferenceServer(port=0) as srv:
        yield srv


@pytest.fixture(scope="session")
async def wide_server() -> AsyncIterator[ReferenceServer]:
    """max_logprobs=-1 (whole vocabulary allowed), to see every decode-alike collision."""
    async with ReferenceServer(port=0, max_logprobs=-1) as srv:
        yield srv


@pytest.fixture(scope="session")
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def post(
    client: aiohttp.ClientSession,
    server: ReferenceServer,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    async with client.post(server.url + "/v1/completions", json=body, headers=headers) as r:
        return r.status, await r.json(content_type=None)
