"""SIGKILL ``sieval eval`` at random points, resume, and compare with an uninterrupted run:
``python scripts/kill_soak.py OUT [--kills 10] [--limit 60] [--seed 19]``.

Serves the reference server (``sieval serve``) on a free port and, for three dialects, runs the
same task straight through once, then again killed ``--kills`` times at random points (each
resume ``sieval eval --resume RUN`` killed in turn, when its records reach a randomly drawn
count spread over the run) before a last resume runs it to the end. It prints each kill's crash
point (records written when it landed) and whether the resumed run's
records (sample ids, one line each, per-sample metrics) and report metrics equal the straight
run's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from sieval.store.records import read_records

CASES = (
    ("openai_completions", "arc_easy_kshot_ppl:num_fewshot=0"),
    ("openai_chat", "mmlu_0shot_gen"),
    ("google_genai", "mmlu_0shot_gen"),
)
SIEVAL = [sys.executable, "-m", "sieval"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _records(run: Path) -> tuple[int, dict[str, dict[str, float]]]:
    lines, metrics = 0, {}
    for path in run.glob("*/*/records.jsonl"):
        lines += path.read_bytes().count(b"\n")
        metrics.update({k: r.metrics for k, r in read_records(path).records.items()})
    return lines, metrics


def _lines(run: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in run.glob("*/*/records.jsonl"))


def _run_dir(out: Path) -> Path | None:
    found = sorted(p for p in out.glob("*") if (p / "run.json").exists())
    return found[0] if found else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--seed", type=int, default=19)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    port = _port()
    server = subprocess.Popen([*SIEVAL, "serve", "--port", str(port), "--quiet"])
    try:
        time.sleep(3)
        for dialect, task in CASES:
            common = [
                "--endpoint",
                f"http://127.0.0.1:{port}",
                "--model",
                "sieval-reference",
                "--dialect",
                dialect,
                "--task",
                task,
                "--limit",
                str(args.limit),
            ]
            straight_out = args.out / f"straight-{dialect}"
            t0 = time.monotonic()
            subprocess.run(
                [*SIEVAL, "eval", *common, "--out", str(straight_out)],
                check=True,
                capture_output=True,
            )
            wall = time.monotonic() - t0
            killed_out = args.out / f"killed-{dialect}"
            points = []
            for k in range(args.kills):
                run = _run_dir(killed_out)
                done = _lines(run) if run else 0
                room = max(1, (args.limit - done) // (args.kills - k + 1))
                target = done + rng.randint(1, room)
                cmd = (
                    [*SIEVAL, "eval", "--resume", str(run)]
                    if run
                    else [*SIEVAL, "eval", *common, "--out", str(killed_out)]
                )
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                while proc.poll() is None:
                    run = _run_dir(killed_out)
                    if run is not None and _lines(run) >= target:
                        break
                    time.sleep(0.002)
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                run = _run_dir(killed_out)
                points.append(_lines(run) if run else "before the run directory")
            run = _run_dir(killed_out)
            cmd = (
                [*SIEVAL, "eval", "--resume", str(run)]
                if run
                else [*SIEVAL, "eval", *common, "--out", str(killed_out)]
            )
            subprocess.run(cmd, check=True, capture_output=True)
            run = _run_dir(killed_out)
            assert run is not None
            straight = _run_dir(straight_out)
            assert straight is not None
            lines, resumed = _records(run)
            _, expected = _records(straight)
            reports = [json.loads((r / "report.json").read_text()) for r in (straight, run)]
            same = [{x["task"]: x["metrics"] for x in rep["results"]} for rep in reports]
            print(
                json.dumps(
                    {
                        "dialect": dialect,
                        "task": task,
                        "straight_wall_s": round(wall, 1),
                        "crash_points_records": points,
                        "records": len(resumed),
                        "lines": lines,
                        "samples_equal": resumed == expected,
                        "report_metrics_equal": same[0] == same[1],
                        "headline": {
                            t: {k: v for k, v in m.items() if not isinstance(v, dict)}
                            for t, m in same[1].items()
                        },
                    }
                ),
                flush=True,
            )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
