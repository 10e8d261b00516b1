"""Saturation: sieval's engine against a minimal raw aiohttp loop on a live vLLM, same requests.

Usage: python bench/saturation.py [--url URL] [--n 100] [--rounds 9] [--sweep 1 2 4 8 16 32]
                                  [--concurrency C] [--dialect openai_completions]

The workload is ARC-Easy 0-shot echo scoring, the real task ``arc_easy_kshot_ppl`` with
``num_fewshot: 0`` (each choice scored after the question and unconditionally: 8 requests for a
4-choice sample), against the vLLM at ``--url`` (default ``$SIEVAL_VLLM_URL``; start one with
``scripts/live-vllm.sh start``). Two clients send the same requests:

* sieval: ``arun_eval`` on the task (``preflight=False``): planning, lowering with the decision
  ledger, the transport, lifting with every reply check, scoring, records and report; its wall
  is the whole call (the engine's own wall, from the report, is printed beside it);
* raw:    the exact JSON bodies of a first, untimed sieval run, read back from its records
          (``expand_requests`` + ``Shared.load``) in the order sieval sends them, POSTed by an
          aiohttp loop under a semaphore that ``json.loads`` each reply and nothing else.

First a short sweep finds the raw loop's best concurrency (lowest wall); then rounds interleave
raw, sieval at that concurrency, and sieval at its default ``concurrency_limit`` when that differs.
Printed per run: the wall, the round's ratio sieval/raw, the server's prompt and generated tokens/s
during the run (its Prometheus ``/metrics``: ``vllm:prompt_tokens_total`` and
``vllm:generation_tokens_total``, read before and after), the machine's busy share of all cores
(``/proc/stat``), this process's CPU seconds and the 1-minute load; then medians and the verdict
against the goal (median ratio at the raw loop's best concurrency <= 1.02). vLLM's prefix cache
changes speed and scores from one run to the next: start the server with
``SIEVAL_VLLM_EXTRA_ARGS=--no-enable-prefix-caching``; the bench prints what the server reports.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from sieval.dialects.registry import get_dialect
from sieval.plan.config import EvalConfig, ModelConfig, results_dirname
from sieval.runner import RunOptions, arun_eval, plan_run
from sieval.runner.engine import resolve_data_dir
from sieval.store.records import Shared, expand_requests, read_records
from sieval.tasks.base import TaskConfig

TASK = "arc_easy_kshot_ppl"
GOAL = 1.02
PROMPT, GENERATION = "vllm:prompt_tokens_total", "vllm:generation_tokens_total"
DEFAULT_CONCURRENCY = ModelConfig().concurrency_limit


# -- the server ---------------------------------------------------------------------------------


def get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        body: bytes = reply.read()
        return body


def require_healthy(url: str) -> None:
    try:
        get(url + "/health", timeout=3.0)
    except OSError as exc:
        sys.exit(
            f"no healthy server at {url} ({exc}); start one with scripts/live-vllm.sh start "
            "(SIEVAL_VLLM_EXTRA_ARGS=--no-enable-prefix-caching) and pass --url or SIEVAL_VLLM_URL"
        )


def counters(url: str) -> dict[str, float]:
    """The server's token counters, each summed over its label sets."""
    totals = {PROMPT: 0.0, GENERATION: 0.0}
    for line in get(url + "/metrics").decode().splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in totals:
            totals[name] += float(line.rsplit(" ", 1)[1])
    return totals


def prefix_caching(url: str) -> str:
    """``on`` / ``off`` from vLLM's ``vllm:cache_config_info`` labels, else ``unknown``."""
    for line in get(url + "/metrics").decode().splitlines():
        if line.startswith("vllm:cache_config_info{"):
            if 'enable_prefix_caching="True"' in line:
                return "on"
            if 'enable_prefix_caching="False"' in line:
                return "off"
    return "unknown"


def served_model(url: str) -> str:
    return str(json.loads(get(url + "/v1/models"))["data"][0]["id"])


# -- one measured run ---------------------------------------------------------------------------


def cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies over all cores, from the first line of ``/proc/stat``."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def loads() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclass(frozen=True)
class Run:
    client: str
    concurrency: int
    wall: float
    prompt_tokens: float
    generation_tokens: float
    busy: float  # the machine's busy share of all cores during the run
    own_cpu: float  # this process's CPU seconds during the run
    load: float  # 1-minute load average at the end
    engine: float | None  # sieval's engine alone (the report's wall_s); None for raw

    @property
    def prompt_tps(self) -> float:
        return self.prompt_tokens / self.wall

    @property
    def generation_tps(self) -> float:
        return self.generation_tokens / self.wall


Go = Callable[[], Awaitable[float | None]]
"""One run of a client; returns the engine's own wall (sieval) or None (raw)."""


async def measure(url: str, client: str, concurrency: int, go: Go) -> Run:
    before = counters(url)
    busy0, total0 = cpu_ticks()
    cpu0, t0 = time.process_time(), time.perf_counter()
    engine = await go()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    busy1, total1 = cpu_ticks()
    after = counters(url)
    return Run(
        client=client,
        concurrency=concurrency,
        wall=wall,
        prompt_tokens=after[PROMPT] - before[PROMPT],
        generation_tokens=after[GENERATION] - before[GENERATION],
        busy=(busy1 - busy0) / max(1, total1 - total0),
        own_cpu=cpu,
        load=os.getloadavg()[0],
        engine=engine,
    )


# -- the two clients ----------------------------------------------------------------------------


def config(url: str, model: str, dialect: str, n: int, concurrency: int) -> EvalConfig:
    entry = ModelConfig(
        name="m", endpoint=url, model=model, dialect=dialect, concurrency_limit=concurrency
    )
    task = TaskConfig(name=TASK, n=n, num_fewshot=0)
    return EvalConfig(models=[entry], tasks=[task], concurrency=concurrency)


async def run_sieval(cfg: EvalConfig, data_dir: Path, out: Path) -> tuple[Path, float]:
    """The whole ``arun_eval``; returns the run directory and the engine's own wall."""
    result = await arun_eval(cfg, RunOptions(out=out, data_dir=data_dir, preflight=False))
    if result.exit_code != 0:
        sys.exit(f"sieval: {result.failed} samples failed; see {result.run_dir}")
    return result.run_dir, float(result.report["timings"]["wall_s"])


def bodies_of(run_dir: Path, cfg: EvalConfig, data_dir: Path) -> list[bytes]:
    """Each request body of the run as sent, in the order the engine sends them (the plan's
    samples in order, each sample's requests in the task's order)."""
    unit = run_dir / results_dirname(cfg.models[0].label) / TASK
    records = read_records(unit / "records.jsonl").records
    shared = Shared.load(unit / "shared.jsonl")
    order = [s.id for s in plan_run(cfg, data_dir=data_dir).tasks[0].samples]
    return [
        json.dumps(request.body).encode()
        for sample_id in order
        for request in expand_requests(records[sample_id].requests, shared).values()
    ]


async def run_raw(target: str, bodies: list[bytes], concurrency: int) -> None:
    """POST every body under a semaphore and ``json.loads`` each reply; nothing else."""
    headers = {"Content-Type": "application/json"}
    gate = asyncio.Semaphore(concurrency)
    failed = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(body: bytes) -> None:
            nonlocal failed
            async with gate, session.post(target, data=body, headers=headers) as reply:
                json.loads(await reply.read())
                failed += reply.status != 200

        await asyncio.gather(*(one(b) for b in bodies))
    if failed:
        sys.exit(f"raw: {failed} of {len(bodies)} requests were not HTTP 200")


# -- printing -----------------------------------------------------------------------------------

HEADER = "client  conc     wall   ratio  prompt/s  gen/s  prompt tok  busy  own cpu  load1  engine"
SUMMARY = "run             wall   ratio  prompt/s  gen/s  busy  own cpu  engine"


def row(run: Run, ratio: float | None = None) -> str:
    shown = f"{ratio:6.3f}" if ratio is not None else ""
    engine = f"{run.engine:6.2f} s" if run.engine is not None else ""
    return (
        f"{run.client:>6} c={run.concurrency:<3} {run.wall:6.2f} s {shown:>6}  "
        f"{run.prompt_tps:8.0f} {run.generation_tps:6.1f}  {run.prompt_tokens:10.0f}  "
        f"{run.busy:4.0%}  {run.own_cpu:5.2f} s  {run.load:5.2f}  {engine}"
    ).rstrip()


def summary(name: str, runs: list[Run], raws: list[Run]) -> str:
    def med(values: list[float]) -> float:
        return statistics.median(values)

    ratio = med([r.wall / w.wall for r, w in zip(runs, raws, strict=True)])
    engines = [r.engine for r in runs if r.engine is not None]
    engine = f"{med(engines):6.2f} s" if engines else ""
    return (
        f"{name:<12} {med([r.wall for r in runs]):6.2f} s {ratio:6.3f}  "
        f"{med([r.prompt_tps for r in runs]):8.0f} {med([r.generation_tps for r in runs]):6.1f}  "
        f"{med([r.busy for r in runs]):4.0%}  {med([r.own_cpu for r in runs]):5.2f} s  {engine}"
    ).rstrip()


# -- main ---------------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, url: str, model: str, data_dir: Path, out: Path) -> None:
    n, rounds = args.n, args.rounds
    print(
        f"saturation: {TASK} num_fewshot 0, n={n} samples, {args.dialect}, "
        f"model {model} at {url}\nprefix caching on the server: {prefix_caching(url)}; "
        f"{os.cpu_count()} cores, load {loads()}"
    )
    # an untimed sieval run warms the server and gives the raw loop its bodies
    warm = config(url, model, args.dialect, n, DEFAULT_CONCURRENCY)
    t0 = time.perf_counter()
    bodies = bodies_of((await run_sieval(warm, data_dir, out))[0], warm, data_dir)
    took = time.perf_counter() - t0
    print(f"warm-up sieval run: {took:.1f} s; {len(bodies)} request bodies recorded")
    target = url + get_dialect(args.dialect).endpoint.url_path(model, stream=False)

    def raw_at(c: int) -> Go:
        async def go() -> None:
            await run_raw(target, bodies, c)

        return go

    def sieval_at(c: int) -> Go:
        cfg = config(url, model, args.dialect, n, c)

        async def go() -> float:
            return (await run_sieval(cfg, data_dir, out))[1]

        return go

    if args.concurrency:
        best = args.concurrency
        print(f"raw concurrency given: {best} (no sweep)")
    else:
        print(f"\nsweep of the raw loop\n{HEADER}")
        sweep = []
        for c in args.sweep:
            sweep.append(await measure(url, "raw", c, raw_at(c)))
            print(row(sweep[-1]), flush=True)
        best = min(sweep, key=lambda r: r.wall).concurrency
        print(f"best raw concurrency: {best}")

    levels = list(dict.fromkeys([best, DEFAULT_CONCURRENCY]))
    runs: dict[str, list[Run]] = {f"raw c={best}": [], **{f"sieval c={c}": [] for c in levels}}
    shown = " and c=".join(map(str, levels))
    print(f"\n{rounds} rounds, each: raw c={best}, then sieval at c={shown}")
    for i in range(1, rounds + 1):
        print(f"round {i}\n{HEADER}")
        raw = await measure(url, "raw", best, raw_at(best))
        runs[f"raw c={best}"].append(raw)
        print(row(raw), flush=True)
        for c in levels:
            run = await measure(url, "sieval", c, sieval_at(c))
            runs[f"sieval c={c}"].append(run)
            print(row(run, run.wall / raw.wall), flush=True)

    raws = runs[f"raw c={best}"]
    print(
        f"\nmedians over {rounds} rounds (ratio: the median of the rounds' sieval/raw)\n{SUMMARY}"
    )
    for name, group in runs.items():
        print(summary(name, group, raws))
    tokens = sorted({r.prompt_tokens for group in runs.values() for r in group})
    print(f"server prompt tokens per run, every run: {tokens}")
    ratio = statistics.median(
        [r.wall / w.wall for r, w in zip(runs[f"sieval c={best}"], raws, strict=True)]
    )
    verdict = "met" if ratio <= GOAL else f"missed by {ratio - GOAL:.3f}"
    print(
        f"goal: sieval's wall <= {GOAL:.2f}x the raw loop's at its best concurrency ({best}): "
        f"median ratio {ratio:.3f}, {verdict}"
    )


async def amain(args: argparse.Namespace) -> None:
    url = (args.url or os.environ.get("SIEVAL_VLLM_URL") or "").rstrip("/")
    if not url:
        sys.exit(
            "no server: pass --url or set SIEVAL_VLLM_URL (start one with "
            "scripts/live-vllm.sh start; scripts/live-vllm.sh url prints its URL)"
        )
    require_healthy(url)
    model = args.model or served_model(url)
    given = RunOptions(data_dir=Path(args.data_dir) if args.data_dir else None)
    data_dir = resolve_data_dir(config(url, model, args.dialect, args.n, 1), given)
    out = Path(tempfile.mkdtemp(prefix="sieval-bench-saturation-"))
    started = time.perf_counter()
    try:
        await bench(args, url, model, data_dir, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; load at the end {loads()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="the vLLM base URL (default $SIEVAL_VLLM_URL)")
    parser.add_argument("--model", help="the served model id (default: the first of /v1/models)")
    parser.add_argument("--dialect", default="openai_completions",
                        choices=["openai_completions", "vllm_native"])  # fmt: skip
    parser.add_argument("--n", type=int, default=100, help="ARC-Easy samples (2 requests a choice)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--sweep", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--concurrency", type=int, help="the raw loop's concurrency (no sweep)")
    parser.add_argument("--data-dir", help="benchmark data (default: as sieval eval finds it)")
    asyncio.run(amain(parser.parse_args()))


if __name__ == "__main__":
    main()
