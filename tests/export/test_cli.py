"""``sieval export`` and ``sieval eval --export``: the formats, the errors before anything is
written, the default destination."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_an_unknown_format_is_refused_naming_the_formats(run_dir: Path, tmp_path: Path) -> None:
    result = cli("export", str(run_dir), str(tmp_path / "out"), "--to", "lm_eval")
    assert result.exit_code == 2
    assert "'lm_eval': choose one of lm-eval, inspect, eee, wandb, mlflow" in result.output
    assert not (tmp_path / "out").exists()


def test_a_missing_library_is_named_before_anything_is_written(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a)
    )
    result = cli("export", str(run_dir), str(tmp_path / "out"), "--to", "eee", "--to", "wandb")
    assert result.exit_code == 2
    assert "pip install 'wandb' (or pip install 'sieval[export]')" in result.output
    assert not (tmp_path / "out").exists()


def test_the_default_destination_is_in_the_run(run_dir: Path) -> None:
    result = cli("export", str(run_dir), "--to", "lm-eval")
    assert result.exit_code == 0, result.output
    assert f"lm-eval: 6 file(s) in {run_dir / 'exports' / 'lm-eval'}" in result.output
    folder = run_dir / "exports" / "lm-eval" / "ref"
    assert sorted(p.name.split("_20")[0] for p in folder.iterdir()) == [
        "results", "samples_arc_easy", "samples_gsm8k_kshot_base_gen",
    ]  # fmt: skip


def test_an_unfinished_run_is_not_exported(tmp_path: Path) -> None:
    result = cli("export", str(tmp_path), "--to", "eee")
    assert result.exit_code == 2 and "run" in result.output


def test_eval_export_writes_when_the_run_ends(tmp_path: Path) -> None:
    result = cli(
        "eval", "--endpoint", "embedded", "--tasks", "arc_easy:n=2", "--out", str(tmp_path),
        "--export", "lm-eval", "--export", "eee",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (results,) = list((run / "exports" / "lm-eval" / "sieval-reference").glob("results_*.json"))
    report = json.loads((run / "report.json").read_text())
    acc = report["results"][0]["metrics"]["acc"]
    assert json.loads(results.read_text())["results"]["arc_easy"]["acc,none"] == acc
    assert list((run / "exports" / "eee" / "data" / "sieval").glob("*/*/*_samples.jsonl"))


def test_eval_export_refuses_a_typo_before_any_request(tmp_path: Path) -> None:
    result = cli(
        "eval", "--endpoint", "embedded", "--tasks", "arc_easy:n=2", "--out", str(tmp_path),
        "--export", "csv",
    )  # fmt: skip
    assert result.exit_code == 2 and "'csv': choose one of" in result.output
    assert not any(tmp_path.iterdir())
