"""lm-eval's task names and groups resolve (issue 41): ``gsm8k`` is lm-eval's gsm8k (sieval's
``gsm8k_kshot_base_gen`` at its 5 shots, said in one line), ``mmlu_<subject>`` and the MMLU groups
(``mmlu_stem``) choose subjects of ``mmlu``, as does ``--task mmlu:subjects=...``;
``--num-fewshot`` reaches a suite's members, naming those that take no shots; every unknown name
gets a did-you-mean.

The subjects of lm-eval's ``mmlu_stem`` group are written out here from lm-eval 0.4's
``tasks/mmlu/_generate_configs.py`` (not read from sieval); a subject's row count is read from
its CSV file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.cli.oneline import OneLine
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import Plan, plan_run
from sieval.tasks.registry import TASKS

LM_EVAL_STEM = {
    "abstract_algebra", "anatomy", "astronomy", "college_biology", "college_chemistry",
    "college_computer_science", "college_mathematics", "college_physics", "computer_security",
    "conceptual_physics", "electrical_engineering", "elementary_mathematics",
    "high_school_biology", "high_school_chemistry", "high_school_computer_science",
    "high_school_mathematics", "high_school_physics", "high_school_statistics",
    "machine_learning",
}  # fmt: skip


def sieval(*args: str, width: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    return result.exit_code, " ".join(result.output.split())


def _plan(tasks: str) -> Plan:
    config = parse_config(f"models: [{{endpoint: embedded}}]\ntasks: [{tasks}]")
    return plan_run(config, data_dir=DATA, keys=False)


def test_an_mmlu_group_runs_its_subjects() -> None:
    plan = _plan("{name: mmlu_stem, n: 40}")
    (task,) = plan.tasks
    assert task.name == "mmlu" and task.config.options == {"subjects": "stem"}
    # 40 rows taken a subject at a time: every stem subject, none other
    assert {s.group for s in task.samples} == LM_EVAL_STEM


def test_a_subject_runs_its_rows() -> None:
    with (DATA / "mmlu" / "test" / "abstract_algebra_test.csv").open() as f:
        rows = sum(1 for _ in csv.reader(f))
    (task,) = _plan("{name: mmlu_abstract_algebra}").tasks
    assert len(task.samples) == rows == 100
    assert {s.group for s in task.samples} == {"abstract_algebra"}


def test_subjects_and_groups_together() -> None:
    (task,) = _plan("{name: mmlu, n: 60, options: {subjects: anatomy+humanities}}").tasks
    groups = {s.group for s in task.samples}
    assert "anatomy" in groups and "philosophy" in groups and "astronomy" not in groups
    # two of lm-eval's names for one task become one entry choosing both
    (both,) = _plan("{name: mmlu_stem, n: 80}, {name: mmlu_humanities, n: 80}").tasks
    assert both.config.options == {"subjects": "stem+humanities"}
    assert {s.group for s in both.samples} > LM_EVAL_STEM


def test_gsm8k_is_lm_evals_gsm8k_with_its_shots() -> None:
    (task,) = _plan("{name: gsm8k, n: 1}").tasks
    assert task.name == "gsm8k_kshot_base_gen" and task.config.num_fewshot == 5
    assert task.samples[0].data["fewshot"].count("Question:") == 5
    (own,) = _plan("{name: gsm8k, n: 1, num_fewshot: 2}").tasks
    assert own.config.num_fewshot == 2  # the entry's own shots win


def test_the_run_says_what_an_lm_eval_name_runs_as(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "mmlu_stem,gsm8k", "--limit", "1",
        "--data-dir", str(DATA), "--dry-run",
    )  # fmt: skip
    assert code == 0, said
    assert "note: mmlu_stem is lm-eval's name; it runs as mmlu:subjects=stem" in said
    assert "note: gsm8k is lm-eval's name; it runs as gsm8k_kshot_base_gen:num_fewshot=5" in said


@pytest.mark.parametrize(
    ("tasks", "wanted"),
    [
        ("{name: mmlu_abstract_algebr}", "Did you mean 'mmlu_abstract_algebra'?"),
        ("{name: gsm8kk}", "Did you mean 'gsm8k'?"),
        ("{name: base_suit}", "Did you mean 'base_suite'?"),
        ("{name: mmlu, options: {subjects: stme}}", "'stme' is neither one of its 57 subsets"),
        ("{name: mmlu, options: {subjects: stme}}", "Did you mean 'stem'?"),
        ("{name: mmlu_kshot_clp, options: {top_kk: 5}}", "Did you mean 'top_k'?"),
    ],
)
def test_every_unknown_name_gets_a_did_you_mean(tasks: str, wanted: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _plan(tasks)
    assert wanted in caught.value.message


def test_num_fewshot_reaches_a_suites_members() -> None:
    line = OneLine(endpoint="embedded", model="", tasks=["base_suite"], num_fewshot=5)
    with pytest.raises(ConfigError) as caught:
        line.task_entries(TASKS)
    said = caught.value.message
    assert "truthfulqa_mc1, truthfulqa_mc2, wikitext take no shots" in said
    # the line it offers runs: every member, the shotless ones 0-shot
    offered = said.split("give --task ", 1)[1]
    entries = OneLine(endpoint="embedded", model="", tasks=[offered]).task_entries(TASKS)
    shots = {e["name"]: e.get("num_fewshot") for e in entries}
    assert shots["arc_easy"] == 5 and shots["wikitext"] is None and len(shots) == 13
    config = OneLine(endpoint="embedded", model="", tasks=[offered]).config(TASKS)
    assert len(config.tasks) == 13
    zero = OneLine(endpoint="embedded", model="", tasks=["base_suite"], num_fewshot=0)
    assert {e.get("num_fewshot") for e in zero.task_entries(TASKS)} == {0}
