"""``sieval eval``, ``sieval tasks`` and ``sieval report`` through typer's CliRunner."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sieval.cli import common as eval_cli
from sieval.cli.main import app
from sieval.tasks.base import Requirement

sys.path.insert(0, str(Path(__file__).parents[1] / "runner"))
from fakes import FakeTask, write_data

runner = CliRunner()


@pytest.fixture(autouse=True)
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    needy = FakeTask("needy", requirements=[Requirement("token_ids", "compares ids")])
    monkeypatch.setattr(eval_cli, "task_registry", lambda: {"fake_qa": FakeTask(), "needy": needy})


def write_config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "eval.yaml"
    path.write_text(body)
    return path


CONFIG = "models: [{name: ref, endpoint: embedded}]\ntasks: [{name: fake_qa}]\n"


def test_eval_runs_and_report_renders(tmp_path: Path) -> None:
    write_data(tmp_path / "data", ["aa", "bbb", "cc"])
    config = write_config(tmp_path, CONFIG)
    out = tmp_path / "results"
    args = ["eval", str(config), "--data-dir", str(tmp_path / "data"), "--out", str(out)]
    result = runner.invoke(app, [*args, "--limit", "2", "--concurrency", "4", "--wire-log"])
    assert result.exit_code == 0, result.output
    assert "fake_qa" in result.output and "run directory:" in result.output
    (run_dir,) = out.iterdir()
    assert (run_dir / "ref" / "wire.jsonl").is_file()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["results"][0]["samples"]["total"] == 2
    shown = runner.invoke(app, ["report", str(run_dir)])
    assert shown.exit_code == 0, shown.output
    assert "provenance" in shown.output and "sieval-reference" in shown.output
    assert "acc" in shown.output and "scored samples only" in " ".join(shown.output.split())
    resumed = runner.invoke(app, [*args, "--limit", "2", "--resume", str(run_dir)])
    assert resumed.exit_code == 0, resumed.output
    changed = runner.invoke(app, [*args, "--limit", "3", "--resume", str(run_dir)])
    assert changed.exit_code == 2 and "tasks.fake_qa.config.n: 2 -> 3" in changed.output


def test_a_limit_a_resume_cannot_apply_is_said(tmp_path: Path) -> None:
    """A run's samples are fixed when it starts: ``--resume RUN --limit 5`` on a run of 2 once
    finished the 2 and said nothing of the 5."""
    write_data(tmp_path / "data", ["aa", "bbb", "cc", "dd", "ee"])
    config = write_config(tmp_path, CONFIG)
    out = tmp_path / "results"
    data = ["--data-dir", str(tmp_path / "data")]
    first = runner.invoke(app, ["eval", str(config), *data, "--out", str(out), "--limit", "2"])
    assert first.exit_code == 0, first.output
    (run_dir,) = out.iterdir()
    resumed = runner.invoke(app, ["eval", "--resume", str(run_dir), *data, "--limit", "5"])
    assert resumed.exit_code == 0, resumed.output
    said = (
        "--limit 5 does not add samples to a resumed run: it completes the samples it was planned "
        "with (fake_qa 2); for more, start a new run with --limit 5"
    )
    assert said in " ".join(resumed.output.split()), resumed.output
    report = json.loads((run_dir / "report.json").read_text())
    assert report["results"][0]["samples"]["total"] == 2
    same = runner.invoke(app, ["eval", "--resume", str(run_dir), *data, "--limit", "2"])
    assert same.exit_code == 0 and "does not add samples" not in same.output, same.output


def test_failed_samples_exit_1(tmp_path: Path) -> None:
    write_data(tmp_path / "data", ["aa", "badd"])
    config = write_config(tmp_path, CONFIG)
    result = runner.invoke(
        app,
        ["eval", str(config), "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "r")],
    )
    assert result.exit_code == 1, result.output
    assert "1 sample(s) failed" in result.output and "1 ContractViolation" in result.output
    assert "fake_qa: 1 ContractViolation, e.g. sample s1: the reply for badd" in result.output


@pytest.mark.parametrize(
    ("body", "extra", "needle"),
    [
        (
            "models: [{endpoint: embedded, api_key: sk-1}]\ntasks: [{name: fake_qa}]",
            [],
            "api_key_env",
        ),
        ("models: [{endpoit: embedded}]\ntasks: [{name: fake_qa}]", [], "Did you mean 'endpoint'"),
        ("models:\n  - {a: [1\ntasks: []", [], "eval.yaml:3:"),
        ("models: [{endpoint: embedded}]\ntasks: [{name: fake_q}]", [], "Did you mean 'fake_qa'"),
        ("models: [{endpoint: embedded}]\ntasks: [{name: needy}]", [], "needy needs token_ids"),
        (
            "models: [{endpoint: embedded}]\ntasks: [{name: fake_qa}]",
            ["--task", "x"],
            "unknown task",
        ),
    ],
)
def test_bad_input_exits_2_without_a_results_dir(
    tmp_path: Path, body: str, extra: list[str], needle: str
) -> None:
    write_data(tmp_path / "data", ["aa"])
    config = write_config(tmp_path, body)
    out = tmp_path / "results"
    result = runner.invoke(
        app, ["eval", str(config), "--data-dir", str(tmp_path / "data"), "--out", str(out), *extra]
    )
    assert result.exit_code == 2, result.output
    assert needle in " ".join(result.output.split())
    assert not out.exists()


def test_missing_dataset_exits_2(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG)
    result = runner.invoke(app, ["eval", str(config), "--data-dir", str(tmp_path / "none")])
    assert result.exit_code == 2 and "is missing" in " ".join(result.output.split())


def test_tasks_lists_requirements_and_defaults() -> None:
    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 0, result.output
    assert "fake_qa" in result.output
    one = runner.invoke(app, ["tasks", "needy"])
    assert one.exit_code == 0 and "token_ids: compares ids" in one.output


def test_tasks_with_the_real_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 0, result.output
    assert "mmlu_kshot_clp" in result.output and "5 (dev)" in result.output


def test_tasks_without_registry_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    from sieval.errors import ConfigError

    def missing() -> None:
        raise ConfigError("no task registry is installed")

    monkeypatch.setattr(eval_cli, "task_registry", missing)
    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 2 and "no task registry" in result.output


def test_report_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "no report.json" in " ".join(result.output.split())
    (tmp_path / "report.json").write_text("{oops")
    assert runner.invoke(app, ["report", str(tmp_path)]).exit_code == 2
    (tmp_path / "report.json").write_text("[]")
    bad = runner.invoke(app, ["report", str(tmp_path)])
    assert bad.exit_code == 2 and "not a sieval report" in bad.output
