"""A concurrency above the open-file limit runs at the limit, says so once, and storms nothing."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

# a thousand connections and more, twice: never beside each other on two pytest-xdist workers
pytestmark = pytest.mark.xdist_group("descriptors")
DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


def _cap_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))  # soft = hard: it cannot be raised


def _eval(config: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``sieval eval config`` in a child whose open-file limit is 1024 and cannot be raised."""
    cli = "import sys; from sieval.cli.main import main; sys.argv[0] = 'sieval'; main()"
    return subprocess.run(
        [
            sys.executable,
            "-c",
            cli,
            "eval",
            str(config),
            "--data-dir",
            str(DATA),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_cap_open_files,
    )


def test_concurrency_1000_under_ulimit_1024_on_the_embedded_server(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "concurrency: 2000\nmodels: [{endpoint: embedded, name: ref, concurrency_limit: 1000}]\n"
        "tasks: [{name: arc_easy_kshot_ppl, n: 120, num_fewshot: 0}]\n"
    )
    done = _eval(config, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Too many open files" not in done.stderr + done.stdout
    assert done.stderr.count("concurrency_limit 1000 is more connections") == 1
    assert "480 connections" in done.stderr
    assert len(done.stderr) < 20_000  # no traceback storm


def test_three_servers_at_concurrency_1000_share_one_descriptor_budget(tmp_path: Path) -> None:
    # three embedded servers in one process: each model's budget alone fits the limit, their
    # sum does not; the process-wide budget is split between them
    config = tmp_path / "c.yaml"
    config.write_text(
        "concurrency: 3000\nmodels:\n"
        + "".join(
            f"  - {{endpoint: embedded, name: ref{i}, concurrency_limit: 1000}}\n" for i in range(3)
        )
        + "tasks: [{name: arc_easy_kshot_ppl, n: 200, num_fewshot: 0}]\n"
    )
    done = _eval(config, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Too many open files" not in done.stderr + done.stdout
    assert "shared by 3 servers" in done.stderr, done.stderr[-2000:]
    assert len(done.stderr) < 40_000  # no traceback storm
