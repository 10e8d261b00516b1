"""``report.json`` as a typed ``Report`` (``results/document.py``) writes the bytes the dict did.

``tests/fixtures/runs/report-56c6b11/report.json`` was written by sieval at 56c6b11 (t35-solve's
task contract on main, whose report is a ``dict[str, Any]``; ``report-767bc58`` by main before
it, with no forecast ``role``, ``bound``, ``answered_by``; ``report-24bb387`` before marks), by
``write_report_fixture`` below (``cd CHECKOUT && PYTHONPATH=. python
.../tests/runner/test_report_document.py DIR``: that checkout's sieval, this file's run), with
main's censored answers (``censored``) and marks (``marks``): two models
on the reference server, one of them through a faulty one (every reply a 500: failures with
their examples), three tasks (choices, a clustered MMLU, a generation), a price, a forecast and
a budget. The same run by this sieval writes the same keys in the same order, with the same
values wherever a run does not differ from another (its directory, its times, the faulty
server's port); and each old file, read and written again, is byte for byte itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sieval.cost.forecast import CostOptions
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import RunOptions, arun_eval

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
RUNS = Path(__file__).parents[1] / "fixtures" / "runs"
OLD = RUNS / "report-56c6b11"
OLDER = [RUNS / "report-767bc58", RUNS / "report-24bb387"]

CONFIG = """
models:
  - {{name: ref, endpoint: embedded, price: {{input: 0.5, output: 2.0, currency: EUR}}}}
  - {{name: broken, endpoint: "{url}", model: {model}, retries: 0, timeout_s: 5,
     price: {{input: 0.5, output: 2.0, currency: EUR}}}}
tasks:
  - {{name: arc_easy_kshot_ppl, n: 3, num_fewshot: 1}}
  - {{name: mmlu_kshot_clp, n: 6, num_fewshot: 0}}
  - {{name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}}
"""


async def write_report_fixture(out: Path) -> Path:
    """Run the fixture's run in ``out``; its run directory (``out/report``)."""
    async with ReferenceServer(port=0, faults="500") as broken:
        config = parse_config(CONFIG.format(url=broken.url, model=broken.model_name))
        options = RunOptions(
            out=out,
            run_name="report",
            data_dir=DATA,
            cost=CostOptions(forecast=True, budget_tokens=10_000_000, budget_cost=1000.0),
        )
        result = await arun_eval(config, options)
    return result.run_dir


def keys(data: Any, at: str = "") -> list[str]:
    """Every key path of a JSON document, in order, with each value's JSON type."""
    if isinstance(data, dict):
        return [f"{at}.{k}" for k in data] + [
            p for k, v in data.items() for p in keys(v, f"{at}.{k}")
        ]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in keys(v, f"{at}[{i}]")]
    kind = "number" if isinstance(data, int | float) and not isinstance(data, bool) else type(data)
    return [f"{at}: {kind}"]


def same_run(report: dict[str, Any]) -> dict[str, Any]:
    """What two runs of the fixture's config share: not their directory, times, the faulty
    server's port (in its URL and the messages that name it), nor the identity that hashes it."""
    out = json.loads(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", json.dumps(report)))
    del out["run"]["dir"], out["run"]["identity"], out["timings"]
    return out


@pytest.mark.parametrize("old", [OLD, *OLDER], ids=lambda p: p.name)
def test_an_old_report_is_read_and_written_byte_for_byte(tmp_path: Path, old: Path) -> None:
    from sieval.results.report import load_report, write_report

    report = load_report(old)
    assert report.results[2].spread is not None and report.results[1].intervals["acc"].clusters
    assert report.results[3].failure_examples[0].status == 500
    write_report(tmp_path, report)
    assert (tmp_path / "report.json").read_bytes() == (old / "report.json").read_bytes()


async def test_the_typed_report_writes_what_the_dict_did(tmp_path: Path) -> None:
    run_dir = await write_report_fixture(tmp_path)
    old = json.loads((OLD / "report.json").read_bytes())
    new = json.loads((run_dir / "report.json").read_bytes())
    assert keys(new) == keys(old)
    assert same_run(new) == same_run(old)
    assert msgspec.json.decode((run_dir / "report.json").read_bytes())["results"][0]["cost"]


if __name__ == "__main__":
    print(asyncio.run(write_report_fixture(Path(sys.argv[1]))))
