"""``lower()`` and ``lift()`` per call, this checkout against another one, side by side.

Usage: python bench/lower_lift.py [--against PATH] [--iterations 20000] [--rounds 5]

Each recorded case (a real vLLM 0.32.0 or SGLang 0.5.23 reply from ``tests/fixtures``) is
lowered and lifted ``iterations`` times in a fresh process per checkout and round; rounds
alternate the order of the two checkouts (the machine is noisy), and the table shows the medians
and the per-round ratio new/old. ``--against`` is a checkout of sieval (e.g. ``git worktree add
/tmp/before <commit>``); without it only this checkout is measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = [
    ("openai_completions", "echo_top3"),
    ("openai_completions", "gen_top5"),
    ("openai_completions", "stream"),
    ("vllm_native", "prompt_logprobs_top3_ids"),
    ("vllm_native", "n2_token_ids"),
    ("openai_chat", "logprobs_greedy"),
    ("openai_chat", "stream_logprobs"),
    ("openai_responses", "logprobs_top3"),
    ("sglang_native", "gen_top2"),
    ("sglang_native", "score_top3"),
]

# Runs inside the measured checkout: the lowering entry points moved from dialects/plane.py to
# dialects/table.py, so both are tried; the requests are this checkout's recorded cases.
MEASURE = r"""
import json, sys, time
# an editable install's finder would resolve "sieval" to the installed checkout: drop it
sys.meta_path[:] = [f for f in sys.meta_path if "Editable" not in type(f).__name__]
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests"]
try:
    from sieval.dialects.table import lift, lower
except ImportError:
    from sieval.dialects.plane import lift, lower
from sieval.dialects.registry import get_dialect
from dialects import recorded_cases
import dialects.test_vllm_native as vn
import importlib
requests = {"openai_completions": recorded_cases.CASES, "vllm_native": vn.CASES}
for other in ("openai_chat", "openai_responses", "sglang_native"):
    requests[other] = importlib.import_module(f"dialects.test_{other}").CASES
versions = {"sglang_native": "0.5.23"}
out = {}
for dialect_id, name in json.loads(sys.argv[2]):
    version = versions.get(dialect_id, "0.32.0")
    record = json.load(open(f"{sys.argv[1]}/tests/fixtures/{dialect_id}/{version}/{name}.json"))
    body = (record["reply_sse"] if "reply_sse" in record else json.dumps(record["reply"])).encode()
    dialect, request, n = get_dialect(dialect_id), requests[dialect_id][name], int(sys.argv[3])
    lowered = lower(dialect, request, "gemma-3-270m")
    lift(dialect, lowered, 200, {}, body)
    t0 = time.perf_counter()
    for _ in range(n):
        lower(dialect, request, "gemma-3-270m")
    t1 = time.perf_counter()
    for _ in range(n):
        lift(dialect, lowered, 200, {}, body)
    t2 = time.perf_counter()
    out[f"{dialect_id}/{name}"] = [(t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6]
print(json.dumps(out))
"""


def measure(checkout: Path, iterations: int) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(checkout), json.dumps(CASES), str(iterations)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"measuring {checkout} failed:\n{done.stderr}")
    result: dict[str, list[float]] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another sieval checkout (the 'old' column)")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sides = {"new": ROOT} | ({"old": args.against.resolve()} if args.against else {})
    runs: dict[str, list[dict[str, list[float]]]] = {side: [] for side in sides}
    for rnd in range(args.rounds):
        order = list(sides.items()) if rnd % 2 == 0 else list(reversed(sides.items()))
        for side, path in order:
            runs[side].append(measure(path, args.iterations))
    print(
        f"lower() and lift() per call, us (median of {args.rounds} rounds, "
        f"{args.iterations:,} calls each); new = {ROOT}"
        + (f", old = {sides['old']}" if "old" in sides else "")
    )
    head = f"{'case':44} {'lower new':>9} {'lift new':>9}"
    if "old" in sides:
        head += f" {'lower old':>9} {'lift old':>9} {'lower n/o':>9} {'lift n/o':>9}"
    print(head)
    for key in runs["new"][0]:
        new = [r[key] for r in runs["new"]]
        row = f"{key:44} {statistics.median(x[0] for x in new):9.1f}"
        row += f" {statistics.median(x[1] for x in new):9.1f}"
        if "old" in sides:
            old = [r[key] for r in runs["old"]]
            lower_ratio = statistics.median(n[0] / o[0] for n, o in zip(new, old, strict=True))
            lift_ratio = statistics.median(n[1] / o[1] for n, o in zip(new, old, strict=True))
            row += f" {statistics.median(x[0] for x in old):9.1f}"
            row += f" {statistics.median(x[1] for x in old):9.1f}"
            row += f" {lower_ratio:9.2f} {lift_ratio:9.2f}"
        print(row)


if __name__ == "__main__":
    main()
