"""``sieval serve``: run the embedded reference server standalone until Ctrl-C.

Each request is logged as one line on stderr (``--quiet`` turns it off): time, client, method,
path, status and milliseconds, as a server's access log.

Exit codes: 0 stopped with Ctrl-C; 2 bad input (a non-loopback host without ``--allow-remote``,
an unset ``--api-key-env`` variable, a bad ``--fault`` or ``--replay``, a port already taken).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import typer

from ..reference import DEFAULT_MODEL_NAME, ReferenceServer
from . import common
from .app import app

__all__ = ["access_line", "access_log", "is_loopback", "render_banner"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address literal (127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name other than localhost could resolve anywhere
        return False


def render_banner(server: ReferenceServer) -> str:
    """The one line printed once the server listens: its URL and how to stop it."""
    host = f"[{server.host}]" if ":" in server.host else server.host
    auth = "; requires an API key" if server.api_key is not None else ""
    mode = f"replaying {len(server.replay)} recordings" if server.replay is not None else "live"
    fault = f"; fault {server.fault.text!r}" if server.fault is not None else ""
    return (
        f"sieval reference server ({mode}, model {server.model_name!r}{fault}{auth}) "
        f"listening on http://{host}:{server.port} - press Ctrl-C to stop"
    )


def access_line(peer: str | None, method: str, path: str, status: int, seconds: float) -> str:
    """One request as the access log writes it: ``12:47:14 127.0.0.1 POST /v1/completions 200
    3.1 ms``."""
    return (
        f"{time.strftime('%H:%M:%S')} {peer or '-'} {method} {path} {status} "
        f"{seconds * 1000:.1f} ms"
    )


def access_log(stream: TextIO) -> Any:
    """An aiohttp middleware writing ``access_line`` for each request (the status of an error
    reply too)."""
    from aiohttp import web

    @web.middleware
    async def log(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        t0 = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            line = access_line(
                request.remote, request.method, request.path, status, time.perf_counter() - t0
            )
            stream.write(line + "\n")
            stream.flush()

    return log


def _fail(message: str) -> typer.Exit:
    return common.fail(message)


async def _serve(server: ReferenceServer) -> None:  # pragma: no cover - run in a subprocess
    async with server:
        typer.echo(render_banner(server))  # click's echo flushes, so a pipe sees it at once
        await asyncio.Event().wait()


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback only)."),
    port: int = typer.Option(
        8000, "--port", min=0, max=65535, help="TCP port, 0-65535 (0 = any free port)."
    ),
    model_name: str = typer.Option(
        DEFAULT_MODEL_NAME, "--model-name", help="The model id the server answers to."
    ),
    max_logprobs: int = typer.Option(100, "--max-logprobs", help="vLLM's --max-logprobs."),
    max_model_len: int = typer.Option(4096, "--max-model-len", help="Context length in tokens."),
    seed: int = typer.Option(0, "--seed", help="Seed of the server-side sampler."),
    fault: str | None = typer.Option(
        None, "--fault", help="Inject a fault into every request, e.g. '503; times=1'."
    ),
    replay: Path | None = typer.Option(
        None, "--replay", help="Serve recorded replies from this folder of *.json records."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Require the API key held in this environment variable."
    ),
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="Allow a non-loopback --host (this is a test server)."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="Log no line per request."),
) -> None:
    """Run the embedded reference server (vLLM 0.32.0 wire) until Ctrl-C."""
    if not allow_remote and not is_loopback(host):
        raise _fail(
            f"refusing to bind --host {host!r}: the reference server is a test server and "
            "listens on loopback only; use 127.0.0.1, or pass --allow-remote to expose it"
        )
    api_key: str | None = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise _fail(
                f"environment variable {api_key_env!r} (--api-key-env) is not set or empty; "
                "export the key in it before starting the server"
            )
    try:
        server = ReferenceServer(
            host,
            port,
            model_name=model_name,
            api_key=api_key,
            max_model_len=max_model_len,
            max_logprobs=max_logprobs,
            seed=seed,
            faults=fault,
            replay=replay,
        )
    except ValueError as exc:  # a bad --fault text, a --replay folder missing or empty
        raise _fail(f"{exc}; see 'sieval serve --help'") from None
    if not quiet:
        server.app.middlewares.append(access_log(sys.stderr))
    try:  # pragma: no cover - run in a subprocess by tests/cli/test_serve.py
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(server))
    except OSError as exc:  # pragma: no cover - e.g. the port is taken
        raise _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    typer.echo("sieval reference server stopped")  # pragma: no cover
