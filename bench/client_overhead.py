"""Client overhead: sieval's ``Model.run()`` against raw aiohttp, over replayed vLLM replies.

Usage: python bench/client_overhead.py [--requests 3000] [--rounds 3] [--pure-iterations 20000]

The server is ``sieval serve --replay tests/fixtures/openai_completions/0.32.0`` in a separate
process (its own core and GIL), so it answers every recorded body instantly and identically for
both clients. Two clients send the same mix of the seven non-stream 200 recordings:

* raw:    aiohttp posts ``json.dumps(body)`` and ``json.loads`` the reply, nothing else;
* sieval: ``Model.run()`` on the IR requests whose lowering *is* those bodies (checked at start),
          i.e. lowering with the decision ledger + transport + lifting with every reply check.

Both run at concurrency 1 and 32 with the same number of requests, in rounds that interleave
the four runs (the order flips each round), because the machine is noisy. Printed: requests/s
per run; the per-round ratio sieval/raw; sieval's overhead per request in wall-clock
microseconds (1/rate_sieval - 1/rate_raw) and in client CPU microseconds (this process only;
the server's CPU is in the other process); medians over the rounds. Last, ``lower()`` and
``lift()`` alone (pure, no I/O) per call for the echo-scoring recording ``echo_top3``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from sieval import Limits, Model
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.ir.request import Request

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests/fixtures/openai_completions/0.32.0"
DIALECT = "openai_completions"
MODEL_ID = "gemma-3-270m"  # the model the recordings were made with

sys.path.insert(0, str(ROOT / "tests"))
from dialects.recorded_cases import CASES  # noqa: E402  (the pairs the dialect tests check)


@dataclass(frozen=True)
class Case:
    name: str
    request: Request
    body: dict[str, Any]
    reply: bytes


def load_cases() -> list[Case]:
    """The recordings with their IR requests; refuses to run if a lowering drifted."""
    dialect = get_dialect(DIALECT)
    cases = []
    for name, request in CASES.items():
        record = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
        if request.scheduling.stream or record["status"] != 200:
            continue  # the mix is the non-streamed successful replies
        lowered = lower(dialect, request, MODEL_ID)
        if lowered.body != record["request"]:
            sys.exit(f"{name}: the lowering is not the recorded body; fix recorded_cases.py")
        cases.append(Case(name, request, record["request"], json.dumps(record["reply"]).encode()))
    return cases


# -- the server ---------------------------------------------------------------------------------


def start_server() -> tuple[subprocess.Popen[str], str]:
    """``sieval serve --replay FIXTURES --port 0`` in a child process; returns it and its URL."""
    cli = "import sys; sys.argv[0] = 'sieval'; from sieval.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", cli, "serve", "--port", "0", "--replay", str(FIXTURES)],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    banner = proc.stdout.readline()
    found = re.search(r"http://\S+", banner)
    if found is None:
        proc.kill()
        sys.exit(f"sieval serve did not start: {banner!r}")
    return proc, found.group(0)


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- the two clients ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    rps: float
    cpu_us: float  # this process's CPU time per request


async def drive(n: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> Run:
    """``n`` calls of ``one(i)`` from ``concurrency`` workers; warm-up calls are not timed."""
    await asyncio.gather(*(one(i) for i in range(2 * concurrency)))  # open the connections
    counter = itertools.count()

    async def worker() -> None:
        while (i := next(counter)) < n:
            await one(i)

    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return Run(rps=n / wall, cpu_us=cpu / n * 1e6)


async def run_raw(url: str, cases: list[Case], n: int, concurrency: int) -> Run:
    target = url + "/v1/completions"
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(i: int) -> None:
            body = json.dumps(cases[i % len(cases)].body).encode()
            async with session.post(target, data=body, headers=headers) as r:
                reply = json.loads(await r.read())
                if r.status != 200:
                    raise RuntimeError(f"raw: HTTP {r.status}: {reply}")

        return await drive(n, concurrency, one)


async def run_sieval(url: str, cases: list[Case], n: int, concurrency: int) -> Run:
    async with Model(
        dialect=DIALECT, base_url=url, model_id=MODEL_ID, limits=Limits(concurrency=concurrency)
    ) as model:

        async def one(i: int) -> None:
            await model.run(cases[i % len(cases)].request)

        return await drive(n, concurrency, one)


CLIENTS = {"raw": run_raw, "sieval": run_sieval}


# -- pure lower() / lift() ----------------------------------------------------------------------


def time_pure(case: Case, iterations: int) -> tuple[float, float]:
    """Microseconds per call of ``lower()`` and of ``lift()`` on ``case``."""
    dialect = get_dialect(DIALECT)
    lowered = lower(dialect, case.request, MODEL_ID)
    lift(dialect, lowered, 200, {}, case.reply)  # warm caches, fail early
    t0 = time.perf_counter()
    for _ in range(iterations):
        lower(dialect, case.request, MODEL_ID)
    t1 = time.perf_counter()
    for _ in range(iterations):
        lift(dialect, lowered, 200, {}, case.reply)
    t2 = time.perf_counter()
    return (t1 - t0) / iterations * 1e6, (t2 - t1) / iterations * 1e6


# -- main ---------------------------------------------------------------------------------------


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--pure-iterations", type=int, default=20000)
    args = parser.parse_args()
    cases = load_cases()
    started = time.perf_counter()

    proc, url = start_server()
    print(
        f"client overhead, {DIALECT}: sieval Model.run() vs raw aiohttp + json.loads\n"
        f"server: sieval serve --replay {os.path.relpath(FIXTURES)} "
        f"(separate process) at {url}\n"
        f"mix: {len(cases)} recorded bodies ({', '.join(c.name for c in cases)})\n"
        f"{args.requests} requests per run, {args.rounds} rounds interleaved; python "
        f"{platform.python_version()}, aiohttp {aiohttp.__version__}, {os.cpu_count()} CPUs\n"
    )
    runs: dict[tuple[str, int], list[Run]] = {}
    print(f"{'round':>5} {'conc':>4} {'client':>6} {'req/s':>9} {'client CPU us/req':>18}")
    try:
        for rnd in range(args.rounds):
            order = [(c, k) for c in args.concurrency for k in CLIENTS]
            if rnd % 2:
                order = [(c, k) for c, k in reversed(order)]
            for conc, name in order:
                run = asyncio.run(CLIENTS[name](url, cases, args.requests, conc))
                runs.setdefault((name, conc), []).append(run)
                print(f"{rnd + 1:>5} {conc:>4} {name:>6} {run.rps:>9,.0f} {run.cpu_us:>18,.0f}")
    finally:
        stop_server(proc)

    print("\nmedian over rounds (ratio and overhead are per round, then the median)")
    print(
        f"{'conc':>4} {'raw req/s':>10} {'sieval req/s':>13} {'ratio':>6} "
        f"{'overhead wall us/req':>21} {'overhead CPU us/req':>20}"
    )
    for conc in args.concurrency:
        raw, sv = runs[("raw", conc)], runs[("sieval", conc)]
        ratio = [s.rps / r.rps for r, s in zip(raw, sv, strict=True)]
        wall = [(1 / s.rps - 1 / r.rps) * 1e6 for r, s in zip(raw, sv, strict=True)]
        cpu = [s.cpu_us - r.cpu_us for r, s in zip(raw, sv, strict=True)]
        print(
            f"{conc:>4} {median([r.rps for r in raw]):>10,.0f} "
            f"{median([s.rps for s in sv]):>13,.0f} {median(ratio):>6.2f} "
            f"{median(wall):>21,.0f} {median(cpu):>20,.0f}"
        )

    top3 = next(c for c in cases if c.name == "echo_top3")
    lower_us, lift_us = time_pure(top3, args.pure_iterations)
    print(
        f"\npure, no I/O, echo_top3 ({len(top3.reply):,} byte reply), "
        f"{args.pure_iterations:,} calls each:\n"
        f"  lower(): {lower_us:8,.1f} us/call\n"
        f"  lift():  {lift_us:8,.1f} us/call"
    )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
