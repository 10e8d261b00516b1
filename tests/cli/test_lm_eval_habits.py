"""An lm-eval user's habits work (issue 41): ``--limit 0.1`` is a fraction of each task's rows,
rounded up as lm-eval's ``math.ceil(len(docs) * limit)``; ``--samples ID,...`` runs chosen
samples, refusing an id the task lacks with the closest one it has.

The row counts are read from the data files themselves (one JSON object a line), not from sieval."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.cli.oneline import parse_limit
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import plan_run


def sieval(*args: str, width: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    return result.exit_code, " ".join(result.output.split())


def _rows(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def _plan(entry: str, limit: int | float | None = None):  # type: ignore[no-untyped-def]
    config = parse_config(f"models: [{{endpoint: embedded}}]\ntasks: [{entry}]")
    return plan_run(config, data_dir=DATA, limit=limit, keys=False)


@pytest.mark.parametrize(("text", "value"), [("50", 50), ("0.1", 0.1), ("0.25", 0.25), (".5", 0.5)])
def test_limit_reads_a_count_or_a_fraction(text: str, value: int | float) -> None:
    found = parse_limit(text)
    assert found == value and type(found) is type(value)


@pytest.mark.parametrize("text", ["0", "1.0", "1.5", "-3", "ten", "0.0"])
def test_limit_refuses_what_is_neither(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--limit 50\) or a fraction of each task below 1"):
        parse_limit(text)


def test_a_fraction_takes_that_share_of_the_rows_rounded_up() -> None:
    rows = _rows(DATA / "arc_easy" / "ARC-Easy-test.jsonl")
    plan = _plan("{name: arc_easy}", limit=0.1)
    assert len(plan.tasks[0].samples) == math.ceil(rows * 0.1) == 238
    assert any(f"n=0.1 of its {rows:,} rows is 238" in note for note in plan.notes)
    # the fraction is the entry's n: in the identity, as a count is
    assert plan.inputs["tasks"]["arc_easy"]["config"]["n"] == 0.1
    assert "samples" not in plan.inputs["tasks"]["arc_easy"]["config"]  # unset: not in it
    assert len(_plan("{name: arc_easy, n: 0.01}").tasks[0].samples) == math.ceil(rows * 0.01)


def test_a_fraction_beside_a_count_is_refused() -> None:
    with pytest.raises(ConfigError, match="one of them is a fraction; give one"):
        _plan("{name: arc_easy, n: 10}", limit=0.1)
    with pytest.raises(ConfigError, match=r"n must be a whole number >= 1 or a fraction"):
        _plan("{name: arc_easy, n: 1.5}")


def test_chosen_samples_run_in_the_tasks_order() -> None:
    rows = (DATA / "arc_easy" / "ARC-Easy-test.jsonl").read_text().splitlines()
    plan = _plan("{name: arc_easy, samples: [test/7, test/2]}")
    assert [s.id for s in plan.tasks[0].samples] == ["test/2", "test/7"]
    for sample, row in zip(plan.tasks[0].samples, (rows[2], rows[7]), strict=True):
        assert json.loads(row)["question"] in sample.data["query"]
    assert plan.inputs["tasks"]["arc_easy"]["config"]["samples"] == ["test/7", "test/2"]


def test_an_id_the_task_lacks_is_refused_with_the_closest() -> None:
    with pytest.raises(ConfigError, match=r"arc_easy has no sample 'tst/3'.*test/3"):
        _plan("{name: arc_easy, samples: [tst/3]}")
    with pytest.raises(ConfigError, match=r"arc_easy has no sample 'test/99999'"):
        _plan("{name: arc_easy, n: 1, samples: [test/0, test/99999]}")  # n does not hide it


def test_the_one_line_form_takes_both(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy", "--samples", "test/1,test/4",
        "--data-dir", str(DATA), "--write-config", str(tmp_path / "c.yaml"),
    )  # fmt: skip
    assert code == 0, said
    saved = (tmp_path / "c.yaml").read_text()
    assert "samples: [test/1, test/4]" in saved
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy", "--limit", "0.5",
        "--data-dir", str(DATA), "--write-config", str(tmp_path / "d.yaml"),
    )  # fmt: skip
    assert code == 0 and "n: 0.5" in (tmp_path / "d.yaml").read_text()
    code, said = sieval("eval", "--endpoint", "embedded", "--task", "arc_easy", "--limit", "2.5")
    assert code == 2 and "--limit '2.5': give a whole number" in said
    code, said = sieval("eval", str(tmp_path / "c.yaml"), "--samples", "test/1")
    assert code == 2 and "a config sets samples: [N] in its" in said
