"""Scale: a 0-shot ARC-like task of many samples against an instant server in its own process.

Usage: python bench/scale.py [--samples 100000] [--concurrency 64] [--out DIR]

The task is ``arc_easy_kshot_ppl``'s own code (8 scoring requests a sample: 4 choices and 4
unconditional) over generated questions; the server is ``bench/instant_server.py`` in another
process, so what is measured is the client. Each phase runs in a fresh child process that samples
its own resident memory (``VmRSS``) every 0.1 s and reports its peak (``VmHWM``):

1. the run: samples/s in each tenth of the run, RSS at each tenth, peak RSS (the report at the
   end included), ``records.jsonl`` bytes per sample;
2. ``--resume`` of the finished run: nothing to send; wall seconds and peak RSS, and whether the
   first session's timings survived in ``report.json``;
3. the same run at a fifth of the samples, for the ratio: peak RSS and samples/s at N/5 vs N
   (flat means a ratio near 1).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORDS = [
    "red",
    "blue",
    "green",
    "stone",
    "river",
    "cloud",
    "seed",
    "light",
    "heat",
    "water",
    "plant",
    "animal",
    "metal",
    "glass",
    "sound",
    "wind",
    "rock",
    "sand",
    "salt",
    "ice",
]


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


class _Watch:
    """Samples this process's RSS every 0.1 s in a thread."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.samples.append((time.monotonic(), _rss_kb("VmRSS:")))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _task(n: int) -> Any:
    from sieval.tasks.arc_easy_kshot_ppl import SPEC
    from sieval.tasks.base import Sample
    from sieval.tasks.spec import SpecTask

    class ScaleArc(SpecTask):
        def data_files(self, data_dir: Path) -> list[Path]:
            return []

        def load(self, data_dir: Path, config: Any) -> Iterator[Sample]:
            rng = random.Random(0)
            return (
                Sample(
                    id=f"q{i}",
                    data={
                        "fewshot": "",
                        "query": "Question: Which of these goes with "
                        f"{rng.choice(WORDS)} number {i}?\nAnswer:",
                        "choices": [" ".join(rng.sample(WORDS, 2)) for _ in range(4)],
                        "labels": ["A", "B", "C", "D"],
                        "shot_ids": [],
                    },
                    gold=i % 4,
                )
                for i in range(n)
            )

    task = ScaleArc(SPEC)
    task.name = "arc_scale"
    return task


class _Deciles:
    """A progress sink noting the time at each tenth of the samples."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.marks: list[float] = []
        self.t0 = time.monotonic()

    def start(self, unit: str, total: int, done: int) -> None:
        self.t0 = time.monotonic()

    def advance(self, unit: str, ok: bool, tokens: int = 0) -> None:
        self.done += 1
        if self.done * 10 >= (len(self.marks) + 1) * self.total:
            self.marks.append(time.monotonic())

    def close(self) -> None:
        pass


def _child(args: argparse.Namespace) -> None:
    from sieval.runner import RunOptions, arun_eval, parse_config

    n = args.samples
    config = parse_config(
        f"models: [{{name: m, endpoint: 'http://127.0.0.1:{args.port}', model: instant, "
        f"concurrency_limit: {args.concurrency}}}]\n"
        f"tasks: [{{name: arc_scale, n: {n}, num_fewshot: 0}}]\n"
    )
    watch = _Watch()
    sink = _Deciles(n)
    t0 = time.monotonic()
    if args.child == "resume":
        options = RunOptions(resume=Path(args.out) / args.name, data_dir=Path(args.out),
                             preflight=False)  # fmt: skip
    else:
        options = RunOptions(out=Path(args.out), data_dir=Path(args.out), run_name=args.name,
                             preflight=False)  # fmt: skip
    result = asyncio.run(arun_eval(config, options, tasks={"arc_scale": _task(n)}, progress=sink))
    wall = time.monotonic() - t0
    watch.stop()
    marks = [sink.t0, *sink.marks]
    rates = [n / 10 / (b - a) for a, b in itertools.pairwise(marks) if b > a]
    rss_at = []
    for mark in sink.marks:
        before = [kb for t, kb in watch.samples if t <= mark]
        rss_at.append(before[-1] // 1024 if before else 0)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "peak_rss_mb": _rss_kb("VmHWM:") // 1024,
                "decile_rates": rates,
                "rss_at_deciles_mb": rss_at,
                "exit": result.exit_code,
                "sessions": len(result.report["timings"].get("sessions", [])),
                "first_session_requests": result.report["timings"]["sessions"][0]["requests"],
            }
        )
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _phase(args: argparse.Namespace, child: str, samples: int, name: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", child, "--samples", str(samples),
               "--port", str(args.port), "--out", args.out, "--name", name,
               "--concurrency", str(args.concurrency)]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{child} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--out", default="/tmp/sieval-bench-scale")
    parser.add_argument("--child", choices=["run", "resume"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--name", default="run")
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    import shutil

    shutil.rmtree(args.out, ignore_errors=True)
    Path(args.out).mkdir(parents=True)
    args.port = _free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "bench/instant_server.py"),
                               str(args.port)])  # fmt: skip
    try:
        time.sleep(1.5)
        print(f"load before: {os.getloadavg()[0]:.2f} (1-min), {os.cpu_count()} cores")
        small = _phase(args, "run", args.samples // 5, "small")
        big = _phase(args, "run", args.samples, "run")
        resume = _phase(args, "resume", args.samples, "run")
    finally:
        server.terminate()
        server.wait()
    records = Path(args.out) / "run" / "m" / "arc_scale" / "records.jsonl"
    size = records.stat().st_size
    print(f"load after: {os.getloadavg()[0]:.2f} (1-min)")
    print(f"\n{args.samples:,} samples, 8 requests each, concurrency {args.concurrency}")
    print("decile  samples/s  RSS MB")
    for i, (rate, rss) in enumerate(zip(big["decile_rates"], big["rss_at_deciles_mb"],
                                        strict=False), 1):  # fmt: skip
        print(f"{i * 10:5d}%  {rate:9.0f}  {rss:6d}")
    rates = big["decile_rates"]
    print(f"run: {big['wall_s']:.1f} s wall, peak RSS {big['peak_rss_mb']} MB (report included); "
          f"slowest/fastest decile {min(rates) / max(rates):.2f}")  # fmt: skip
    print(f"records.jsonl: {size / args.samples:.0f} bytes a sample ({size / 2**20:.0f} MiB)")
    print(f"N/5 run: peak RSS {small['peak_rss_mb']} MB; peak N / peak N/5 = "
          f"{big['peak_rss_mb'] / small['peak_rss_mb']:.2f}")  # fmt: skip
    print(f"--resume of the finished run: {resume['wall_s']:.2f} s, peak RSS "
          f"{resume['peak_rss_mb']} MB, sessions {resume['sessions']}, first session's requests "
          f"kept: {resume['first_session_requests']}")  # fmt: skip


if __name__ == "__main__":
    main()
