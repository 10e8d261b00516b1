"""The sandbox battery again as an ordinary user (uid 65534, ``setpriv``): ``auto`` then picks
``bwrap-userns`` (bubblewrap in a user namespace of its own), and every escape test of
``test_sandbox.py`` — the refused system calls, the keyring, nested namespaces, the fork and
memory bombs (bounded without a control group by the process cap times the address space), the
network, the host's files and environment — must hold in that mode too.

Runs when the tests run as root (CI) and an interpreter of this Python version that an ordinary
user may run exists (this venv's base interpreter is often under ``/root``); an ordinary user's
own run of ``test_sandbox.py`` is already this run.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
NOBODY = 65534


def _as_nobody(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``command`` as uid 65534. Through ``env``: setpriv's own exec still resolves the path with
    root's capabilities (it drops them at that exec), so a path only root may reach would run."""
    setpriv, env = shutil.which("setpriv"), shutil.which("env")
    assert setpriv is not None and env is not None
    drop = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", env]
    return subprocess.run([*drop, *command], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]


def _interpreter() -> str | None:
    """An interpreter of this Python version that uid 65534 can run."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, sys._base_executable, f"/usr/bin/python{version}"):
        if not candidate or not Path(candidate).exists():
            continue
        found = _as_nobody(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout=30
        )
        if found.returncode == 0 and found.stdout.strip() == version:
            return candidate
    return None


def test_the_battery_holds_for_an_ordinary_user() -> None:
    if os.geteuid() != 0:
        pytest.skip("already an ordinary user: test_sandbox.py ran in the bwrap-userns mode")
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (scripts/sandbox.sh)")
    python = _interpreter()
    if python is None:
        pytest.skip("no interpreter of this Python version that uid 65534 may run")
    paths = [str(ROOT), *site.getsitepackages()]
    boot = (
        "import os, site, sys\n"
        f"for path in {paths!r}[1:]:\n"
        "    site.addsitedir(path)\n"
        f"sys.path.insert(0, {paths[0]!r})\n"
        "import pytest\n"
        f"os.chdir({str(ROOT)!r})\n"
        "sys.exit(pytest.main(sys.argv[1:]))\n"
    )
    environment = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "SIEVAL_SKIP_LIVE": "1",
        "SIEVAL_DATA_DIR": os.environ.get("SIEVAL_DATA_DIR", str(ROOT.parent / "shared" / "data")),
    }
    done = _as_nobody(
        [python, "-c", boot, "-q", "--tb=native", "-p", "no:cacheprovider", "-m", "not sweep",
         "tests/scoring/test_sandbox.py"],
        env=environment, timeout=1200,
    )  # fmt: skip
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) >= 30, summary
