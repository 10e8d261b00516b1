"""Time to read every stored split through its loader (``Source.rows``), each in a fresh process.

    python bench/data_loaders.py [--data-dir DIR] [--rounds 3]

A fresh process per split and round, timed from importing the registry to the last row, so each
figure includes its reader's imports (pyarrow for Arrow and Parquet): what a ``sieval eval`` plan
pays for that split. Prints the rows and the median time per split (one BBH subtask, MBPP full).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_ONE = """
import json, sys, time
from pathlib import Path
start = time.perf_counter()
from sieval.data.registry import get_source
source = get_source(sys.argv[1])
subset = sys.argv[3] or None
n = len(source.rows(Path(sys.argv[4]), sys.argv[2], subset))
print(json.dumps({"rows": n, "seconds": time.perf_counter() - start}))
"""


def _parts(data_dir: Path) -> list[tuple[str, str, str]]:
    sys.path.insert(0, str(ROOT))
    from sieval.data.registry import SOURCES

    parts = []
    for name, source in SOURCES.items():
        subsets = source.subsets if source.subset_required else ("",)
        for split in source.splits:
            parts += [(name, split, subset) for subset in subsets[:1]]
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{'dataset':16} {'split':11} {'subset':20} {'rows':>7} {'ms':>7}")
    for name, split, subset in _parts(args.data_dir):
        seconds, rows = [], 0
        for _ in range(args.rounds):
            out = subprocess.run(
                [sys.executable, "-c", _ONE, name, split, subset, str(args.data_dir)],
                check=True, capture_output=True, text=True, cwd=ROOT,
            )  # fmt: skip
            result = json.loads(out.stdout)
            seconds.append(result["seconds"])
            rows = result["rows"]
        print(f"{name:16} {split:11} {subset:20} {rows:7} {statistics.median(seconds) * 1000:7.0f}")


if __name__ == "__main__":
    main()
