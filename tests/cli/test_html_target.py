"""``--html PATH`` never overwrites a run's own files, and another file only with --force."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sieval.cli import common
from sieval.cli.main import app

sys.path.insert(0, str(Path(__file__).parents[1] / "runner"))
from fakes import FakeTask, write_data

runner = CliRunner()


@pytest.fixture(autouse=True)
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "task_registry", lambda: {"fake_qa": FakeTask()})


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    write_data(tmp / "data", ["aa", "bbb", "cc"])
    config = tmp / "eval.yaml"
    config.write_text("models: [{name: ref, endpoint: embedded}]\ntasks: [{name: fake_qa}]\n")
    made = []
    for name in ("a", "b"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(common, "task_registry", lambda: {"fake_qa": FakeTask()})
            result = runner.invoke(
                app,
                ["eval", str(config), "--data-dir", str(tmp / "data"), "--out", str(tmp / name)],
            )
        assert result.exit_code == 0, result.output
        (run_dir,) = (tmp / name).iterdir()
        made.append(run_dir)
    return made[0], made[1]


def _snapshot(run_dir: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}


OWN = [
    "run.json",
    "report.json",
    "run.lock",
    "ref/fake_qa/records.jsonl",
    "ref/fake_qa/shared.jsonl",
]


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("own", [*OWN, "ref/new.html", "ref/fake_qa"])
def test_a_runs_own_files_are_never_overwritten(
    runs: tuple[Path, Path], own: str, force: bool
) -> None:
    run_a, run_b = runs
    before = _snapshot(run_a)
    extra = ["--force"] if force else []
    for args in (
        ["report", str(run_a), "--html", str(run_a / own), *extra],
        ["compare", str(run_b), str(run_a), "--html", str(run_a / own), *extra],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "inside the run directory" in result.output and "Traceback" not in result.output
        assert f"--html {run_a}" in result.output  # the fix
    assert _snapshot(run_a) == before
    assert not (run_a / "ref" / "new.html").exists()


def test_the_report_of_one_run_never_goes_into_another(runs: tuple[Path, Path]) -> None:
    run_a, run_b = runs
    result = runner.invoke(app, ["report", str(run_a), "--html", str(run_b), "--force"])
    assert result.exit_code == 2 and "of another run" in result.output
    assert not (run_b / "report.html").exists()


def test_a_symbolic_link_to_a_run_file_is_that_file(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run_a, _ = runs
    link = tmp_path / "page.html"
    link.symlink_to(run_a / "run.json")
    before = (run_a / "run.json").read_bytes()
    result = runner.invoke(app, ["report", str(run_a), "--html", str(link), "--force"])
    assert result.exit_code == 2 and "inside the run directory" in result.output
    assert (run_a / "run.json").read_bytes() == before


def test_the_runs_report_html_is_written_and_rewritten(runs: tuple[Path, Path]) -> None:
    run_a, _ = runs
    for _ in range(2):  # rewriting the report sieval wrote needs no --force
        result = runner.invoke(app, ["report", str(run_a), "--html", str(run_a)])
        assert result.exit_code == 0, result.output
        assert f"HTML report: {run_a / 'report.html'}" in result.output
    assert b'<meta name="generator" content="sieval' in (run_a / "report.html").read_bytes()
    (run_a / "report.html").unlink()


def test_another_existing_file_needs_force(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run_a, run_b = runs
    notes = tmp_path / "notes.html"
    notes.write_text("my notes")
    for args in (
        ["report", str(run_a), "--html", str(notes)],
        ["compare", str(run_b), str(run_a), "--html", str(notes)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and "pass --force to overwrite it" in result.output
        assert notes.read_text() == "my notes"
    result = runner.invoke(app, ["report", str(run_a), "--html", str(notes), "--force"])
    assert result.exit_code == 0, result.output
    assert notes.read_bytes().startswith(b"<!doctype html>")
    # now a report sieval wrote: written again without --force (the comparison added)
    result = runner.invoke(app, ["compare", str(run_b), str(run_a), "--html", str(notes)])
    assert result.exit_code == 0, result.output
    assert not list(tmp_path.glob(".*.tmp")) and not (tmp_path / "notes.tmp").exists()


def test_a_directory_gets_report_html_under_the_same_rule(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run_a, _ = runs
    out = tmp_path / "site"
    out.mkdir()
    (out / "report.html").write_text("somebody else's page")
    result = runner.invoke(app, ["report", str(run_a), "--html", str(out)])
    assert result.exit_code == 2 and f"{out / 'report.html'} exists" in result.output
    assert (out / "report.html").read_text() == "somebody else's page"
    (out / "report.html").unlink()
    (out / "report.html").mkdir()  # a directory where the file would go
    result = runner.invoke(app, ["report", str(run_a), "--html", str(out), "--force"])
    assert result.exit_code == 2 and "is a directory" in result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_refused_without_being_read(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Whether a file is a report was read from it: a named pipe once held the command for ever
    (a subprocess, so a hang fails the test instead of holding it)."""
    run_a, _ = runs
    pipe = tmp_path / "report.html"
    os.mkfifo(pipe)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    for force in ([], ["--force"]):
        done = subprocess.run(
            [sys.executable, "-m", "sieval", "report", str(run_a), "--html", str(pipe), *force],
            capture_output=True, text=True, timeout=60, env=env,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert "is not a regular file (a pipe, a socket or a device)" in done.stderr
