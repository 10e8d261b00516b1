"""A forecast against a real run: the forecast's tokens beside the server's own counts.

Usage: python scripts/cost_evidence.py --url http://127.0.0.1:18371 CONFIG [-- EVAL_ARGS ...]

Reads vLLM's ``vllm:prompt_tokens_total`` and ``vllm:generation_tokens_total`` from ``/metrics``,
runs ``sieval eval CONFIG --forecast EVAL_ARGS`` in a fresh process, reads the counters again,
and prints per model and task: the forecast's prompt tokens (exact or estimated, and how), what
the records' usage says the server counted, the most output tokens against the output counted,
the estimate's error where the count was estimated; then the totals against the counters' rise.
The counters count every request the server received in between: run it on a server nothing
else uses (the README's ``SIEVAL_VLLM_PORT`` starts one of your own).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

COUNTERS = ("vllm:prompt_tokens_total", "vllm:generation_tokens_total")


def counters(url: str) -> dict[str, float]:
    """Each counter summed over its label sets (one engine, one model here)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as reply:
        text = reply.read().decode()
    out = dict.fromkeys(COUNTERS, 0.0)
    for line in text.splitlines():
        match = re.match(r"^([a-z_:]+)(?:\{[^}]*\})? ([0-9.e+-]+)$", line)
        if match and match.group(1) in out:
            out[match.group(1)] += float(match.group(2))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the vLLM whose /metrics counts the run")
    parser.add_argument("config", type=Path)
    parser.add_argument("--out", type=Path, default=Path("results/cost-evidence"))
    parser.add_argument("eval_args", nargs="*", help="more sieval eval arguments (after --)")
    args = parser.parse_args()
    before = counters(args.url)
    command = [
        sys.executable, "-m", "sieval", "eval", str(args.config), "--forecast",
        "--out", str(args.out), *args.eval_args,
    ]  # fmt: skip
    print("$ sieval " + " ".join(command[3:]), flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = counters(args.url)
    for line in done.stderr.splitlines():
        if line.startswith(("forecast", "stopped", "budget", "cost")):
            print("  " + line)
    print(f"exit {done.returncode}, {wall:.1f} s")
    run_dir = Path(re.findall(r"run directory: (\S+)", done.stdout)[-1])
    report: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    rows = []
    totals = {"forecast": 0, "usage_in": 0, "most_out": 0, "usage_out": 0, "retries": 0}
    for result in report["results"]:
        forecast, actual = result["cost"]["forecast"], result["cost"]["actual"]
        error = (forecast["prompt_tokens"] - actual["input_tokens"]) / actual["input_tokens"]
        rows.append(
            f"| {result['model']} | {result['task']} | {result['samples']['scored']}"
            f"/{result['samples']['total']} | {actual['requests']} | "
            f"{'' if forecast['exact'] else '~'}{forecast['prompt_tokens']:,} | "
            f"{actual['input_tokens']:,} | {error:+.1%} | {forecast['max_output_tokens']:,} | "
            f"{actual['output_tokens']:,} | {forecast['method']} |"
        )
        totals["forecast"] += forecast["prompt_tokens"]
        totals["usage_in"] += actual["input_tokens"]
        totals["most_out"] += forecast["max_output_tokens"]
        totals["usage_out"] += actual["output_tokens"]
        totals["retries"] += actual.get("retries", 0)
    print(
        "| model | task | scored | requests | forecast prompt | usage prompt | error | "
        "forecast output ≤ | usage output | counted by |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    prompt = after[COUNTERS[0]] - before[COUNTERS[0]]
    output = after[COUNTERS[1]] - before[COUNTERS[1]]
    print(
        f"totals: forecast prompt {totals['forecast']:,}, records' usage {totals['usage_in']:,}, "
        f"{COUNTERS[0]} rose by {prompt:,.0f}; output: forecast at most {totals['most_out']:,}, "
        f"records' usage {totals['usage_out']:,}, {COUNTERS[1]} rose by {output:,.0f}"
    )
    if totals["retries"]:
        print(
            f"{totals['retries']} attempts were sent again after a timeout, 429 or 5xx: the "
            "server counted their prompts too, with no usage in the records"
        )
    print(f"run directory: {run_dir}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
