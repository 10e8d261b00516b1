"""The soak's figures from a fault-free run, a run through ``scripts/fault_proxy.py`` and the
proxy's log: ``python scripts/soak_figures.py CLEAN_RUN FAULTY_RUN PROXY_LOG [--retries N]``.

Prints: faults injected by kind; samples scored, failed and lost in each run; whether every
per-sample metric and every task metric is identical; the retries the records hold against the
faults the proxy injected; the largest number of attempts of any request against the policy's
bound (retries + 1); and, for every 429, the time until the same request body came back (the
``Retry-After`` honoured, measured at the proxy).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path

from sieval.store.records import read_records

MODEL_ROUTES = ("/completions", "/responses", "/messages", "/generate", "GenerateContent")


def _records(run: Path) -> dict[str, dict[str, object]]:
    out = {}
    for path in sorted(run.glob("*/*/records.jsonl")):
        for sid, rec in read_records(path).records.items():
            attempts = [int(r.timings.get("attempts", 1)) for r in rec.requests.values()]
            out[f"{path.parent.name}/{sid}"] = {
                "status": rec.status,
                "metrics": rec.metrics,
                "prediction": rec.prediction,
                "channels": rec.channels,
                "attempts": attempts,
                "error": (rec.error or {}).get("class"),
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("clean", type=Path)
    ap.add_argument("faulty", type=Path)
    ap.add_argument("proxy_log", type=Path)
    ap.add_argument("--retries", type=int, default=4)
    args = ap.parse_args()

    log = [json.loads(line) for line in args.proxy_log.read_text().splitlines() if line]
    posts = [e for e in log if "path" in e and e["path"].endswith(MODEL_ROUTES)]
    away = [e for e in log if "upstream_away" in e]
    if away:  # the server behind the proxy was down (a restart): the proxy answered 502
        print(f"proxy: {len(away)} requests answered 502 while the upstream was away")
    faults = Counter(e["fault"] for e in posts if e["fault"])
    print(
        f"proxy: {len(posts)} POSTs, {sum(faults.values())} faulted "
        f"({sum(faults.values()) / max(len(posts), 1):.1%}): {dict(sorted(faults.items()))}"
    )

    clean, faulty = _records(args.clean), _records(args.faulty)
    for name, recs in (("clean", clean), ("faulty", faulty)):
        status = Counter(str(r["status"]) for r in recs.values())
        print(f"{name}: {len(recs)} samples recorded, {dict(status)}")
    lost = sorted(set(clean) - set(faulty))
    print(f"samples in the clean run missing from the faulty run: {len(lost)}")
    differ = [k for k in clean if k in faulty and clean[k]["metrics"] != faulty[k]["metrics"]]
    print(f"samples whose metrics differ: {len(differ)} {differ[:5]}")
    told = [k for k in clean if k in faulty and clean[k]["prediction"] != faulty[k]["prediction"]]
    print(f"samples whose prediction differs: {len(told)} {told[:5]}")
    heard = [k for k in clean if k in faulty and clean[k]["channels"] != faulty[k]["channels"]]
    print(f"samples whose channels (generated text, ...) differ: {len(heard)} {heard[:5]}")

    reports = [json.loads((run / "report.json").read_text()) for run in (args.clean, args.faulty)]
    metrics = [
        {
            r["task"]: {k: v for k, v in r["metrics"].items() if not isinstance(v, dict)}
            for r in rep["results"]
        }
        for rep in reports
    ]
    print(
        f"task metrics identical: {metrics[0] == metrics[1]}: "
        f"clean={metrics[0]} faulty={metrics[1]}"
    )

    attempts = [a for r in faulty.values() for a in r["attempts"]]  # type: ignore[union-attr]
    recorded_retries = sum(a - 1 for a in attempts)
    print(
        f"faulty run: {len(attempts)} requests recorded, {recorded_retries} retries recorded, "
        f"largest attempts {max(attempts, default=0)} (bound: retries {args.retries} + 1)"
    )
    print(
        f"faults injected on sample requests vs retries recorded: {sum(faults.values())} vs "
        f"{recorded_retries} (faults on pre-run checks are retried too but not in records)"
    )

    gaps = []
    for i, e in enumerate(posts):
        if e["fault"] != "429":
            continue
        later = next((f for f in posts[i + 1 :] if f["body_sha"] == e["body_sha"]), None)
        if later is not None:
            gaps.append(later["t"] - e["t"])
    if gaps:
        print(
            f"Retry-After 1 s: {len(gaps)} 429s retried; gap to the retry min {min(gaps):.3f} s, "
            f"median {statistics.median(gaps):.3f} s, max {max(gaps):.3f} s"
        )


if __name__ == "__main__":
    main()
