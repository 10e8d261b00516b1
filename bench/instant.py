"""Shared by the client-overhead benchmarks: an instant HTTP server, and interleaved CPU rounds.

Standard library only: the client side runs in other interpreters too (lm-evaluation-harness in
its own venv), so nothing here imports sieval.

* ``serve(replies, routes)``: a purpose-built HTTP/1.1 server (an ``asyncio.Protocol``, keep-alive,
  ``Content-Length`` bodies) that answers every POST with prepared bytes, picked by path and by a
  marker in the request body. It runs in its own process, so its CPU is never the client's.
* ``rounds(...)``: every (client, concurrency) pair run in a fresh process per round, the order
  flipped each round; each run reports its own process CPU time per request over the timed loop
  (``time.process_time``, warm-up excluded), and the medians are printed with ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

Route = tuple[str, str | None, str]
"""``(path prefix, marker in the body or None, reply name)``: the first route that matches."""


# -- the instant server -------------------------------------------------------------------------


class _Http(asyncio.Protocol):
    def __init__(self, pick: Callable[[str, bytes], bytes | None]) -> None:
        self.pick = pick
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1]
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            total = end + 4 + length
            if len(self.buf) < total:
                return
            body = bytes(self.buf[end + 4 : total])
            del self.buf[:total]
            reply = self.pick(path, body)
            status = b"200 OK" if reply is not None else b"404 Not Found"
            reply = reply if reply is not None else b'{"error": {"message": "no route"}}'
            assert self.transport is not None
            self.transport.write(
                b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (status, len(reply), reply)
            )


def _serve_forever(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    replies = {name: Path(file).read_bytes() for name, file in spec["replies"].items()}
    routes: list[Route] = [tuple(r) for r in spec["routes"]]  # type: ignore[misc]

    def pick(path: str, body: bytes) -> bytes | None:
        for prefix, marker, name in routes:
            if path.startswith(prefix) and (marker is None or marker.encode() in body):
                return replies[name]
        return None

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Http(pick), "127.0.0.1", 0, backlog=1024)
        print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()

    asyncio.run(main())


class Server:
    """The instant server in a child process: ``with Server(replies, routes) as url: ...``."""

    def __init__(self, replies: dict[str, bytes], routes: Sequence[Route]) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="sieval-bench-")
        files = {}
        for name, body in replies.items():
            file = Path(self.dir.name) / f"{name}.json"
            file.write_bytes(body)
            files[name] = str(file)
        self.spec = Path(self.dir.name) / "spec.json"
        self.spec.write_text(json.dumps({"replies": files, "routes": list(routes)}))
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(self.spec)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.dir.cleanup()


# -- one client run, inside its own process -----------------------------------------------------


async def drive(n: int, concurrency: int, one: Callable[[int], Any]) -> dict[str, float]:
    """``n`` awaited calls of ``one(i)`` from ``concurrency`` workers, after ``2 * concurrency``
    warm-up calls; this process's CPU time per request, in ms, and the wall time."""
    await asyncio.gather(*(one(i) for i in range(2 * concurrency)))
    left = iter(range(n))

    async def worker() -> None:
        for i in left:
            await one(i)

    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return measured(n, cpu0, t0)


def measured(n: int, cpu0: float, t0: float) -> dict[str, float]:
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    return {"cpu_ms": cpu / n * 1e3, "wall_s": wall}


def sieval_path(checkout: str) -> None:
    """Import sieval from ``checkout`` (an editable install's finder would pick another one)."""
    sys.meta_path[:] = [f for f in sys.meta_path if "Editable" not in type(f).__name__]
    sys.path.insert(0, checkout)


# -- the rounds ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Client:
    """One client: ``argv`` runs it (``{url}``, ``{conc}``, ``{n}`` are filled in)."""

    name: str
    argv: list[str]
    group: str
    """The column set it belongs to (a route or a dialect's wire)."""


def run_client(client: Client, url: str, conc: int, n: int) -> dict[str, float]:
    argv = [a.format(url=url, conc=conc, n=n) for a in client.argv]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=_env())
    if done.returncode != 0:
        sys.exit(f"{client.name} at concurrency {conc} failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["TOKENIZERS_PARALLELISM"] = "false"
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    return env


def rounds(
    clients: Sequence[Client], url: str, concurrency: Sequence[int], n: int, count: int
) -> dict[tuple[str, int], list[float]]:
    """CPU ms per request for every client and concurrency, ``count`` interleaved rounds."""
    order = [(c, k) for k in concurrency for c in clients]
    out: dict[tuple[str, int], list[float]] = {}
    for rnd in range(count):
        for client, conc in order if rnd % 2 == 0 else list(reversed(order)):
            result = run_client(client, url, conc, n)
            out.setdefault((client.name, conc), []).append(result["cpu_ms"])
            print(
                f"  round {rnd + 1} conc {conc:>3} {client.name:<34} "
                f"{result['cpu_ms']:7.3f} ms CPU/request  ({n / result['wall_s']:,.0f} req/s)",
                flush=True,
            )
    return out


def parser(doc: str, clients: Sequence[str]) -> argparse.ArgumentParser:
    """The options every overhead benchmark takes, and the hidden ones of one client run (the
    orchestrator starts those in fresh processes: ``client_argv``)."""
    out = argparse.ArgumentParser(description=doc.splitlines()[0])
    out.add_argument("--requests", type=int, default=2000, help="timed requests per run")
    out.add_argument("--rounds", type=int, default=3)
    out.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 128])
    out.add_argument("--against", type=Path, help="another sieval checkout, measured too")
    out.add_argument("--client", choices=sorted(clients), help=argparse.SUPPRESS)
    out.add_argument("--dialect", help=argparse.SUPPRESS)
    out.add_argument("--checkout", default=str(ROOT), help=argparse.SUPPRESS)
    out.add_argument("--url", help=argparse.SUPPRESS)
    out.add_argument("--conc", type=int, help=argparse.SUPPRESS)
    out.add_argument("--n", type=int, help=argparse.SUPPRESS)
    return out


def client_argv(python: str, script: str, name: str, *extra: str) -> list[str]:
    """How the orchestrator runs client ``name`` of ``script`` (``{url}`` etc. filled in later)."""
    base = [python, script, "--client", name, "--url", "{url}", "--conc", "{conc}", "--n", "{n}"]
    return [*base, *extra]


def sieval_and_raw(
    argv: Callable[..., list[str]], dialect: str, against: Path | None
) -> list[Client]:
    """A dialect's sieval client (and the same from ``against``) and its raw floor."""
    out = [Client(f"sieval {dialect}", argv("sieval", "--dialect", dialect), dialect)]
    if against:
        old = argv("sieval", "--dialect", dialect, "--checkout", str(against.resolve()))
        out.append(Client(f"sieval {dialect} (against)", old, dialect))
    out.append(Client(f"raw {dialect}", argv("raw", "--dialect", dialect), dialect))
    return out


def print_medians(
    runs: dict[tuple[str, int], list[float]], clients: Sequence[Client], concs: Sequence[int]
) -> None:
    print("\nmedian client CPU per request, ms")
    print(f"{'client':<40}" + "".join(f"{f'conc {c}':>10}" for c in concs))
    for client in clients:
        cells = "".join(f"{median(runs[(client.name, c)]):10.3f}" for c in concs)
        print(f"{client.name:<40}{cells}")


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def ratio(runs: dict[tuple[str, int], list[float]], a: str, b: str, conc: int) -> float:
    """The median over rounds of a/b, pair by pair (both measured in the same round)."""
    return median([x / y for x, y in zip(runs[(a, conc)], runs[(b, conc)], strict=True)])


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve_forever(sys.argv[2])
