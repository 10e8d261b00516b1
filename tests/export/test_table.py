"""``sieval report RUN RUN --md|--csv|--latex``: two runs of the base suite (two models: the
embedded server, and a reference server whose fault changes every number it computes), side by
side, checked against each run's ``report.json``; and the shots in every single-run view."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval

N = 2


@pytest.fixture(scope="module")
async def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("paper")
    first = await arun_eval(
        parse_config(
            f"models: [{{name: base, endpoint: embedded}}]\ntasks: [{{name: base_suite, n: {N}}}]"
        ),
        options(out=out),
    )
    async with ReferenceServer(port=0, faults="fingerprint-changing") as server:
        second = await arun_eval(
            parse_config(
                f"models: [{{name: tuned, endpoint: '{server.url}', model: {server.model_name}}}]\n"
                f"tasks: [{{name: base_suite, n: {N}}}]"
            ),
            options(out=out),
        )
    return [first.run_dir, second.run_dir]


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return str(result.output)


def reports(runs: list[Path]) -> list[dict[str, Any]]:
    return [json.loads((run / "report.json").read_text()) for run in runs]


def expected_cell(result: dict[str, Any], shots: int) -> str:
    """The cell as the report's own figures make it (value [ci] n k-shot, 3 places)."""
    headline = result["headline"]
    spread = result["intervals"][headline]
    lo, hi = spread["ci"]
    value = result["metrics"][headline]
    return f"{value:.3f} [{lo:.3f}, {hi:.3f}] n={spread['n']} {shots}-shot"


def test_markdown_holds_both_runs_figures(runs: list[Path]) -> None:
    found = reports(runs)
    text = cli("report", *map(str, runs), "--md")
    lines = text.splitlines()
    assert lines[0] == "| task | base | tuned |"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:] if line.startswith("| ")}
    tasks = [r["task"] for r in found[0]["results"]]
    assert len(tasks) == 13 and set(rows) == set(tasks)
    differ = 0
    for base, tuned in zip(found[0]["results"], found[1]["results"], strict=True):
        cells = [c.strip() for c in rows[base["task"]].strip("|").split(" | ")][1:]
        # the base suite is 0-shot throughout (lm-eval's defaults)
        assert cells == [expected_cell(base, 0), expected_cell(tuned, 0)], base["task"]
        differ += cells[0] != cells[1]
    assert differ  # the fault changed the second model's answers
    notes = [line for line in lines if line.startswith("- ")]
    protocol = found[0]["run"]["inputs"]["tasks"]["arc_easy"]["protocol"]
    assert any(
        line.startswith("- arc_easy: acc_norm; ") and protocol[:40] in line for line in notes
    )
    assert any("95% intervals of" in line for line in notes)


def test_latex_holds_the_same_figures(runs: list[Path]) -> None:
    found = reports(runs)
    text = cli("report", *map(str, runs), "--latex")
    assert text.startswith("\\begin{table}") and "\\begin{tabular}{lrr}" in text
    assert "task & base & tuned \\\\" in text
    for base, tuned in zip(found[0]["results"], found[1]["results"], strict=True):
        name = base["task"].replace("_", "\\_")
        row = next(line for line in text.splitlines() if line.startswith(f"{name} & "))
        cells = row.removesuffix(" \\\\").split(" & ")[1:]
        for cell, result in zip(cells, (base, tuned), strict=True):
            headline = result["headline"]
            lo, hi = result["intervals"][headline]["ci"]
            n = result["intervals"][headline]["n"]
            assert cell == (
                f"{result['metrics'][headline]:.3f} {{\\scriptsize [{lo:.3f}, {hi:.3f}]}} "
                f"{{\\tiny (n={n}, 0-shot)}}"
            )
    assert "\\caption{" in text and "\\_" in text and "_" not in text.replace("\\_", "")


def test_csv_and_the_models_as_rows(runs: list[Path]) -> None:
    found = reports(runs)
    table = list(csv.reader(io.StringIO(cli("report", *map(str, runs), "--csv", "--by", "models"))))
    header, rows = table[0], [r for r in table[1:] if not r[0].startswith("#")]
    assert header[0] == "model" and [r[0] for r in rows] == ["base", "tuned"]
    for row, report in zip(rows, found, strict=True):
        for result in report["results"]:
            at = header.index(f"{result['task']} value")
            headline = result["headline"]
            assert float(row[at]) == result["metrics"][headline]
            assert [float(row[at + 1]), float(row[at + 2])] == result["intervals"][headline]["ci"]
            assert int(row[at + 3]) == result["intervals"][headline]["n"]
            assert row[at + 4] == "0" and row[at + 5] == headline


def test_a_task_in_two_runs_of_one_model_is_refused(runs: list[Path]) -> None:
    result = CliRunner().invoke(app, ["report", str(runs[0]), str(runs[0]), "--md"])
    assert result.exit_code == 2
    assert "ran 'arc_easy' in two of the runs given" in result.output


def test_every_single_run_view_shows_the_shots(tmp_path: Path) -> None:
    run = CliRunner().invoke(
        app,
        ["eval", "--endpoint", "embedded", "--tasks", "gsm8k_kshot_base_gen:n=1:num_fewshot=2",
         "--tasks", "arc_easy:n=1", "--out", str(tmp_path)],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    terminal = cli("report", str(run_dir))
    # at 250 columns a task takes one line: task, headline, shots, value, interval
    assert re.search(r"gsm8k_kshot_base_gen\s*│\s*exact_match\s*│\s*2\s*│", terminal)
    assert re.search(r"arc_easy\s*│\s*acc_norm\s*│\s*0\s*│", terminal)
    markdown = cli("report", str(run_dir), "--format", "md").splitlines()
    assert markdown[0] == (
        "| model | task | metric | value | 95% CI | n | shots | failed | missing | marks |"
    )
    shots = {line.split(" | ")[1]: line.split(" | ")[6] for line in markdown[2:]}
    assert shots == {"gsm8k_kshot_base_gen": "2", "arc_easy": "0"}
    rows = list(csv.DictReader(io.StringIO(cli("report", str(run_dir), "--format", "csv"))))
    assert {r["task"]: r["shots"] for r in rows} == {"gsm8k_kshot_base_gen": "2", "arc_easy": "0"}
    cli("report", str(run_dir), "--html", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert 'data-task="gsm8k_kshot_base_gen" data-shots="2"' in page
    assert 'data-task="arc_easy" data-shots="0"' in page


def test_a_runs_judge_is_named_in_the_notes(runs: list[Path]) -> None:
    """A run whose tasks call a judge (``roles: {judge: ...}``) keeps it in its inputs; the
    table names it under the figures, and a run without one adds nothing."""
    from sieval.export.table import paper_table
    from sieval.results.document import Report

    base, tuned = reports(runs)
    judged = json.loads(json.dumps(tuned))
    judged["run"]["inputs"]["roles"] = {
        "judge": {"endpoint": "http://judge.example:8000", "model": "qwen-judge"}
    }
    first, second, with_judge = (msgspec.convert(r, Report) for r in (base, tuned, judged))
    plain = paper_table([first, second]).notes
    notes = paper_table([first, with_judge]).notes
    run = judged["run"]["identity"].removeprefix("sha256:")[:8]
    assert notes == [
        *plain,
        f"run {run}: roles.judge is qwen-judge at http://judge.example:8000",
    ]
    assert not [n for n in plain if "roles." in n]
