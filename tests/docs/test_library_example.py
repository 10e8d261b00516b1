"""The README's "From Python" block runs as written against the embedded server, in a fresh
folder holding ``examples/`` (as a fresh clone does), and prints each task's figures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.markdown import ROOT


def test_the_readmes_library_block_runs_as_written(tmp_path: Path) -> None:
    data = Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))
    if not (data / "arc_easy").is_dir():
        pytest.skip(f"benchmark data not found at {data}; set SIEVAL_DATA_DIR")
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### From Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None, "README's From Python section has no python block"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    done = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        cwd=tmp_path,
        env=dict(os.environ, SIEVAL_DATA_DIR=str(data), HF_HUB_OFFLINE="1"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("arc_easy acc_norm ") and lines[1].startswith("quiz_mc acc ")
    run_dir = Path(lines[-1])
    assert (tmp_path / run_dir / "report.json").is_file() or (run_dir / "report.json").is_file()
