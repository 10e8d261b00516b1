"""The shared benchmark data (``$SIEVAL_DATA_DIR``, else ``../shared/data`` beside the repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
    if not (path / "ifeval").is_dir():
        pytest.skip(f"benchmark data not found at {path}; set SIEVAL_DATA_DIR")
    return path
