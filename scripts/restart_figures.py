"""Figures of scripts/restart_soak.sh: the restarted run against the straight one.

python scripts/restart_figures.py OUT
"""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

from sieval.store.records import read_records

TASK = "gemma-3-270m/arc_easy_kshot_ppl/records.jsonl"


def _records(run: str) -> dict:
    (path,) = glob.glob(f"{run}/*/{TASK}")
    return read_records(Path(path)).records


def _metrics(run: str) -> dict:
    (path,) = glob.glob(f"{run}/*/report.json")
    return json.loads(Path(path).read_text())["results"][0]["metrics"]


def main(out: str) -> None:
    clean, restarted = _records(f"{out}/clean"), _records(f"{out}/run")
    statuses = sorted({r.status for r in restarted.values()})
    print(f"samples straight/restarted: {len(clean)} {len(restarted)}; statuses: {statuses}")
    differ = [k for k in clean if clean[k].metrics != restarted.get(k, clean[k]).metrics]
    print("samples whose metrics differ:", len(differ))
    attempts = [
        int(req.timings.get("attempts", 1))
        for r in restarted.values()
        for req in r.requests.values()
    ]
    print(
        f"requests: {len(attempts)}, retried: {sum(a > 1 for a in attempts)}, "
        f"retries: {sum(a - 1 for a in attempts)}, largest attempts: {max(attempts)}"
    )
    print("report straight: ", _metrics(f"{out}/clean"))
    print("report restarted:", _metrics(f"{out}/run"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/restart")
