"""The screens of issue 41 at 80 and 160 columns: ``sieval tasks`` keeps its header on one line
and shows BBH's 3 CoT shots as shots; the run summary gives a task two lines at 80 columns and
one at 160; ``compare`` never cuts a metric's name nor wraps the headline's star."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from runs import options

from sieval.analysis.compare import compare_runs
from sieval.cli.compare import render_comparison
from sieval.cli.report import render_summary
from sieval.runner import arun_eval, parse_config

from .test_screens import cli, report_of, shown, typed

CONFIG = """
models: [{name: ref, endpoint: embedded}]
tasks:
  - {name: arc_easy, n: 6}
  - {name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}
"""


@pytest.fixture(scope="module")
async def run_dir(tmp_path_factory: Any) -> Path:
    out = tmp_path_factory.mktemp("fit")
    return (await arun_eval(parse_config(CONFIG), options(out=out, run_name="r"))).run_dir


@pytest.mark.parametrize("width", [80, 160])
def test_tasks_header_on_one_line_and_bbh_shots(width: int) -> None:
    out = cli("tasks", width=width)
    lines = out.splitlines()
    assert lines[0].split() == ["task", "family", "data", "scored", "shots"]
    assert max(len(line) for line in lines) <= 80
    (bbh,) = [line for line in lines if line.split()[:1] == ["bbh"]]
    assert bbh.split()[-3:] == ["3", "in", "prompt"]
    assert "3, written into the prompt (fixed)" in cli("tasks", "bbh", width=width)


def test_compare_notes_wrap_under_their_indent_at_80(run_dir: Path) -> None:
    """A note of ``compare`` ("no minimum detectable difference: ...") once wrapped to the
    screen's first column, where it read as a new heading."""
    lines = cli("compare", str(run_dir), str(run_dir), width=80).splitlines()
    at = next(i for i, line in enumerate(lines) if "no minimum detectable difference" in line)
    assert lines[at].startswith("  ") and len(lines[at]) > 70
    assert lines[at + 1].startswith("  ") and "discordant" in " ".join(lines[at : at + 3])


def test_every_stock_task_lists_a_family_and_its_data() -> None:
    """A conversation, tool or long-context task is not a spec: it says what it is all the same
    (a reader saw ``-  -`` for BFCL, MT-Bench and the RULER tasks)."""
    rows = {
        line.split()[0]: line[21:].split()
        for line in cli("tasks", width=160).splitlines()[1:]
        if line[:1].isalnum() and not line.startswith(("group ", "suite ", "shots:", "shadowed"))
    }
    assert rows["bfcl"][:3] == ["tool", "calls", "bfcl-eval"]
    assert rows["niah_single_1"][:3] == ["long", "context", "generated"]
    assert rows["mt_bench"][:2] == ["judged", "mt_bench"]
    assert not [name for name, cells in rows.items() if cells[0] == "-"]


def test_no_task_row_wraps_at_80() -> None:
    """HellaSwag's and MMLU-Pro's "10 from validation" once wrapped onto a line of their own
    (and again when BFCL's longer task names widened the first column)."""
    lines = cli("tasks", width=80).splitlines()
    table = lines[: next(i for i, line in enumerate(lines) if not line.strip())]
    assert all(line.startswith("    ") or len(line.split()) >= 5 for line in table), table
    assert "10 (validation)" in " ".join(table)


async def test_the_summary_takes_one_line_a_task_at_160(run_dir: Path) -> None:
    report = report_of(run_dir)
    narrow = shown(render_summary(typed(report)), width=80).splitlines()
    wide = shown(render_summary(typed(report)), width=160).splitlines()
    for result in report["results"]:
        task, headline = result["task"], result["headline"]
        (row,) = [line for line in wide if f"│ {task} " in line]
        counts = f"{result['samples']['scored']}/{result['samples']['total']}"
        assert f" {headline} " in row and f" {counts} " in row  # all on one line
        at = next(i for i, line in enumerate(narrow) if f"│ {task} " in line)
        assert f" {headline} " in narrow[at + 1]  # below it at 80 columns
    assert max(len(line) for line in narrow) <= 80


async def test_compare_keeps_metric_names_whole_at_80(run_dir: Path) -> None:
    text = shown(*render_comparison(compare_runs(run_dir, run_dir)), width=80)
    assert "flexible_exact_match" in text
    assert "exact_match *" in text  # the star on the name's line
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert not any(line.split("│")[1].strip() == "*" for line in rows)
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_task_that_takes_no_shots_shows_0_not_a_question_mark() -> None:
    """The summary showed ``?`` shots for BFCL and MT-Bench: tasks whose defaults have no
    ``num_fewshot`` because their prompts never hold shots; a task the registry does not know is
    still unknown (``None``)."""
    from types import SimpleNamespace

    from sieval.results.shots import shots
    from sieval.tasks.registry import TASKS

    report: Any = SimpleNamespace(run=SimpleNamespace(inputs={"tasks": {}}))
    assert shots(report, "bfcl") == 0 and shots(report, "mt_bench") == 0
    assert (
        shots(report, "gsm8k_kshot_base_gen")
        == TASKS["gsm8k_kshot_base_gen"].defaults["num_fewshot"]
    )
    assert shots(report, "a_task_of_another_version") is None
