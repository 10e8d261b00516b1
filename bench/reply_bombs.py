"""Peak memory of a client facing a hostile reply: a gzip bomb, an endless stream, a huge answer.

Usage: python bench/reply_bombs.py [--gzip-mib 1024] [--huge-mib 512] [--endless-s 10]
       [--cases gzip,endless,huge] [--as-limit-gib 6]

A tiny aiohttp server (this process) speaks ``POST /v1/chat/completions``; each case is one
``Model.call`` on ``openai_chat`` made in a fresh child process, so the figure printed is that
child's peak resident set (``VmHWM`` of ``/proc/self/status``, Linux) and nothing else's.
The cases:

* ``gzip``: a 200 JSON reply with ``Content-Encoding: gzip`` whose body is ``--gzip-mib`` MiB of
  newlines (JSON whitespace) before a valid chat completion, about 1,000 : 1 compressed;
* ``endless``: a 200 stream (``stream: true``) of content deltas that never ends (no
  ``[DONE]``); the child's total timeout is ``--endless-s`` seconds;
* ``huge``: a 200 JSON chat completion whose answer is ``--huge-mib`` MiB of text.

Each child also sets ``RLIMIT_AS`` (``--as-limit-gib``), so an unbounded client dies with a
``MemoryError`` instead of taking the machine (shared) with it. Printed per case: the outcome
(ok with the answer's length, or the error's class and message head), seconds, peak RSS in MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
import zlib
from typing import Any

from aiohttp import web

CHILD = r"""
import asyncio, resource, sys, time
limit = int(sys.argv[4]) * 2**30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from sieval.ir.request import ChatInput, Message, Request, Sampling, Scheduling, TextPart
from sieval.model import Model
from sieval.transport import Timeouts

async def main(url, case, seconds):
    stream = case == "endless"
    said = ChatInput(messages=(Message(role="user", content=(TextPart(text="Say hi."),)),))
    request = Request(input=said, sampling=Sampling(max_tokens=8),
                      scheduling=Scheduling(stream=stream))
    async with Model(dialect="openai_chat", base_url=url, model_id="bomb",
                     headers={"x-bomb": case},
                     timeouts=Timeouts(total=seconds, read=seconds, connect=5)) as model:
        call = await model.call(request)
    if call.ok:
        return f"ok, answer of {len(call.response.choices[0].text):,} characters"
    return f"{type(call.error).__name__}: {str(call.error)[:160]}"

t0 = time.monotonic()
try:
    outcome = asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
except MemoryError:
    outcome = "MemoryError (RLIMIT_AS reached)"
# VmHWM: this process's own peak (ru_maxrss would carry the forking parent's across exec)
status = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
peak = int(status) / 1024
print(f"{outcome}\t{time.monotonic() - t0:.1f}\t{peak:.0f}")
"""


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bomb",
        "object": "chat.completion",
        "created": 0,
        "model": "bomb",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


def gzip_bomb(mib: int) -> bytes:
    """``mib`` MiB of newlines, then a valid reply, gzip-compressed."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\n" * 2**20
    parts = [z.compress(block) for _ in range(mib)]
    parts.append(z.compress(json.dumps(completion("hi")).encode()))
    parts.append(z.flush())
    return b"".join(parts)


class Bombs:
    def __init__(self, gzip_mib: int, huge_mib: int) -> None:
        self.gzip = gzip_bomb(gzip_mib)
        self.huge = json.dumps(completion("a" * (huge_mib * 2**20))).encode()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        case = request.headers.get("x-bomb")
        if case == "gzip":
            headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
            return web.Response(body=self.gzip, headers=headers)
        if case == "huge":
            return web.Response(body=self.huge, content_type="application/json")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        delta = {"choices": [{"index": 0, "delta": {"content": "a" * 4096}}]}
        event = f"data: {json.dumps(delta)}\n\n".encode() * 16
        try:
            while True:  # never [DONE]
                await resp.write(event)
        except (ConnectionResetError, ConnectionError):
            pass
        return resp


def serve(bombs: Bombs) -> tuple[str, threading.Event]:
    started: dict[str, str] = {}
    ready, stop = threading.Event(), threading.Event()

    def run() -> None:
        async def main() -> None:
            app = web.Application(client_max_size=2**20)
            app.router.add_post("/v1/chat/completions", bombs.handle)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            started["url"] = f"http://127.0.0.1:{port}"
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.1)
            await runner.cleanup()

        asyncio.run(main())

    threading.Thread(target=run, daemon=True).start()
    ready.wait()
    return started["url"], stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gzip-mib", type=int, default=1024)
    parser.add_argument("--huge-mib", type=int, default=512)
    parser.add_argument("--endless-s", type=float, default=10.0)
    parser.add_argument("--cases", default="gzip,endless,huge")
    parser.add_argument("--as-limit-gib", type=int, default=6)
    args = parser.parse_args()
    bombs = Bombs(args.gzip_mib, args.huge_mib)
    print(
        f"gzip body {len(bombs.gzip):,} bytes -> {args.gzip_mib} MiB; huge body "
        f"{len(bombs.huge):,} bytes; endless for {args.endless_s:g} s"
    )
    url, stop = serve(bombs)
    print("case\toutcome\tseconds\tpeak RSS MiB")
    for case in args.cases.split(","):
        seconds = args.endless_s if case == "endless" else 300.0
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, url, case, str(seconds), str(args.as_limit_gib)],
            capture_output=True,
            text=True,
            check=False,
        )
        line = done.stdout.strip() or f"crashed ({done.returncode}): {done.stderr[-300:]}"
        print(f"{case}\t{line}\t(wall {time.monotonic() - t0:.1f} s)", flush=True)
    stop.set()


if __name__ == "__main__":
    main()
