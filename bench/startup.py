"""Start-up wall time: ``import sieval``, ``sieval --help`` and ``sieval tasks``, side by side.

Usage: python bench/startup.py [--runs 20] [--against CHECKOUT] [--lm-eval-venv DIR]

Each command is a fresh process (this interpreter, the checkout as its working directory so its
``sieval`` is the one imported), run ``--runs`` times in interleaved rounds (the order rotates each
round: the machine is shared), wall time from start to exit. Printed: each command's median and
min, and its median ratio to ``python -c pass`` measured in the same rounds (the interpreter's own
start-up). ``--against`` measures another checkout's commands too; with the lm-evaluation-harness
venv of ``bench/scoring_overhead.py`` present, ``lm_eval --help`` is measured as well.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path.home() / ".cache/sieval/bench/lm-eval-0.4.13"
CLI = "import sys; sys.argv[0] = 'sieval'; from sieval.cli.main import main; main()"


def commands(checkout: Path, label: str) -> dict[str, tuple[list[str], Path]]:
    py = sys.executable
    return {
        f"import sieval{label}": ([py, "-c", "import sieval"], checkout),
        f"sieval --help{label}": ([py, "-c", CLI, "--help"], checkout),
        f"sieval tasks{label}": ([py, "-c", CLI, "tasks"], checkout),
    }


def wall(argv: list[str], cwd: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--against", type=Path, help="another sieval checkout, measured too")
    parser.add_argument("--lm-eval-venv", type=Path, default=VENV)
    args = parser.parse_args()
    todo: dict[str, tuple[list[str], Path]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], ROOT)
    }
    todo |= commands(ROOT, "")
    if args.against:
        todo |= commands(args.against.resolve(), " (against)")
    lm_eval = args.lm_eval_venv / "bin/lm_eval"
    if lm_eval.exists():
        todo["lm_eval --help"] = ([str(lm_eval), "--help"], ROOT)
    for argv, cwd in todo.values():  # warm the file cache once
        wall(argv, cwd)
    times: dict[str, list[float]] = {name: [] for name in todo}
    names = list(todo)
    for rnd in range(args.runs):
        shift = rnd % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(wall(*todo[name]))
    base = times["python -c pass"]
    print(
        f"start-up wall time, {args.runs} interleaved runs each; python "
        f"{sys.version.split()[0]}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"{'command':<30} {'median s':>9} {'min s':>7} {'/ python -c pass':>17}")
    for name, xs in times.items():
        ratio = statistics.median(x / b for x, b in zip(xs, base, strict=True))
        print(f"{name:<30} {statistics.median(xs):9.3f} {min(xs):7.3f} {ratio:17.2f}")


if __name__ == "__main__":
    main()
