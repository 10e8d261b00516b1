"""The pre-flight: start the embedded reference server, and ask each endpoint before the run.

The dialect's ``Endpoint`` names the read-only routes: ``model_info`` (Google's ``GET
/v1beta/models/{model}``), ``models`` (``GET /v1/models`` on OpenAI wires, ``GET /v1beta/models`` on
Google's), falling back to ``health`` when that route is absent, with a short budget and no
retries; a wire where none answers gets one first request of 1 output token. So an unreachable
endpoint, a refused key or (where the server says so) an unknown model fails the run before
anything is written. ``version`` and the served
model ids are kept for provenance when the server offers them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from ..dialects.auth_hint import rejected_key
from ..dialects.envelopes import message_kind, server_message
from ..dialects.table import lift, lower
from ..dialects.vocabulary import Auth, Dialect, model_length
from ..errors import ConfigError, Refused, ServerRejected, SievalError, TransportError
from ..ir.request import ChatInput, Message, Request, Sampling, TextPart
from ..plan.config import EMBEDDED
from ..results.document import Server
from ..setting_names import setting
from ..transport import (
    HttpRequest,
    HttpTransport,
    Limits,
    Timeouts,
    Transport,
    get_json,
    redact,
    redact_url,
)

__all__ = ["PREFLIGHT_TIMEOUTS", "Provenance", "embedded_server", "preflight", "served_models"]

PREFLIGHT_TIMEOUTS = Timeouts(total=5.0, connect=3.0, read=5.0)


class Provenance(Server, kw_only=True):
    """What the server says about itself (``Server``: the part ``report.json`` records), and
    what the run needs beside it."""

    model_answered: bool = False
    """The model id was checked by a first request of 1 token (no listing sieval could read)."""
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
    model_id: str | None = None,
) -> Provenance:
    """Check that ``base_url`` answers; ``ConfigError`` naming the URL when it does not.

    The routes asked, in order, each when the wire has it: the model's own route (Google's
    ``GET /v1beta/models/{model}``: a 404 naming the model stops the run), the listing, the health
    route; a wire with none of them answering (LiteLLM's Gemini proxy) gets one first request
    of 1 output token. ``Provenance.checked_by`` says which answered."""
    own = transport is None
    client: Transport = transport or HttpTransport(
        timeouts=PREFLIGHT_TIMEOUTS, limits=Limits(concurrency=2, retries=0)
    )
    secrets = (api_key,) if api_key else ()
    used = auth or dialect.auth
    headers = used.headers(api_key)
    name = shown or redact_url(base_url, secrets)
    base = base_url.rstrip("/")
    routes = dialect.endpoint

    async def get(path: str) -> Any:
        return await get_json(
            client, base + path, headers=headers, secrets=secrets, timeout=PREFLIGHT_TIMEOUTS
        )

    def refused(exc: ServerRejected, route: str) -> ConfigError:
        fix = rejected_key(used, dialect.auth, key_sent=bool(api_key))
        said = server_message(exc.server_message.encode())
        said = "" if exc.status in (401, 403) else f": {said}"
        return ConfigError(
            f"{name} refused the API key (HTTP {exc.status} on {route}{said}): {fix}", server=name
        )

    def key_refused(exc: ServerRejected) -> bool:
        return exc.status in (401, 403) or message_kind(exc.server_message) == "key_refused"

    try:
        models: Any = None
        checked = ""
        answered = False
        info = routes.info_path(model_id) if model_id else None
        if info is not None and model_id is not None:
            try:
                described = await get(info)
                checked = f"GET {info}"
                models = _listing(described)
            except ServerRejected as exc:
                if key_refused(exc):
                    raise refused(exc, info) from exc
                if exc.status == 404 and model_id in exc.server_message:
                    listing = await _quietly(get, routes.models)
                    raise _not_served(name, model_id, f"GET {info}", exc, listing) from exc
                # any other 4xx: the route is absent (LiteLLM's proxy: a FastAPI 404)
        if not checked and routes.models:
            try:
                models = await get(routes.models)
                checked = f"GET {routes.models}"
            except ServerRejected as exc:
                if key_refused(exc):
                    raise refused(exc, routes.models) from exc
                if not routes.health and not (info and model_id):
                    raise
            except SievalError as exc:
                raise _unreachable(name, exc, bool(api_key)) from exc
        if not checked and routes.health:
            try:
                await get(routes.health)
            except SievalError as exc:
                raise _unreachable(name, exc, bool(api_key)) from exc
            checked = f"GET {routes.health}"
        if checked and model_id is not None and shown != EMBEDDED:
            await _check_route(client, base, name, dialect, model_id, headers, secrets, checked)
        served = _ids(models)
        unread = models is not None and not served
        if (not checked or unread) and model_id is not None:
            first = await _first_request(client, base, name, dialect, model_id, headers, secrets)
            checked = (
                f"{first}; {checked} answered {_shape(models)}, no ids"
                if unread
                else f"{first} (no models route answered)"
            )
            answered = True
        version = None
        if routes.version:
            try:
                version = await get(routes.version)
            except SievalError:
                version = None
        return Provenance(
            endpoint=name,
            server_version=version,
            served_models=served,
            max_model_len=_lengths(models),
            checked_by=checked,
            model_answered=answered,
        )
    except SievalError as exc:
        if isinstance(exc, ConfigError):
            raise
        if isinstance(exc, ServerRejected) and key_refused(exc):
            raise refused(exc, "the first request") from exc
        raise _unreachable(name, exc, bool(api_key)) from exc
    finally:
        if own:
            await client.aclose()


FIRST_REQUEST_TIMEOUTS = Timeouts(total=60.0, connect=3.0, read=60.0)
"""The first request generates one token: a server's slowest reply, not a probe's."""


async def _first_request(
    client: Transport,
    base: str,
    name: str,
    dialect: Dialect,
    model_id: str,
    headers: dict[str, str],
    secrets: tuple[str, ...],
) -> str:
    """One request of 1 output token, for a server that lists nothing or nothing sieval can read
    (what it answers says whether the model, the key and the URL are right); the route it used."""
    chat = Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text="Hi"),)),)),
        sampling=Sampling(max_tokens=1),
    )
    try:
        lowered = lower(dialect, chat, model_id)
    except Refused:  # a wire of raw prompts
        lowered = lower(
            dialect, Request.completion("Hi", sampling=Sampling(max_tokens=1)), model_id
        )
    reply = await client.send(
        HttpRequest(
            url=base + lowered.path,
            method=lowered.method,
            headers=headers,
            body=msgspec.json.encode(lowered.body),
            secrets=secrets,
            timeout=FIRST_REQUEST_TIMEOUTS,
        )
    )
    route = f"POST {lowered.path}, a first request of 1 output token"
    try:
        lift(dialect, lowered, reply.status, reply.headers, reply.body)
    except ServerRejected as exc:
        # a proxy may echo the key it refused
        exc.server_message = redact(exc.server_message, secrets)
        exc.message = redact(exc.message, secrets)
        if exc.status in (401, 403) or message_kind(exc.server_message) == "key_refused":
            raise
        if exc.status in _NO_ROUTE and message_kind(exc.server_message) != "unknown_model":
            # a 404 that names no model: the route is missing (vLLM has no Google route)
            answers = await _wires_answered(client, base, dialect, model_id, headers, secrets)
            raise _no_route(
                name, dialect, f"{lowered.method} {lowered.path}", exc, answers
            ) from exc
        if exc.status == 404 or message_kind(exc.server_message) == "unknown_model":
            raise _not_served(name, model_id, route, exc, None) from exc
        raise ConfigError(
            f"{name} refused the first request ({route}) with HTTP {exc.status}: "
            f"{exc.server_message}; check {setting('model', 'ID')} and the key",
            path="model",
            server=name,
        ) from exc
    return route


_NO_ROUTE = (404, 405)
"""What a server answers a POST to a route it does not have (FastAPI's and aiohttp's 404, a
405 where the path exists for GET only)."""


async def _route_status(
    client: Transport,
    base: str,
    dialect: Dialect,
    model_id: str,
    headers: dict[str, str],
    secrets: tuple[str, ...],
) -> tuple[str, int, str]:
    """The dialect's request route asked with an empty body ``{}``: a server that has the route
    refuses the body (400, 422) without generating anything; one that has not answers 404. The
    route, the status and the server's message."""
    endpoint = dialect.endpoint
    route = f"{endpoint.method} {endpoint.url_path(model_id, False)}"
    reply = await client.send(
        HttpRequest(
            url=base + endpoint.url_path(model_id, False),
            method=endpoint.method,
            headers=headers,
            body=b"{}",
            secrets=secrets,
            timeout=PREFLIGHT_TIMEOUTS,
        )
    )
    return route, reply.status, redact(server_message(reply.body), secrets)


async def _check_route(
    client: Transport,
    base: str,
    name: str,
    dialect: Dialect,
    model_id: str,
    headers: dict[str, str],
    secrets: tuple[str, ...],
    checked: str,
) -> None:
    """A server whose listing answered but whose wire route is missing speaks another wire (a
    chat-only server asked for ``/v1/completions``): refused here, before a run directory
    exists, with the wires it does answer."""
    try:
        route, status, said = await _route_status(client, base, dialect, model_id, headers, secrets)
    except SievalError:
        return  # unreachable now: the run's own requests say so, with their retries
    if status not in _NO_ROUTE or message_kind(said) == "unknown_model":
        return
    answers = await _wires_answered(client, base, dialect, model_id, headers, secrets)
    raise ConfigError(
        f"{name} answered {checked} but not {route} (HTTP {status}: {said}): it may not speak "
        f"{dialect.id}; {_try(answers)}",
        dialect=dialect.id,
        path="dialect",
        server=name,
    )


async def _wires_answered(
    client: Transport,
    base: str,
    dialect: Dialect,
    model_id: str,
    headers: dict[str, str],
    secrets: tuple[str, ...],
) -> list[str]:
    """The other dialects whose request route this server has (asked with ``{}``, as above)."""
    from ..dialects.registry import registry

    found: list[str] = []
    seen: set[str] = {dialect.endpoint.url_path(model_id, False)}
    for row in registry().values():
        other = row.dialect
        path = other.endpoint.url_path(model_id, False)
        if other.id == dialect.id or path in seen:
            continue
        seen.add(path)
        try:
            status = (await _route_status(client, base, other, model_id, headers, secrets))[1]
        except SievalError:
            continue
        if status not in _NO_ROUTE and status not in (401, 403):
            found.append(other.id)
    return found


def _try(answers: list[str]) -> str:
    """What to try instead: the dialects whose route answered, as the run was started."""
    completion = {"openai_completions", "vllm_native", "sglang_native"}
    scoring = (
        " (the scoring tasks, PPL and CLP, need a completion wire: openai_completions, "
        "vllm_native or sglang_native)"
    )
    if not answers:
        return (
            f"check the URL, or choose the dialect it speaks with {setting('dialect', 'ID')} "
            f"('sieval dialects'){scoring}"
        )
    chat = [d for d in answers if d not in completion]
    picks = []
    if "openai_chat" in answers:
        picks.append(f"{setting('kind', 'chat')} (openai_chat)")
    picks += [setting("dialect", d) for d in answers if d != "openai_chat"]
    note = scoring if chat and not set(answers) & completion else ""
    return f"it answers the routes of {', '.join(answers)}: try {' or '.join(picks)}{note}"


def _no_route(
    name: str, dialect: Dialect, route: str, exc: ServerRejected, answers: list[str]
) -> ConfigError:
    said = server_message(exc.server_message.encode())
    return ConfigError(
        f"{name} has no route {route} (HTTP {exc.status}: {said}): the route is missing, not the "
        f"model; the server may not speak {dialect.id}; {_try(answers)}",
        dialect=dialect.id,
        path="dialect",
        server=name,
    )


def _not_served(
    name: str, model_id: str, route: str, exc: ServerRejected, listing: Any
) -> ConfigError:
    served = _ids(listing)
    listed = f"; it serves {', '.join(served)}" if served else ""
    said = server_message(exc.server_message.encode())
    return ConfigError(
        f"{name} does not serve model {model_id!r} (HTTP {exc.status} on {route}: "
        f"{said}){listed}: set {setting('model', 'ID')} to a model it serves",
        path="model",
        server=name,
    )


def _unreachable(name: str, exc: SievalError, key_sent: bool) -> ConfigError:
    # LiteLLM 1.108.7's Gemini routes answer a request without a key with a bare 500
    answered = isinstance(exc, TransportError) and exc.status is not None
    unkeyed = (
        f"; no key was sent: if the server needs one, name it with {setting('api_key_env', 'VAR')}"
        if answered and not key_sent
        else ""
    )
    cause = exc.cause if isinstance(exc, TransportError) and exc.cause else exc.message
    return ConfigError(
        f"cannot reach {name}: {cause}; check that the server is up and the endpoint URL is "
        f"right{unkeyed}",
        server=name,
    )


async def _quietly(get: Any, path: str | None) -> Any:
    """``get(path)``, or ``None`` when there is no such route or it fails."""
    if not path:
        return None
    try:
        return await get(path)
    except SievalError:
        return None


def _listing(described: Any) -> Any:
    """One model's description (Google's ``Model``) as a listing of it."""
    return {"models": [described]} if isinstance(described, dict) else None


def _lengths(models: Any) -> dict[str, int]:
    if not isinstance(models, dict) or not isinstance(models.get("data"), list):
        return {}
    return {
        str(m["id"]): length
        for m in models["data"]
        if isinstance(m, dict)
        and "id" in m
        and (length := model_length(m.get("max_model_len"))) is not None
    }


def _ids(models: Any) -> list[str]:
    """The ids of a models listing: OpenAI's (``data[].id``), Google's (``models[].name``,
    without its ``models/``), or a bare list; each entry's ``id``, else its ``name``."""
    entries = models
    if isinstance(models, dict):
        entries = next(
            (models[k] for k in ("data", "models") if isinstance(models.get(k), list)), []
        )
    if not isinstance(entries, list):
        return []
    ids = []
    for m in entries:
        named = m.get("id", m.get("name")) if isinstance(m, dict) else m
        if isinstance(named, str) and named:
            ids.append(named.removeprefix("models/"))
    return ids


def _shape(listing: Any) -> str:
    """What a listing sieval cannot read looks like, for the report."""
    if isinstance(listing, dict):
        return f"an object with keys {', '.join(sorted(map(str, listing))) or '(none)'}"
    if isinstance(listing, list):
        return f"a list of {len(listing)} entries"
    return f"a {type(listing).__name__}"


async def served_models(base_url: str, dialect: Dialect, api_key: str | None = None) -> list[str]:
    """The model ids ``base_url`` lists on the dialect's models route (one short GET, no
    retries); empty when it lists none or cannot be asked. For a command that forgot its model
    id: the error then names what the server serves."""
    client = HttpTransport(timeouts=PREFLIGHT_TIMEOUTS, limits=Limits(concurrency=1, retries=0))
    secrets = (api_key,) if api_key else ()
    try:
        if not dialect.endpoint.models:
            return []
        listing = await get_json(
            client,
            base_url.rstrip("/") + dialect.endpoint.models,
            headers=dialect.auth.headers(api_key),
            secrets=secrets,
            timeout=PREFLIGHT_TIMEOUTS,
        )
        return _ids(listing)
    except SievalError:
        return []
    finally:
        await client.aclose()
