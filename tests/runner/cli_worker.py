"""sieval's real command line with the fake task registered: ``python cli_worker.py ARGS``.

Used as a subprocess by the tests that need two real processes (``test_lock.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fakes import FakeTask

from sieval.cli import common
from sieval.cli.main import main

common.task_registry = lambda: {"fake_qa": FakeTask()}  # type: ignore[assignment]

if __name__ == "__main__":
    sys.argv = ["sieval", *sys.argv[1:]]
    main()
