"""One finished run every export test reads: two models (the embedded server, and a second
reference server whose first requests fail, so some samples are failed, never scored) on a
choice task and a generation task with two filters."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options

from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval
from sieval.store.records import read_records, records_path

FAILING_REQUESTS = 6
"""The second server answers its first this-many requests with HTTP 500 (no retry)."""


def needs(module: str, package: str) -> None:
    """Skip, saying why, when an export's library (the ``export`` extra) is not installed."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(
            f"{package} is not installed: the export extra is optional "
            f"(pip install -e '.[export]', as scripts/test does)"
        )


@pytest.fixture(scope="session")
async def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    async with ReferenceServer(port=0, faults=f"500; times={FAILING_REQUESTS}") as server:
        config = parse_config(
            f"""
models:
  - {{name: ref, endpoint: embedded}}
  - {{name: flaky, endpoint: "{server.url}", model: {server.model_name}, retries: 0,
     concurrency_limit: 2}}
tasks:
  - {{name: arc_easy, n: 6}}
  - {{name: gsm8k_kshot_base_gen, n: 3, num_fewshot: 1}}
"""
        )
        result = await arun_eval(
            config, options(out=tmp_path_factory.mktemp("runs"), max_failures=None)
        )
    return result.run_dir


@pytest.fixture(scope="session")
def report(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return data


def result_of(report: dict[str, Any], model: str, task: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        r for r in report["results"] if r["model"] == model and r["task"] == task
    )
    return found


def records(run_dir: Path, model: str, task: str) -> list[dict[str, Any]]:
    """The unit's records as sieval's reader gives them back (columns expanded)."""
    found = read_records(records_path(run_dir, model, task)).records.values()
    return [msgspec.to_builtins(r) for r in found]
