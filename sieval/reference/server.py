"""The embedded reference server: the wires of ``reference/wires/`` composed in one aiohttp app.

Each wire brings its routes (pure renderers), its auth, its error envelope and its body faults;
this module applies them in one place: auth, then the model named in the path (the server
answers only to its own id), then faults (set per server or by header), then replay, then the
route. Every module of ``wires/`` that declares a ``WIRE`` is served.

In-process use::

    async with ReferenceServer(port=0) as server:
        url = server.url            # http://127.0.0.1:<port>

From synchronous code (CLI): ``handle = start_in_thread(); ...; handle.stop()``; standalone:
``main(host, port, ...)`` (blocks; what ``sieval serve`` calls).

Faults: see :mod:`sieval.reference.faults`. Replay: see :mod:`sieval.reference.replay`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import json
import pkgutil
import random
import threading
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, cast

import msgspec
from aiohttp import web

from . import wires
from .faults import BODY_MODES, CUTS, Fault, FaultBook, WithoutBos, alter_events, parse_fault
from .lm import ReferenceModel, get_model
from .numerics import NUMERIC_MODES, SAMPLING_DEFAULTS, NumericFaults
from .replay import ReplayBook
from .tool_calls import PARSER_FAULTS
from .wires import Context, Reply, Route, Wire, WireError

__all__ = [
    "DEFAULT_MODEL_NAME",
    "WIRES",
    "ReferenceServer",
    "RunningServer",
    "main",
    "serve_forever",
    "start_in_thread",
]

DEFAULT_MODEL_NAME = "sieval-reference"


def _discover() -> tuple[Wire, ...]:
    """The ``WIRE`` of every module of ``reference/wires/``: a new wire is one module."""
    found = []
    for info in pkgutil.iter_modules(wires.__path__):
        module = importlib.import_module(f"{wires.__name__}.{info.name}")
        wire = getattr(module, "WIRE", None)
        if isinstance(wire, Wire):
            found.append(wire)
    routes = [(r.method, r.path) for w in found for r in w.routes]
    clash = {r for r in routes if routes.count(r) > 1}
    if clash:
        raise AssertionError(f"two wires serve the same routes: {sorted(clash)}")
    return tuple(sorted(found, key=lambda w: w.name))


WIRES: tuple[Wire, ...] = _discover()
"""The wires served, each with its own routes, auth and error envelope."""

_JSON = "application/json"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=_encode(body), status=status, content_type=_JSON, headers=headers)


class ReferenceServer:
    """The reference server; an async context manager binding ``host:port`` (0 = free port)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        model_name: str = DEFAULT_MODEL_NAME,
        api_key: str | None = None,
        max_model_len: int = 4096,
        max_logprobs: int = 100,
        seed: int = 0,
        faults: str | None = None,
        replay: str | Path | Iterable[dict[str, Any]] | None = None,
        model: ReferenceModel | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.model_name = model_name
        self.api_key = api_key
        self.model = model or get_model()
        self.context = Context(
            served_model=model_name,
            model=self.model,
            max_model_len=max_model_len,
            max_logprobs=max_logprobs,
            server_rng=random.Random(seed),
        )
        self.fault = parse_fault(faults) if faults else None
        self.fault_book = FaultBook()
        self.numerics = NumericFaults()
        self.replay = ReplayBook(replay) if replay is not None else None
        self._runner: web.AppRunner | None = None
        self.in_flight = 0
        """Requests being answered now."""
        self.peak_in_flight = 0
        """The most requests it answered at once (what a client's budget must bound)."""
        self.app = self._build_app()

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123`` (valid once started)."""
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Bind and start serving."""
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        bound = self._runner.addresses  # (host, port, ...) of each socket: port 0 resolved
        if bound:
            self.port = int(bound[0][1])

    async def stop(self) -> None:
        """Stop serving and release the port."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ReferenceServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the app: every wire's routes behind auth, faults and replay ----------------------------

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024**2)
        for wire in WIRES:
            for route in wire.routes:
                app.router.add_route(route.method, route.path, self._handler(wire, route))
        return app

    def _handler(self, wire: Wire, route: Route) -> Handler:
        async def counted(request: web.Request) -> web.StreamResponse:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                return await handle(request)
            finally:
                self.in_flight -= 1

        async def handle(request: web.Request) -> web.StreamResponse:
            if (
                self.api_key is not None
                and request.path.startswith(wire.guarded)
                and not wire.authorized(request.headers, self.api_key)
            ):
                status, body = wire.unauthorized
                return _json(body, status=status)
            named = request.match_info.get(route.model_param) if route.model_param else None
            if named is not None and named != self.model_name and wire.unknown_model is not None:
                missing = wire.unknown_model(named, route.path)
                return _json(missing.body(), status=missing.status)
            fault: Fault | None = None
            if route.method == "POST" and route.faults:
                try:
                    fault = self._active_fault(request)
                except ValueError as exc:
                    return _json(
                        wire.error(400, f"sieval reference: {exc}", "BadRequestError"), 400
                    )
                if fault is not None and fault.mode not in BODY_MODES:
                    early = await self._early_fault(wire, fault)
                    if early is not None:
                        return early
                    if fault.mode == "delay":
                        fault = None
            try:
                body = await self._read_body(wire, request) if route.method == "POST" else None
                if self.replay is not None and route.method == "POST":
                    return self._replayed(wire, route, body)
                context = self.context
                if fault is not None and fault.mode == "no-bos":
                    no_bos = cast(ReferenceModel, WithoutBos(context.model))
                    context = dataclasses.replace(context, model=no_bos)
                if fault is not None and fault.mode in NUMERIC_MODES:
                    numbers = await self.numerics.model_for(fault.mode, body, context.model)
                    context = dataclasses.replace(context, model=numbers)
                if fault is not None and fault.mode == "sampling-default":
                    context = dataclasses.replace(context, sampling_defaults=SAMPLING_DEFAULTS)
                if fault is not None and fault.mode in PARSER_FAULTS:
                    context = dataclasses.replace(context, tool_fault=fault.mode)
                if fault is not None and fault.mode == "judge-unparseable":
                    context = dataclasses.replace(context, judge_fault=True)
                reply = route.render(body, context)
            except WireError as exc:
                return _json(exc.body(), status=exc.status)
            if reply.events is not None:
                return await self._stream(request, wire, reply, fault)
            return await self._send(request, wire, reply, fault)

        return counted

    async def _read_body(self, wire: Wire, request: web.Request) -> Any:
        raw = await request.read()
        try:
            body = _decode(raw)
        except msgspec.DecodeError as exc:
            raise wire.bad_json(str(exc)) from exc
        if not isinstance(body, dict):
            raise wire.bad_json(None)
        return body

    def _replayed(self, wire: Wire, route: Route, body: Any) -> web.Response:
        assert self.replay is not None
        rec = self.replay.lookup(route.path, body)
        if rec is None:
            message = (
                f"sieval reference replay: no recorded reply for POST {route.path} with this "
                "body (keys are the canonical JSON of the request)"
            )
            return _json(wire.error(404, message, "NotFoundError"), status=404)
        return web.Response(body=rec.body, status=rec.status, content_type=rec.content_type)

    def _active_fault(self, request: web.Request) -> Fault | None:
        header = request.headers.get("x-sieval-fault")
        if header:
            fault = parse_fault(header)
        elif self.fault is not None:
            fault = self.fault
        else:
            return None
        if self.fault_book.fires(fault, request.headers.get("x-sieval-fault-key")):
            return fault
        return None

    async def _early_fault(self, wire: Wire, fault: Fault) -> web.StreamResponse | None:
        """Faults that replace the reply (429, 5xx, an HTML page) or delay it."""
        mode = fault.mode
        if mode == "429":
            retry = fault.options.get("retry-after", "1")
            body = wire.error(429, "sieval reference: injected rate limit", "RateLimitError")
            return _json(body, status=429, headers={"Retry-After": retry})
        if mode in ("500", "503"):
            status = int(mode)
            headers = {}
            if "retry-after" in fault.options:
                headers["Retry-After"] = fault.options["retry-after"]
            kind = "InternalServerError" if status == 500 else "ServiceUnavailableError"
            body = wire.error(status, f"sieval reference: injected {status}", kind)
            return _json(body, status=status, headers=headers)
        if mode == "html":
            status = int(fault.number("status", 502))
            page = (
                "<html><head><title>502 Bad Gateway</title></head><body>"
                "<center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>"
                "</body></html>\n"
            )
            return web.Response(text=page, status=status, content_type="text/html")
        if mode == "delay":
            await asyncio.sleep(fault.number("seconds", 30.0))
        return None  # delay, truncate, reset: build the normal reply first

    async def _send(
        self, request: web.Request, wire: Wire, reply: Reply, fault: Fault | None
    ) -> web.StreamResponse:
        if reply.body is None:
            return web.Response(status=reply.status)
        if fault is None:
            return _json(reply.body, status=reply.status)
        if fault.mode in BODY_MODES and wire.alter is not None:
            wire.alter(reply.body, fault.mode)
            text = json.dumps(
                reply.body
            )  # NaN stays the bare token NaN, as Python's json writes it
            return web.Response(text=text, status=reply.status, content_type=_JSON)
        if fault.mode == "stream-error":  # no stream to break: the whole reply fails
            body = wire.error(500, "sieval reference: injected stream error", "InternalServerError")
            return _json(body, status=500)
        data = _encode(reply.body)
        if fault.mode == "truncate":
            return web.Response(body=data[: len(data) // 2], content_type=_JSON)
        if fault.mode != "reset":
            return _json(reply.body, status=reply.status)
        # reset: announce the full length, send half, abort the connection.
        resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
        resp.content_length = len(data)
        await resp.prepare(request)
        await resp.write(data[: len(data) // 2])
        if request.transport is not None:
            request.transport.abort()
        return resp

    async def _stream(
        self, request: web.Request, wire: Wire, reply: Reply, fault: Fault | None
    ) -> web.StreamResponse:
        assert reply.events is not None
        events = list(reply.events)
        mode = None if fault is None else fault.mode
        if mode in BODY_MODES:
            events = alter_events(wire, events, str(mode))
        half = max(1, len(events) // 2)
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        altered = mode in BODY_MODES
        for event, data in events[:half] if mode in CUTS else events:
            await resp.write(_event(event, data, altered))
        if mode == "reset":
            if request.transport is not None:
                request.transport.abort()
            return resp
        if mode == "stream-error":
            body = wire.error(500, "sieval reference: injected stream error", "InternalServerError")
            name = events[0][0] and "error"  # typed-event wires name it; data-only ones do not
            if name and isinstance(body, dict) and "type" not in body:
                # a typed error event carries the error's fields itself (Responses)
                fields = {k: v for k, v in (body.get("error") or body).items() if k != "type"}
                body = {"type": "error", **fields}
            await resp.write(_event(name, body, False))
        if mode != "truncate" and reply.terminator:  # after an error too, as vLLM and SGLang do
            await resp.write(reply.terminator)
        await resp.write_eof()
        return resp


def _event(name: str | None, data: Any, altered: bool) -> bytes:
    head = f"event: {name}\n".encode() if name else b""
    # an altered event may hold a NaN: json writes the bare token (msgspec would write null)
    text = json.dumps(data).encode() if altered else _encode(data)
    return head + b"data: " + text + b"\n\n"


class RunningServer:
    """A server running on a background thread (for synchronous callers)."""

    def __init__(
        self, server: ReferenceServer, loop: asyncio.AbstractEventLoop, thread: threading.Thread
    ) -> None:
        self.server = server
        self._loop = loop
        self._thread = thread

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return self.server.url

    def stop(self) -> None:
        """Stop the server and join its thread."""
        fut = asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop)
        fut.result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def start_in_thread(**kwargs: Any) -> RunningServer:
    """Start a :class:`ReferenceServer` (same keyword arguments) on a daemon thread."""
    server = ReferenceServer(**kwargs)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # pragma: no cover - bind failures
            errors.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=run, name="sieval-reference", daemon=True)
    thread.start()
    started.wait(timeout=30)
    if errors:  # pragma: no cover
        raise errors[0]
    return RunningServer(server, loop, thread)


async def serve_forever(host: str = "127.0.0.1", port: int = 8000, **kwargs: Any) -> None:
    """Run a :class:`ReferenceServer` until cancelled."""
    async with ReferenceServer(host, port, **kwargs):
        await asyncio.Event().wait()


def main(host: str = "127.0.0.1", port: int = 8000, **kwargs: Any) -> None:  # pragma: no cover
    """Blocking entry point for ``sieval serve``: serve until interrupted."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_forever(host, port, **kwargs))
