"""Run (or resume) a fake-task eval against URL; used as a subprocess by test_resume_kill.

python resume_worker.py URL DATA_DIR OUT RUN_NAME [--resume RUN_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fakes import FakeTask

from sieval.plan.config import parse_config
from sieval.runner import RunOptions, run_eval


def main(argv: list[str]) -> int:
    url, data_dir, out, run_name = argv[:4]
    resume = Path(argv[5]) if len(argv) > 5 and argv[4] == "--resume" else None
    config = parse_config(
        f"""
models:
  - name: m
    endpoint: {url}
    model: fake-model
    concurrency_limit: 2
tasks:
  - name: fake_qa
"""
    )
    result = run_eval(
        config,
        RunOptions(out=Path(out), run_name=run_name, data_dir=Path(data_dir), resume=resume),
        tasks={"fake_qa": FakeTask()},
    )
    print(result.run_dir)
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
