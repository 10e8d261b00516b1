"""The pre-flight: start the embedded reference server, and ask each endpoint before the run.

The dialect's ``Endpoint`` names the read-only routes: ``models`` (``GET /v1/models`` on OpenAI
wires), falling back to ``health`` when that route is absent, with a short budget and no retries,
so an unreachable endpoint fails the run before anything is written. ``version`` and the served
model ids are kept for provenance when the server offers them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from ..dialects.auth_hint import rejected_key
from ..dialects.table import Auth, Dialect
from ..errors import ConfigError, ServerRejected, SievalError
from ..transport import HttpTransport, Limits, Timeouts, Transport, get_json, redact_url

__all__ = ["PREFLIGHT_TIMEOUTS", "Provenance", "embedded_server", "preflight"]

PREFLIGHT_TIMEOUTS = Timeouts(total=5.0, connect=3.0, read=5.0)


class Provenance(msgspec.Struct, kw_only=True):
    """What the server says about itself, recorded in ``report.json``."""

    endpoint: str
    """The base URL, redacted (``embedded`` for the reference server)."""
    server_version: Any = None
    """The ``/version`` reply, when the server has one."""
    served_models: list[str] = msgspec.field(default_factory=list)
    """The ids ``/v1/models`` lists."""
    max_model_len: dict[str, int] = msgspec.field(default_factory=dict)
    """Each listed model's maximum length (prompt and generated tokens), where the listing
    gives one (vLLM's and SGLang's ``max_model_len``): the rolling windows' size."""


@contextlib.asynccontextmanager
async def embedded_server() -> AsyncIterator[str]:
    """Run sieval's reference server for the block, on its own thread and event loop (so its
    work is never charged to the client's loop); yields its base URL. It serves only its own
    model id, so a config naming another model fails the model check instead of silently
    evaluating the reference model under that name."""
    from ..reference.server import start_in_thread  # lazy: only `endpoint: embedded` needs it

    server = await asyncio.to_thread(start_in_thread, port=0)
    try:
        yield server.url
    finally:
        await asyncio.to_thread(server.stop)


async def preflight(
    base_url: str,
    *,
    dialect: Dialect,
    api_key: str | None,
    auth: Auth | None = None,
    transport: Transport | None = None,
    shown: str | None = None,
) -> Provenance:
    """Check that ``base_url`` answers; ``ConfigError`` naming the URL when it does not."""
    own = transport is None
    client: Transport = transport or HttpTransport(
        timeouts=PREFLIGHT_TIMEOUTS, limits=Limits(concurrency=2, retries=0)
    )
    secrets = (api_key,) if api_key else ()
    headers = (auth or dialect.auth).headers(api_key)
    name = shown or redact_url(base_url, secrets)
    base = base_url.rstrip("/")
    routes = dialect.endpoint

    async def get(path: str) -> Any:
        return await get_json(
            client, base + path, headers=headers, secrets=secrets, timeout=PREFLIGHT_TIMEOUTS
        )

    try:
        try:
            models = await get(routes.models) if routes.models else None
            if models is None and routes.health:
                await get(routes.health)
        except ServerRejected as exc:
            if exc.status in (401, 403):
                fix = rejected_key(auth or dialect.auth, dialect.auth, key_sent=bool(api_key))
                raise ConfigError(
                    f"{name} refused the API key (HTTP {exc.status} on {routes.models}): {fix}",
                    server=name,
                ) from exc
            if not routes.health:
                raise
            await get(routes.health)
            models = None
        except SievalError as exc:
            raise ConfigError(
                f"cannot reach {name}: {exc.message}; check that the server is up and the "
                "endpoint URL is right",
                server=name,
            ) from exc
        version = None
        if routes.version:
            try:
                version = await get(routes.version)
            except SievalError:
                version = None
        return Provenance(
            endpoint=name,
            server_version=version,
            served_models=_ids(models),
            max_model_len=_lengths(models),
        )
    except SievalError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(
            f"cannot reach {name}: {exc.message}; check that the server is up", server=name
        ) from exc
    finally:
        if own:
            await client.aclose()


def _lengths(models: Any) -> dict[str, int]:
    if not isinstance(models, dict) or not isinstance(models.get("data"), list):
        return {}
    return {
        str(m["id"]): m["max_model_len"]
        for m in models["data"]
        if isinstance(m, dict)
        and "id" in m
        and isinstance(m.get("max_model_len"), int)
        and not isinstance(m.get("max_model_len"), bool)
    }


def _ids(models: Any) -> list[str]:
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        return [str(m["id"]) for m in models["data"] if isinstance(m, dict) and "id" in m]
    return []
