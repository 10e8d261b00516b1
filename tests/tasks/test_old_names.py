"""Runs made before the tasks became specs still resume: the same identity, the same scores.

``tests/fixtures/runs/v5-e1ffb0e/{base,chat}`` were made by sieval at e1ffb0e (the six task
classes) on the embedded server: ``base`` runs arc_easy_kshot_ppl, hellaswag_kshot_ppl,
mmlu_kshot_clp and gsm8k_kshot_base_gen through ``openai_completions``; ``chat`` runs
gsm8k_0shot_gen, mmlu_kshot_clp and mmlu_0shot_gen through ``openai_chat``. Each unit here loses
its last records (an interrupted run); the resume with today's code must be accepted (its inputs,
task protocols and data files hash to the run's identity) and must score the samples it runs
again exactly as e1ffb0e did (generation tasks add their ``censored`` flag beside the metrics).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.store.records import read_records
from sieval.store.rundir import read_run_json

RUNS = Path(__file__).parents[1] / "fixtures" / "runs" / "v5-e1ffb0e"


@pytest.mark.parametrize("name", ["base", "chat"])
def test_a_run_made_at_e1ffb0e_resumes_with_the_same_scores(
    name: str, tmp_path: Path, data_dir: Path
) -> None:
    run = tmp_path / name
    shutil.copytree(RUNS / name, run)
    (run / "report.json").unlink()
    dropped: list[tuple[str, str]] = []
    for path in sorted(run.glob("*/*/records.jsonl")):
        lines = path.read_text().splitlines(keepends=True)
        dropped += [(path.parent.name, json.loads(line)["sample_id"]) for line in lines[1:]]
        path.write_text(lines[0])
    assert len(dropped) >= 8
    result = CliRunner().invoke(
        app, ["eval", "--resume", str(run)], env={"SIEVAL_DATA_DIR": str(data_dir)}
    )
    assert result.exit_code == 0, result.output
    report = json.loads((run / "report.json").read_text())
    assert report["run"]["identity"] == read_run_json(RUNS / name)["identity"]
    for unit in report["results"]:
        assert unit["samples"]["scored"] == unit["samples"]["total"]
    for task, sample_id in dropped:
        (path,) = run.glob(f"*/{task}/records.jsonl")
        (original,) = (RUNS / name).glob(f"*/{task}/records.jsonl")
        after = read_records(path).records[sample_id]
        before = read_records(original).records[sample_id]
        # the same metrics, and the censored flag generation tasks record since (issue 33)
        added = {k: v for k, v in after.metrics.items() if k not in before.metrics}
        assert {k: after.metrics[k] for k in before.metrics} == before.metrics, (task, sample_id)
        assert set(added) <= {"censored"}, (task, sample_id, added)
        assert after.prediction == before.prediction and after.gold == before.gold
        assert after.channels == before.channels
