"""The W&B (offline) and MLflow (local store) exports, read back through each library's own
reader: ``wandb leet inspect`` over the offline run's transaction log, ``MlflowClient`` over the
store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sieval.cli.export import export_formats

from .conftest import needs


def figures(report: dict[str, Any]) -> dict[str, float]:
    """Each metric's value, se and interval bounds, keyed ``model/task/metric[/what]``."""
    out: dict[str, float] = {}
    for result in report["results"]:
        for metric, value in result["metrics"].items():
            if metric == "n":
                continue
            key = f"{result['model']}/{result['task']}/{metric}"
            spread = result["intervals"].get(metric)
            out[key] = value
            if spread is None:  # a figure the report gives no interval (censored_rate)
                continue
            out[f"{key}/se"] = spread["se"]
            out[f"{key}/ci_low"], out[f"{key}/ci_high"] = spread["ci"]
    return out


def test_wandb_offline_run_reads_back(
    run_dir: Path, report: dict[str, Any], tmp_path: Path
) -> None:
    needs("wandb", "wandb")
    lines = export_formats(run_dir, ["wandb"], tmp_path)
    assert lines[0] == f"wandb: 1 file(s) in {tmp_path}"
    (found,) = list((tmp_path / "wandb").glob("offline-run-*"))
    wandb = [sys.executable, "-m", "wandb", "leet", "inspect"]
    said = subprocess.run(
        [*wandb, "--summary", "--json", str(found)], capture_output=True, text=True, check=True
    )
    state = json.loads(said.stdout)
    summary = state.get("summary", state)
    flat = {k: v for k, v in _flatten(summary).items()}
    for key, value in figures(report).items():
        assert flat[key] == pytest.approx(value), key
    assert flat["ref/arc_easy/shots"] == 0 and flat["ref/gsm8k_kshot_base_gen/shots"] == 1
    records = subprocess.run(
        [*wandb, "--json", str(found)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    kinds = [json.loads(line) for line in records if line.strip()]
    artifacts = [r for r in kinds if "artifact" in json.dumps(r)[:200].lower()]
    assert any("sieval-report" in json.dumps(r) for r in artifacts)
    (table,) = list(found.glob("files/media/table/samples_*.table.json"))
    data = json.loads(table.read_text())
    assert len(data["data"]) == sum(r["samples"]["total"] for r in report["results"])
    assert data["columns"][:4] == ["model", "task", "sample_id", "status"]


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict) and "_type" not in tree:
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}{key}/" if isinstance(value, dict) else ""))
            if not isinstance(value, dict):
                out[f"{prefix}{key}"] = value
        return out
    return {}


def test_mlflow_local_store_reads_back(
    run_dir: Path, report: dict[str, Any], tmp_path: Path
) -> None:
    needs("mlflow", "mlflow-skinny")
    from mlflow.tracking import MlflowClient

    export_formats(run_dir, ["mlflow"], tmp_path)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("sieval")
    (run,) = client.search_runs([experiment.experiment_id])
    assert (
        run.info.status == "FINISHED" and run.data.tags["sieval.run"] == report["run"]["identity"]
    )
    for key, value in figures(report).items():
        assert run.data.metrics[key.replace("/", ".")] == pytest.approx(value), key
    assert run.data.params["arc_easy.shots"] == "0"
    assert run.data.params["gsm8k_kshot_base_gen.shots"] == "1"
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"report.html", "report.json", "run.json", "samples.json"} <= artifacts
    local = Path(client.download_artifacts(run.info.run_id, "samples.json", str(tmp_path)))
    table = json.loads(local.read_text())
    assert len(table["data"]) == sum(r["samples"]["total"] for r in report["results"])
    html = Path(client.download_artifacts(run.info.run_id, "report.html", str(tmp_path)))
    assert report["run"]["identity"][:19] in html.read_text()
