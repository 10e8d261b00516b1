"""A fault-injecting HTTP proxy for soak runs: ``python scripts/fault_proxy.py UPSTREAM``.

Every POST to a model route is forwarded to ``UPSTREAM`` (e.g. a live vLLM) unless the seeded
draw picks it for a transient fault (``--rate``, 0.2 by default), one of:

``429``      HTTP 429 with ``Retry-After: N`` (``--retry-after``, 1 s), nothing forwarded
``503``      HTTP 503 with an OpenAI-style error body, nothing forwarded
``reset``    the connection is aborted before any reply byte, nothing forwarded
``timeout``  nothing is sent back for ``--stall`` seconds (longer than the client's read
             timeout), then the connection is aborted; nothing forwarded
``cut``      the upstream reply's headers and half its body, then the connection is aborted
             (a stream cut mid-way when the reply streams)

With ``--down-at T --down-for D`` the proxy also stops listening T seconds after its first model
POST, for D seconds (connections refused, as while a server restarts), then listens again.

GET routes and ``/tokenize`` pass untouched. Each request appends one JSON line to ``--log``:
``{"t", "path", "body_sha", "fault"}`` (``fault`` null when forwarded whole), from which the
soak figures (faults injected, Retry-After honoured) are computed. Stop with Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import signal
import time
from pathlib import Path

import aiohttp
from aiohttp import web

KINDS = ("429", "503", "reset", "timeout", "cut")
PASS = frozenset({"/tokenize", "/detokenize"})
HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive"})


class Proxy:
    def __init__(
        self, upstream: str, rate: float, seed: int, retry_after: int, stall: float, log: Path
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.rate = rate
        self.rng = random.Random(seed)
        self.retry_after = retry_after
        self.stall = stall
        self.log = log.open("a", buffering=1)
        self.session: aiohttp.ClientSession | None = None
        self.first_post = asyncio.Event()
        self.down = False  # while "restarting": requests on open connections are reset too

    def _note(self, path: str, body: bytes, fault: str | None) -> None:
        sha = hashlib.sha256(body).hexdigest()[:16]
        self.log.write(
            json.dumps({"t": time.time(), "path": path, "body_sha": sha, "fault": fault}) + "\n"
        )

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if self.down:
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        fault = None
        if request.method == "POST" and request.path not in PASS:
            self.first_post.set()
        if request.method == "POST" and request.path not in PASS and self.rng.random() < self.rate:
            fault = self.rng.choice(KINDS)
        self._note(request.path, body, fault)
        if fault == "429":
            return web.json_response(
                {
                    "error": {
                        "message": "fault proxy: rate limited",
                        "type": "RateLimitError",
                        "code": 429,
                    }
                },
                status=429,
                headers={"Retry-After": str(self.retry_after)},
            )
        if fault == "503":
            return web.json_response(
                {
                    "error": {
                        "message": "fault proxy: unavailable",
                        "type": "ServiceUnavailableError",
                        "code": 503,
                    }
                },
                status=503,
            )
        if fault in ("reset", "timeout"):
            if fault == "timeout":
                await asyncio.sleep(self.stall)
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)  # never reaches the client: the socket is gone
        assert self.session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        try:
            async with self.session.request(
                request.method, self.upstream + request.path_qs, headers=headers, data=body or None
            ) as up:
                data = await up.read()
                reply_headers = {k: v for k, v in up.headers.items() if k.lower() not in HOP}
        except aiohttp.ClientConnectionError:  # the upstream is away: a gateway's 502
            self.log.write(json.dumps({"t": time.time(), "upstream_away": request.path}) + "\n")
            return web.json_response(
                {"error": {"message": "fault proxy: upstream unreachable", "code": 502}},
                status=502,
            )
        if fault != "cut":
            return web.Response(status=up.status, body=data, headers=reply_headers)
        resp = web.StreamResponse(status=up.status, headers=reply_headers)
        resp.content_length = len(data)
        await resp.prepare(request)
        await resp.write(data[: len(data) // 2])
        if request.transport is not None:
            request.transport.abort()
        return resp


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("upstream")
    ap.add_argument("--port", type=int, default=18399)
    ap.add_argument("--rate", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--retry-after", type=int, default=1)
    ap.add_argument("--stall", type=float, default=40.0)
    ap.add_argument("--log", type=Path, default=Path("fault_proxy.jsonl"))
    ap.add_argument("--down-at", type=float, default=None)
    ap.add_argument("--down-for", type=float, default=60.0)
    args = ap.parse_args()
    proxy = Proxy(args.upstream, args.rate, args.seed, args.retry_after, args.stall, args.log)
    proxy.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
    app = web.Application(client_max_size=64 * 1024**2)
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port)
    await site.start()
    print(
        f"fault proxy on http://127.0.0.1:{args.port} -> {args.upstream} (rate {args.rate})",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.down_at is not None:
        await proxy.first_post.wait()
        await asyncio.sleep(args.down_at)
        proxy.down = True
        await site.stop()  # the listening socket closes: new connections are refused
        proxy.log.write(
            json.dumps({"t": time.time(), "path": "", "body_sha": "", "fault": "down"}) + "\n"
        )
        print(f"down for {args.down_for} s", flush=True)
        await asyncio.sleep(args.down_for)
        site = web.TCPSite(runner, "127.0.0.1", args.port)
        await site.start()
        proxy.down = False
        proxy.log.write(
            json.dumps({"t": time.time(), "path": "", "body_sha": "", "fault": "up"}) + "\n"
        )
        print("up again", flush=True)
    await stop.wait()
    await runner.cleanup()
    await proxy.session.close()


if __name__ == "__main__":
    asyncio.run(main())
