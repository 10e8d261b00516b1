"""Two runs of the same plan, sample by sample: every request's wire body byte for byte, its
decision ledger, and the sample's status, metrics and prediction.

Usage: python scripts/compare_bodies.py RUN_A RUN_B

``sieval compare`` says whether the scores moved (flips, differences with intervals); this says
whether what was *sent* moved: each request's body as the records keep it, expanded from
``shared.jsonl`` (``expand_requests``) and encoded as JSON, compared as bytes. Exit 0 when every
sample of every (model, task) the two runs share is identical in all of these, 1 otherwise
(the first differences are printed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec

from sieval.store.records import Shared, expand_requests, read_records, shared_path

_encode = msgspec.json.Encoder().encode


def units(run: Path) -> dict[tuple[str, str], Path]:
    """Each (model directory, task) of a run, with its records file (shards left out)."""
    return {
        (path.parent.parent.name, path.parent.name): path
        for path in sorted(run.glob("*/*/records.jsonl"))
    }


def samples(path: Path) -> dict[str, dict[str, Any]]:
    """What is compared of each sample (its latest record)."""
    shared = Shared.load(shared_path(path))
    out = {}
    for sample_id, record in read_records(path).records.items():
        requests = expand_requests(record.requests, shared)
        out[sample_id] = {
            "status": record.status,
            "metrics": _encode(record.metrics),
            "prediction": _encode(record.prediction),
            "bodies": {key: _encode(r.body) for key, r in requests.items()},
            "ledgers": {key: _encode(r.ledger) for key, r in requests.items()},
        }
    return out


def main(argv: list[str]) -> int:
    a, b = Path(argv[0]), Path(argv[1])
    left, right = units(a), units(b)
    shared = sorted(set(left) & set(right))
    only = sorted(set(left) ^ set(right))
    total = bodies = differ = 0
    shown: list[str] = []
    for unit in shared:
        one, two = samples(left[unit]), samples(right[unit])
        for sample_id in sorted(set(one) | set(two)):
            total += 1
            x, y = one.get(sample_id), two.get(sample_id)
            if x is None or y is None:
                differ += 1
                shown.append(f"{'/'.join(unit)}/{sample_id}: only in {'B' if x is None else 'A'}")
                continue
            bodies += len(x["bodies"])
            for field in ("status", "metrics", "prediction", "bodies", "ledgers"):
                if x[field] != y[field]:
                    differ += 1
                    shown.append(f"{'/'.join(unit)}/{sample_id}: {field} differs")
                    break
    print(
        f"{len(shared)} units, {total} samples, {bodies} request bodies compared byte for byte: "
        f"{total - differ} samples identical, {differ} differ"
        + (f"; units in one run only: {only}" if only else "")
    )
    for line in shown[:20]:
        print("  " + line)
    return 0 if differ == 0 and not only else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
