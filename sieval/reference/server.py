"""The embedded reference server: aiohttp app, in-process lifecycle, standalone entry point.

Routes (vLLM 0.32.0 shapes): ``POST /v1/completions``, ``GET /v1/models``, ``GET /version``,
``GET /health``, ``POST /tokenize``. ``/version`` has vLLM's one key but an honest value,
``{"version": "sieval-reference (vllm 0.32.0 wire)"}``, so a run's provenance never mistakes the
reference for a real vLLM.

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
import json
import random
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from sieval.reference.completions import CompletionSettings, render
from sieval.reference.errors import VllmError, plain
from sieval.reference.faults import BODY_MODES, Fault, FaultBook, alter_reply, parse_fault
from sieval.reference.lm import ReferenceModel, get_model
from sieval.reference.replay import ReplayBook
from sieval.reference.replies import complete, stream_chunks

__all__ = [
    "DEFAULT_MODEL_NAME",
    "ReferenceServer",
    "RunningServer",
    "main",
    "serve_forever",
    "start_in_thread",
]

DEFAULT_MODEL_NAME = "sieval-reference"
EMULATED_VLLM = "0.32.0"
VERSION_STRING = f"sieval-reference (vllm {EMULATED_VLLM} wire)"
_GUARDED = ("/v1", "/v2", "/inference")
_JSON = "application/json"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=_encode(body), status=status, content_type=_JSON, headers=headers)


def _error(exc: VllmError) -> web.Response:
    return _json(exc.body(), status=exc.status)


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
        self.settings = CompletionSettings(
            served_model=model_name,
            max_model_len=max_model_len,
            max_logprobs=max_logprobs,
            server_rng=random.Random(seed),
        )
        self.fault = parse_fault(faults) if faults else None
        self.fault_book = FaultBook()
        self.replay = ReplayBook(replay) if replay is not None else None
        self._runner: web.AppRunner | None = None
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
        sockets = getattr(site._server, "sockets", None)
        if sockets:
            self.port = sockets[0].getsockname()[1]

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

    # -- app ----------------------------------------------------------------------------------

    def _build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth], client_max_size=64 * 1024**2)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/version", self._version)
        app.router.add_get("/health", self._health)
        app.router.add_post("/tokenize", self._tokenize)
        return app

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if (
            self.api_key is not None
            and request.path.startswith(_GUARDED)
            and request.headers.get("Authorization", "") != f"Bearer {self.api_key}"
        ):
            return _json({"error": "Unauthorized"}, status=401)
        response: web.StreamResponse = await handler(request)
        return response

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _version(self, request: web.Request) -> web.Response:
        return _json({"version": VERSION_STRING})

    async def _models(self, request: web.Request) -> web.Response:
        created = 0
        return _json(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.model_name,
                        "object": "model",
                        "created": created,
                        "owned_by": "vllm",
                        "root": self.model_name,
                        "parent": None,
                        "max_model_len": self.settings.max_model_len,
                        "permission": [
                            {
                                "id": "modelperm-sieval-reference",
                                "object": "model_permission",
                                "created": created,
                                "allow_create_engine": False,
                                "allow_sampling": True,
                                "allow_logprobs": True,
                                "allow_search_indices": False,
                                "allow_view": True,
                                "allow_fine_tuning": False,
                                "organization": "*",
                                "group": None,
                                "is_blocking": False,
                            }
                        ],
                    }
                ],
            }
        )

    async def _read_body(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        try:
            body = _decode(raw)
        except msgspec.DecodeError as exc:
            raise VllmError(
                400,
                "1 validation error:\n  {'type': 'json_invalid', 'loc': 'body', "
                f"'msg': 'JSON decode error', 'ctx': {{'error': '{exc}'}}}}",
                "Bad Request",
                "body",
            ) from exc
        if not isinstance(body, dict):
            raise VllmError(
                400,
                "1 validation error:\n  {'type': 'model_attributes_type', 'loc': 'body', "
                "'msg': 'Input should be a valid dictionary or object to extract fields from'}",
                "Bad Request",
                "body",
            )
        return body

    async def _tokenize(self, request: web.Request) -> web.Response:
        try:
            body = await self._read_body(request)
            prompt = body.get("prompt")
            if not isinstance(prompt, str):
                raise plain("prompt must be a string", param="prompt")
        except VllmError as exc:
            return _error(exc)
        ids = self.model.tokenize(prompt, add_bos=body.get("add_special_tokens", True) is not False)
        strs = [self.model.token_text(i) for i in ids] if body.get("return_token_strs") else None
        return _json(
            {
                "count": len(ids),
                "max_model_len": self.settings.max_model_len,
                "tokens": ids,
                "token_strs": strs,
            }
        )

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

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        try:
            fault = self._active_fault(request)
        except ValueError as exc:
            return _error(plain(f"sieval reference: {exc}", param="x-sieval-fault"))
        if fault is not None and fault.mode not in BODY_MODES:
            early = await self._early_fault(request, fault)
            if early is not None:
                return early
            if fault.mode == "delay":
                fault = None
        try:
            body = await self._read_body(request)
        except VllmError as exc:
            return _error(exc)
        if self.replay is not None:
            rec = self.replay.lookup("/v1/completions", body)
            if rec is None:
                return _error(
                    plain(
                        "sieval reference replay: no recorded reply for POST /v1/completions "
                        "with this body (keys are the canonical JSON of the request)",
                        status=404,
                        err_type="NotFoundError",
                    )
                )
            return web.Response(body=rec.body, status=rec.status, content_type=rec.content_type)
        try:
            rendered = render(body, self.settings, self.model)
        except VllmError as exc:
            return _error(exc)
        if rendered.params.stream:
            return await self._stream(request, rendered)
        reply = complete(rendered, self.model)
        if fault is None:
            return _json(reply)
        if fault.mode in BODY_MODES:
            alter_reply(reply, fault.mode)
            text = json.dumps(reply)  # NaN stays the bare token NaN, as Python's json writes it
            return web.Response(text=text, content_type=_JSON)
        data = _encode(reply)
        if fault.mode == "truncate":  # otherwise: reset
            return web.Response(body=data[: len(data) // 2], content_type=_JSON)
        # reset: announce the full length, send half, abort the connection.
        resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
        resp.content_length = len(data)
        await resp.prepare(request)
        await resp.write(data[: len(data) // 2])
        if request.transport is not None:
            request.transport.abort()
        return resp

    async def _early_fault(self, request: web.Request, fault: Fault) -> web.StreamResponse | None:
        mode = fault.mode
        if mode == "429":
            retry = fault.options.get("retry-after", "1")
            return _json(
                {
                    "error": {
                        "message": "sieval reference: injected rate limit",
                        "type": "RateLimitError",
                        "param": None,
                        "code": 429,
                    }
                },
                status=429,
                headers={"Retry-After": retry},
            )
        if mode in ("500", "503"):
            status = int(mode)
            headers = {}
            if "retry-after" in fault.options:
                headers["Retry-After"] = fault.options["retry-after"]
            kind = "InternalServerError" if status == 500 else "ServiceUnavailableError"
            return _json(
                {
                    "error": {
                        "message": f"sieval reference: injected {status}",
                        "type": kind,
                        "param": None,
                        "code": status,
                    }
                },
                status=status,
                headers=headers,
            )
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

    async def _stream(self, request: web.Request, rendered: Any) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        parts = [
            b"data: " + _encode(chunk) + b"\n\n" for chunk in stream_chunks(rendered, self.model)
        ]
        parts.append(b"data: [DONE]\n\n")
        for part in parts:
            await resp.write(part)
        await resp.write_eof()
        return resp


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
