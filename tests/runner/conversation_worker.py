"""Run (or resume) the two-turn test task on the embedded server, with a wire log; used as a
subprocess by test_resume_conversation (``conversations.HANG`` makes it stop between turns).

python conversation_worker.py DATA_DIR OUT RUN_NAME [--resume RUN_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from conversations import TwoTurns

from sieval.plan.config import parse_config
from sieval.runner import RunOptions, run_eval


def main(argv: list[str]) -> int:
    data_dir, out, run_name = argv[:3]
    resume = Path(argv[4]) if len(argv) > 4 and argv[3] == "--resume" else None
    config = parse_config(
        "models: [{name: m, endpoint: embedded, kind: chat, concurrency_limit: 1}]\n"
        "tasks: [{name: two_turns}]\n"
    )
    result = run_eval(
        config,
        RunOptions(
            out=Path(out),
            run_name=run_name,
            data_dir=Path(data_dir),
            resume=resume,
            wire_log=True,
            preflight=False,
            serving_checks="off",
        ),
        tasks={"two_turns": TwoTurns()},
    )
    print(result.run_dir)
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
