"""``sieval data`` (issue 41): which datasets a task needs, where they are looked for, which are
present and how to get them; one rule for where a path is read from, said; ``--write-config``
writes the data directory it used.

What is present is set up here by copying files of the shared data into an empty directory; the
file names expected are the shared data folder's own."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.plan.config import load_config


def sieval(*args: str, width: int = 80, **env: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width), **env})
    return result.exit_code, " ".join(result.output.split())


def test_what_is_missing_and_how_to_get_it(tmp_path: Path) -> None:
    empty = tmp_path / "data"
    (empty / "gsm8k").mkdir(parents=True)
    shutil.copy(DATA / "gsm8k" / "test.jsonl", empty / "gsm8k" / "test.jsonl")
    code, said = sieval("data", "gsm8k", "arc_easy", "--data-dir", str(empty))
    assert code == 1, said
    assert f"data directory: {empty.resolve()} (--data-dir)" in said
    # gsm8k reads its test split and the train split its shots come from: one of two is there
    assert "gsm8k_kshot_base_gen gsm8k 2 1 of 2 openai/gsm8k (main)" in said
    assert "arc_easy arc_easy 2 0 of 2 allenai/ai2_arc (ARC-Easy)" in said
    assert "gsm8k_kshot_base_gen: missing gsm8k/train.jsonl" in said
    assert "arc_easy: missing arc_easy/ARC-Easy-train.jsonl, arc_easy/ARC-Easy-test.jsonl" in said
    assert f"put each dataset's files in {empty.resolve()}/<dataset>/" in said
    assert "hub copy" in said


def test_all_present_and_the_rule_said() -> None:
    code, said = sieval("data", "mmlu_stem", "base_suite", SIEVAL_DATA_DIR=str(DATA))
    assert code == 0, said
    assert f"data directory: {DATA.resolve()} ($SIEVAL_DATA_DIR)" in said
    assert "mmlu mmlu 114 yes cais/mmlu" in said and "wikitext" in said  # the suite's members
    assert "every file is present: nothing to fetch" in said
    assert (
        "--data-dir and $SIEVAL_DATA_DIR to the working directory, a config's data_dir: to the "
        "config file" in said
    )


def test_an_unknown_task_gets_a_did_you_mean() -> None:
    code, said = sieval("data", "gsm8kk")
    assert code == 2 and "Did you mean 'gsm8k'?" in said


def test_the_rule_holds_for_a_config_and_a_flag(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A config's relative data_dir is read from the config's folder; --data-dir from the
    working directory, and --write-config saves it absolute; with no --data-dir, the directory
    the run would read."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "c.yaml").write_text(
        "data_dir: here\nmodels: [{endpoint: embedded}]\ntasks: [{name: arc_easy}]\n"
    )
    assert load_config(tmp_path / "conf" / "c.yaml").data_dir == str(tmp_path / "conf" / "here")
    monkeypatch.chdir(tmp_path)
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy", "--data-dir", "rel",
        "--write-config", "a.yaml",
    )  # fmt: skip
    assert code == 0, said
    assert yaml.safe_load((tmp_path / "a.yaml").read_text())["data_dir"] == str(tmp_path / "rel")
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy", "--write-config", "b.yaml",
        SIEVAL_DATA_DIR=str(DATA),
    )  # fmt: skip
    assert code == 0, said
    assert yaml.safe_load((tmp_path / "b.yaml").read_text())["data_dir"] == str(DATA.resolve())
