"""Measure what a forking memory bomb holds in the sandbox: the resident memory of the whole tree.

    .venv/bin/python scripts/sandbox_memory.py [--children 6] [--each-mib 900] [--limit-mib 1024]

The program forks ``--children`` children; each allocates ``--each-mib`` and touches every page
(resident, not only reserved), holds it 3 s, and exits; the parent waits for them and asserts
they all exited 0. While it runs, the resident set (``VmRSS``) of every process of the
sandbox's uids (``bwrap-root``: ``uid_base`` and up; another mode: ``--uid``) is summed every
50 ms; the largest sum is the tree's peak. Prints the mode, the memory bound, the verdict, the
sampled peak and, where a control group measured it, the group's own peak.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sieval.scoring.sandbox import Limits, Sandbox  # noqa: E402

BOMB = """
import os, time
children = []
for i in range({children}):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray({each_mib} * 1024 * 1024)
            for at in range(0, len(block), 4096):
                block[at] = 1
            time.sleep(3)
        finally:
            os._exit(0)
    children.append(pid)
ended = [os.waitpid(pid, 0)[1] for pid in children]
assert ended == [0] * len(children), ended
"""


def resident_mib(uids: range) -> float:
    """The summed VmRSS of every process whose real uid is in ``uids``."""
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            status = (proc / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields.get("Uid", "-1").split()[0])
        if uid in uids and "VmRSS" in fields:
            total += int(fields["VmRSS"].split()[0])
    return total / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, default=6)
    parser.add_argument("--each-mib", type=int, default=900)
    parser.add_argument("--limit-mib", type=int, default=1024)
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--uid", type=int, default=None, help="the program's uid (not root mode)")
    args = parser.parse_args()
    limits = Limits(wall_seconds=120, cpu_seconds=60, memory_mib=args.limit_mib)
    sandbox = Sandbox(limits, concurrency=1, mode=args.mode, allow_unsafe=args.mode == "unsafe")
    uids = (
        range(sandbox.uid_base, sandbox.uid_base + 1)
        if sandbox.mode == "bwrap-root"
        else range(args.uid if args.uid is not None else os.getuid(), 1 + (args.uid or os.getuid()))
    )
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], resident_mib(uids))
            time.sleep(0.05)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    started = time.monotonic()
    result = asyncio.run(sandbox.run(BOMB.format(children=args.children, each_mib=args.each_mib)))
    done.set()
    watcher.join()
    print(f"mode: {sandbox.mode}; memory bound: {sandbox.memory_bound()}")
    print(f"program: {args.children} children × {args.each_mib} MiB, limit {args.limit_mib} MiB")
    print(f"verdict: {result.status} ({result.reason}) in {time.monotonic() - started:.1f} s")
    print(f"sampled peak resident memory of the tree: {peak[0]:.0f} MiB")
    if result.peak_memory_mib is not None:
        print(f"control group's own peak: {result.peak_memory_mib:.0f} MiB")


if __name__ == "__main__":
    main()
