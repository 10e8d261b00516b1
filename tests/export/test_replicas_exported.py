"""A run on replicas exported: each exported sample names the replicas that answered it, as the
run's records do (Every Eval Ever's instance metadata, the Inspect sample's metadata)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from runs import options

from sieval.export import export_run
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval

from .conftest import needs, records


async def test_each_exported_sample_names_its_replicas(tmp_path: Path) -> None:
    async with contextlib.AsyncExitStack() as stack:
        urls = [(await stack.enter_async_context(ReferenceServer(port=0))).url for _ in range(2)]
        listed = ", ".join(repr(u) for u in urls)
        result = await arun_eval(
            parse_config(
                f"models: [{{name: m, endpoint: [{listed}], model: sieval-reference}}]\n"
                "tasks: [{name: arc_easy, n: 4}]"
            ),
            options(out=tmp_path / "runs"),
        )
    answered = {
        r["sample_id"]: sorted({q["replica"] for q in r["requests"].values()})
        for r in records(result.run_dir, "m", "arc_easy")
    }
    assert set().union(*map(set, answered.values())) == set(urls)
    (aggregate,) = [
        p for p in export_run(result.run_dir, "eee", tmp_path / "eee") if p.suffix == ".json"
    ]
    rows = aggregate.with_name(f"{aggregate.stem}_samples.jsonl").read_text().splitlines()
    for row in map(json.loads, rows):
        named = row["metadata"]["replicas"].split(", ")
        assert sorted(named) == answered[row["sample_id"]]
    needs("inspect_ai", "inspect-ai")
    from inspect_ai.log import read_eval_log

    (log,) = export_run(result.run_dir, "inspect", tmp_path / "inspect")
    samples = read_eval_log(str(log)).samples or []
    assert len(samples) == 4
    for sample in samples:
        assert sorted(sample.metadata["replicas"]) == answered[str(sample.id)]
