"""Task files through the command line: listed with ``--include-path``, run by name or by file
beside a stock task, resumed from another folder, and refused on resume once changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples" / "private"
runner = CliRunner()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of examples/private (the test changes a task file)."""
    copy = tmp_path / "mine"
    shutil.copytree(EXAMPLES, copy)
    return copy


def test_tasks_lists_task_files_and_shows_one_resolved(folder: Path) -> None:
    listed = runner.invoke(app, ["tasks", "--include-path", str(folder)])
    assert listed.exit_code == 0, listed.output
    joined = "".join(listed.output.split())  # a long path is folded at 80 columns
    assert "quiz_mc" in listed.output and f"from{folder / 'quiz_mc.yaml'}" in joined
    shown = runner.invoke(app, ["tasks", str(folder / "quiz_qa.yaml"), "--json"])
    assert shown.exit_code == 0, shown.output
    facts = json.loads(shown.output)
    assert facts["name"] == "quiz_qa" and facts["family"] == "generation, filtered and scored"
    assert facts["definition"]["generation_kwargs"] == {"until": ["\n"], "max_gen_toks": 16}


def test_an_unknown_key_is_an_error_with_its_line_and_exit_2(folder: Path, tmp_path: Path) -> None:
    bad = folder / "quiz_mc.yaml"
    bad.write_text(bad.read_text() + "doc_to_txt: oops\n")
    ran = runner.invoke(
        app,
        ["eval", "--endpoint", "embedded", "--task", str(bad), "--out", str(tmp_path / "out")],
    )
    assert ran.exit_code == 2
    assert f"{bad}:11: doc_to_txt: unknown key" in " ".join(ran.output.split())
    assert not (tmp_path / "out").exists()


def test_a_run_resumes_from_any_folder_and_refuses_a_changed_file(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
    if not (data / "arc_easy").is_dir():
        pytest.skip("benchmark data not found; set SIEVAL_DATA_DIR")
    monkeypatch.setenv("SIEVAL_DATA_DIR", str(data))
    out = tmp_path / "out"
    ran = runner.invoke(
        app,
        ["eval", "--endpoint", "embedded", "--include-path", str(folder), "--task",
         "quiz_mc,arc_easy", "--task", str(folder / "quiz_qa.yaml"), "--limit", "3",
         "--serving-checks", "off", "--out", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    (run,) = out.iterdir()
    stored = json.loads((run / "run.json").read_text())
    assert stored["config"]["include_path"] == [str(folder.resolve())]
    assert set(stored["inputs"]["tasks"]["quiz_qa"]["source"]["files"]) == {
        str(folder.resolve() / "quiz_qa.yaml")
    }
    monkeypatch.chdir(tmp_path)  # another folder: the run finds its task files itself
    again = runner.invoke(app, ["eval", "--resume", str(run)])
    assert again.exit_code == 0, again.output
    assert "is complete" in again.output
    task = folder / "quiz_qa.yaml"
    task.write_text(task.read_text().replace("max_gen_toks: 16", "max_gen_toks: 17"))
    refused = runner.invoke(app, ["eval", "--resume", str(run)])
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert "tasks.quiz_qa.source.definition.generation_kwargs.max_gen_toks: 16 -> 17" in said


def test_a_python_task_file_on_the_solve_contract_runs_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/tasks.md's two-turn task, as a file in the user's folder: found by the include
    path, each turn recorded, and the run resumed from another folder."""
    from sieval.runner import read_records
    from tests.tasks.test_conversation_example import examples

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "follow_up_file.py").write_text(examples()[0])
    out = tmp_path / "out"
    ran = runner.invoke(
        app,
        ["eval", "--endpoint", "embedded", "--kind", "chat", "--include-path", str(mine),
         "--task", "follow_up", "--serving-checks", "off", "--out", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    (run,) = out.iterdir()
    (model,) = [d for d in run.iterdir() if (d / "follow_up" / "records.jsonl").is_file()]
    records = read_records(model / "follow_up" / "records.jsonl").records
    assert sorted(records) == ["france", "seven"]
    assert all(list(r.requests) == ["turn1", "turn2"] for r in records.values())
    stored = json.loads((run / "run.json").read_text())
    source = stored["inputs"]["tasks"]["follow_up"]["source"]
    assert list(source["files"]) == [str(mine.resolve() / "follow_up_file.py")]
    monkeypatch.chdir(tmp_path)
    again = runner.invoke(app, ["eval", "--resume", str(run)])
    assert again.exit_code == 0, again.output
    assert "is complete" in again.output
