"""Real sieval processes for the tests that need more than one: a script run as a subprocess."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
CLI = HERE / "cli_worker.py"
"""sieval's command line with the fake task registered."""


async def start(script: Path, *args: str) -> asyncio.subprocess.Process:
    """``script ARGS`` in a fresh interpreter that imports this checkout's sieval."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(HERE.parents[1]), "COLUMNS": "300"},
    )


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    """Its exit code and everything it printed (stdout, then stderr)."""
    out, err = await asyncio.wait_for(proc.communicate(), timeout=300)
    assert proc.returncode is not None
    return proc.returncode, out.decode() + err.decode()
