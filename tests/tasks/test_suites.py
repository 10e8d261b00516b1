"""Suites run by name; ``sieval tasks`` lists every task in 80 columns, one in full, as JSON."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import select
from sieval.tasks.registry import SUITES, TASKS

BASE = ["arc_easy", "arc_challenge", "hellaswag", "winogrande", "piqa", "openbookqa", "sciq",
        "boolq", "truthfulqa_mc1", "truthfulqa_mc2", "lambada_openai", "wikitext",
        "mmlu"]  # fmt: skip
MODEL = "models: [{name: m, endpoint: embedded}]\n"


def test_a_suite_stands_for_its_tasks_with_its_n_and_seed() -> None:
    assert [m.name for m in SUITES["base_suite"].tasks] == BASE
    config = parse_config(
        MODEL + "tasks: [{name: base_suite, n: 7, seed: 3}, {name: gsm8k_0shot_gen}]"
    )
    assert [t.name for t in config.tasks] == [*BASE, "gsm8k_0shot_gen"]
    assert all(t.n == 7 and t.seed == 3 and t.num_fewshot is None for t in config.tasks[:13])
    assert [t.name for t in select(config, tasks=["base_suite"]).tasks] == BASE
    assert [t.name for t in select(config, tasks=["wikitext", "gsm8k_0shot_gen"]).tasks] == [
        "wikitext", "gsm8k_0shot_gen"]  # fmt: skip
    with pytest.raises(ConfigError, match="listed twice"):
        parse_config(MODEL + "tasks: [{name: base_suite}, {name: mmlu}]")
    with pytest.raises(ConfigError, match="takes n and seed only"):
        parse_config(MODEL + "tasks: [{name: base_suite, num_fewshot: 5}]")


INSTRUCT = ["ifeval", "bbh", "math500", "aime2024", "aime2025", "gpqa_diamond", "mmlu_pro",
            "humaneval", "mbpp", "mbpp_sanitized"]  # fmt: skip


def test_the_instruct_suite_stands_for_its_tasks() -> None:
    assert [m.name for m in SUITES["instruct_suite"].tasks] == INSTRUCT
    config = parse_config(MODEL + "tasks: [{name: instruct_suite, n: 3}]")
    assert [t.name for t in config.tasks] == INSTRUCT
    assert all(t.n == 3 and t.num_fewshot is None for t in config.tasks)


def test_the_task_table_fits_80_columns_and_names_every_task() -> None:
    result = CliRunner().invoke(app, ["tasks"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80
    firsts = {line.split()[0] for line in lines if line and not line.startswith(" ")}
    assert set(TASKS) <= firsts
    row = next(line.split() for line in lines if line.startswith("wikitext "))
    assert row == ["wikitext", "rolling", "LL", "wikitext", "test", "0", "only"]
    row = next(line.split() for line in lines if line.startswith("mmlu "))
    assert row == ["mmlu", "choice", "LL", "mmlu", "test", "0", "(dev)"]
    assert "suite base_suite: arc_easy, arc_challenge" in result.output


TASKS_OF_RULER = [
    "niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1", "niah_multikey_2",
    "niah_multikey_3", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe",
]  # fmt: skip


def test_one_task_in_full_and_as_json() -> None:
    runner = CliRunner()
    one = runner.invoke(app, ["tasks", "winogrande"], env={"COLUMNS": "200"})
    assert one.exit_code == 0 and "preprocess_winogrande.py" in one.output
    assert "variable context" in one.output and max(map(len, one.output.splitlines())) <= 80
    data = json.loads(runner.invoke(app, ["tasks", "--json"]).output)
    by_name = {t["name"]: t for t in data["tasks"]}
    assert set(by_name) == set(TASKS)
    assert by_name["boolq"]["shots_from"] is None  # train is not stored
    assert by_name["arc_easy"]["sampler"] == "random" and by_name["mmlu"]["subsets"] == 57
    assert data["suites"] == [
        {"name": "base_suite", "about": SUITES["base_suite"].about, "tasks": BASE},
        {"name": "instruct_suite", "about": SUITES["instruct_suite"].about, "tasks": INSTRUCT},
        {"name": "ruler", "about": SUITES["ruler"].about, "tasks": [*TASKS_OF_RULER]},
    ]
    suite = runner.invoke(app, ["tasks", "base_suite"])
    assert suite.exit_code == 0 and "arc_challenge" in suite.output
    bad = runner.invoke(app, ["tasks", "winogrand"])
    assert bad.exit_code == 2 and "Did you mean 'winogrande'" in bad.output
