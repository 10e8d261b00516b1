"""``sieval.evaluate``: a task file and a ``Spec`` object run on the embedded server; the
results are the typed report's figures, and every problem is a ``ConfigError`` before a run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import msgspec
import pytest

import sieval
from sieval.errors import ConfigError
from sieval.results.document import Report
from sieval.results.report import load_report

EXAMPLES = Path(__file__).parents[1] / "examples" / "private"


def test_a_task_file_runs_and_its_figures_are_the_reports(tmp_path: Path) -> None:
    results = sieval.evaluate(
        [EXAMPLES / "quiz_qa.yaml"], limit=5, out=tmp_path, serving_checks="off"
    )
    assert isinstance(results.report, Report)
    assert results.report == load_report(results.run_dir)  # what report.json says, typed
    assert results.identity == results.report.run.identity and len(results.identity) > 8
    (unit,) = results.report.results
    result = results["quiz_qa"]
    assert (result.task, result.headline, result.scored) == ("quiz_qa", "exact_match", 5)
    assert result.value == unit.metrics["exact_match"] == results.headline("quiz_qa")
    assert result.metrics == msgspec.to_builtins(unit.metrics)
    spread = unit.spread
    assert spread is not None and result.interval == (spread.ci[0], spread.ci[1])
    assert results.failed == 0
    with pytest.raises(KeyError, match="no task 'arc_easy' in this run: quiz_qa"):
        results["arc_easy"]
    again = sieval.evaluate([], resume=results.run_dir)  # its task file found from run.json
    assert again.run_dir == results.run_dir and again.identity == results.identity
    assert again.report.run.resumed and again["quiz_qa"].value == result.value


def test_a_spec_object_runs_under_its_own_name(tmp_path: Path) -> None:
    from sieval.tasks.catalogue import registry

    spec = registry([EXAMPLES])["quiz_mc"].spec  # type: ignore[attr-defined]
    results = sieval.evaluate(
        dataclasses.replace(spec, name="my_quiz"), limit=4, out=tmp_path, serving_checks="off"
    )
    assert [r.task for r in results.results] == ["my_quiz"]
    assert results["my_quiz"].scored == 4 and results["my_quiz"].headline == "acc"
    assert results.report.results[0].protocol == results["my_quiz"].protocol != ""


@pytest.mark.parametrize(
    ("tasks", "says"),
    [
        ("no_such_task", r"unknown task 'no_such_task'"),
        ("missing.yaml", r"task file 'missing.yaml' does not exist"),
        ([3], r"evaluate\(tasks=...\) takes names, task files, Specs or tasks; got int"),
    ],
)
def test_a_bad_task_is_refused_before_a_run(tmp_path: Path, tasks: object, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        sieval.evaluate(tasks, out=tmp_path)  # type: ignore[arg-type]
    assert not any(tmp_path.iterdir())  # no run directory was made


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("SIEVAL_INCLUDE_PATH", raising=False)  # only the tasks named here
