"""How a test runs an evaluation: ``options(out=tmp_path, ...)``.

The shared benchmark data, and the pre-run checks off (the serving checks with them): a test that
is not about the checks should not pay for them, nor fail for them. A test about them says so,
``options(preflight=True)`` (the command line's default), and so does a test whose claim runs
through them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sieval.runner import RunOptions

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[2] / "shared" / "data"))
"""The shared benchmark data (``$SIEVAL_DATA_DIR``, else ``../shared/data`` beside the repo)."""


def options(**fields: Any) -> RunOptions:
    """``RunOptions`` for a test: the shared data, and ``preflight`` off unless it is given."""
    fields.setdefault("data_dir", DATA)
    fields.setdefault("preflight", False)
    return RunOptions(**fields)
