"""``sieval power`` through the command line: samples needed, the smallest detectable difference,
the task's dataset size and clusters, a previous pair of runs, and the errors a user meets."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options
from statsmodels.stats.power import NormalIndPower
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.runner import arun_eval, parse_config
from sieval.store.records import decode_record
from sieval.tasks.base import TaskConfig
from sieval.tasks.registry import TASKS

sys.path.insert(0, str(Path(__file__).parents[1] / "scoring"))
from power_oracle import exact_mcnemar_power


@pytest.fixture(scope="module")
def data_dir() -> Path:
    path = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
    if not (path / "mmlu").is_dir():
        pytest.skip(f"benchmark data not found at {path}; set SIEVAL_DATA_DIR")
    return path


def power(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["power", *args], env={"COLUMNS": "300"})
    assert result.exit_code == code, result.output
    return result.output


def as_json(*args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(power(*args, "--format", "json"))
    return data


def test_a_baseline_alone_needs_more_than_arc_easy_holds(data_dir: Path) -> None:
    args = ("--task", "arc_easy_kshot_ppl", "--baseline", "0.62", "--delta", "0.02",
            "--data-dir", str(data_dir))  # fmt: skip
    result = as_json(*args)
    psi = 0.62 * 0.36 + 0.64 * 0.38  # independent runs
    n = result["needed"]
    assert result["method"] == "mcnemar" and result["discordance"] == pytest.approx(psi)
    assert exact_mcnemar_power(n, psi, 0.02) >= 0.8 > exact_mcnemar_power(n - 1, psi, 0.02)
    lines = (data_dir / "arc_easy" / "ARC-Easy-test.jsonl").read_text().splitlines()
    size = len([line for line in lines if line.strip()])
    assert result["dataset"]["size"] == size == 2376 and not result["fits"]
    at = result["at_dataset"]
    assert at["power"] == pytest.approx(exact_mcnemar_power(size, psi, 0.02), rel=1e-8)
    text = power(*args)
    assert f"samples needed to detect Δ = +0.02: {n:,}: more than the 2,376 samples" in text
    assert "as if the runs' answers were independent" in text
    assert "McNemar's exact test" in text and "α 0.05 two-sided; power 0.8" in text


def test_a_discordance_and_n_give_the_smallest_detectable_difference(data_dir: Path) -> None:
    result = as_json("--task", "arc_easy_kshot_ppl", "--discordance", "0.1", "--n", "500",
                     "--delta", "0.02", "--data-dir", str(data_dir))  # fmt: skip
    mde = result["mde"]
    assert exact_mcnemar_power(500, 0.1, mde) >= 0.8 - 1e-9
    assert exact_mcnemar_power(500, 0.1, mde - 1e-6) < 0.8
    assert result["power_at_n"] == pytest.approx(exact_mcnemar_power(500, 0.1, 0.02), rel=1e-8)
    assert result["needed"] <= 2376 and result["fits"]
    text = power("--discordance", "0.1", "--n", "500")  # no task: no dataset
    assert f"smallest detectable difference with 500 samples: {mde:.4f}" in text
    assert "dataset" not in text


def mmlu_groups(data_dir: Path) -> list[str]:
    task = TASKS["mmlu_kshot_clp"]
    return [s.group or "" for s in task.load(data_dir, TaskConfig(name="mmlu_kshot_clp"))]


def test_mmlu_takes_its_subjects_sizes_from_the_data(data_dir: Path) -> None:
    args = ("--task", "mmlu_kshot_clp", "--discordance", "0.15", "--delta", "0.02",
            "--data-dir", str(data_dir))  # fmt: skip
    result = as_json(*args, "--icc", "0.01")
    groups = mmlu_groups(data_dir)
    assert result["method"] == "clustered"
    assert result["dataset"] == {"size": 14042, "clusters": 57, "cluster_name": "subject"}
    assert "clustered by subject (57 in the task's data)" in result["method_text"]
    n = result["needed"]

    def z_power(count: int) -> float:  # statsmodels' z-test at n / DEFF
        sizes = Counter(groups[:count]).values()
        deff = 1 + (sum(m * m for m in sizes) / count - 1) * 0.01
        effect = 0.02 / math.sqrt(0.15 - 0.02**2)
        return float(NormalIndPower().power(effect, nobs1=count / deff, alpha=0.05, ratio=0))

    assert z_power(n) >= 0.8 > z_power(n - 1)
    unclustered = as_json(*args)  # ICC assumed 0, and said so
    assert unclustered["icc"] == 0 and "assumed 0" in unclustered["icc_from"]
    assert n > 1.5 * unclustered["needed"]
    text = power(*args, "--icc", "0.02", "--delta", "0.01")
    assert "not reachable within the task's 14,042 samples" in text
    assert "with all 14,042 samples: power" in text


def test_too_many_samples_for_a_clustered_task_are_refused(data_dir: Path) -> None:
    out = power("--task", "mmlu_kshot_clp", "--discordance", "0.15", "--n", "20000",
                "--data-dir", str(data_dir), code=2)  # fmt: skip
    assert "--n 20000: mmlu_kshot_clp has 14042 samples" in out


async def test_a_previous_pair_sets_the_discordance(data_dir: Path, tmp_path: Path) -> None:
    config = parse_config(
        "models: [{name: ref, endpoint: embedded}]\n"
        "tasks: [{name: arc_easy_kshot_ppl, n: 100, num_fewshot: 0}]\n"
    )
    a = (await arun_eval(config, options(out=tmp_path, run_name="a"))).run_dir
    b = tmp_path / "b"
    shutil.copytree(a, b)
    unit = b / "ref" / "arc_easy_kshot_ppl"
    rows = [
        msgspec.to_builtins(decode_record(x))
        for x in (unit / "records.jsonl").read_bytes().splitlines()
    ]
    for i in random.Random(3).sample(range(100), 9):
        rows[i]["metrics"]["acc_norm"] = 1.0 - rows[i]["metrics"]["acc_norm"]
    (unit / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = as_json("--from", str(a), str(b), "--delta", "0.05", "--data-dir", str(data_dir))
    assert result["task"] == "arc_easy_kshot_ppl" and result["metric"] == "acc_norm"
    assert result["discordance"] == pytest.approx(0.09) and result["runs"]["paired"] == 100
    n = result["needed"]
    assert exact_mcnemar_power(n, 0.09, 0.05) >= 0.8 > exact_mcnemar_power(n - 1, 0.09, 0.05)
    mde = as_json("--from", str(a), str(b), "--data-dir", str(data_dir))["mde"]
    assert mde == result["runs"]["mde"]  # no --delta, no --n: the pair's own MDE, as compare's
    refused = power("--from", str(a), str(b), "--discordance", "0.1", "--delta", "0.05", code=2)
    assert "--from reads how the differences vary from the runs; drop --discordance" in refused
    too_big = power("--from", str(a), str(b), "--delta", "0.2", "--data-dir", str(data_dir), code=2)
    assert "--delta 0.2 is more than the discordance 0.09" in too_big


async def test_a_clustered_pair_sets_the_icc(data_dir: Path, tmp_path: Path) -> None:
    """Run B gets every wrong answer of 8 subjects right and changes nothing else: differences
    that cluster, so the ICC the pair shows is positive and raises the n needed."""
    config = parse_config(
        "models: [{name: ref, endpoint: embedded}]\n"
        "tasks: [{name: mmlu_kshot_clp, n: 228, num_fewshot: 0}]\n"
    )
    a = (await arun_eval(config, options(out=tmp_path, run_name="a"))).run_dir
    b = tmp_path / "b"
    shutil.copytree(a, b)
    unit = b / "ref" / "mmlu_kshot_clp"
    lines = (unit / "records.jsonl").read_bytes().splitlines()
    rows = [msgspec.to_builtins(decode_record(x)) for x in lines]
    flipped = sorted({r["group"] for r in rows})[:8]
    for row in rows:
        if row["group"] in flipped:
            row["metrics"]["acc"] = 1.0
    (unit / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from sieval.analysis.compare import compare_runs

    observed = compare_runs(a, b)["tasks"][0]["metrics"]["acc"]["mde"]
    assert observed["icc"] > 0.05  # whole subjects flipped: strongly clustered
    result = as_json("--from", str(a), str(b), "--delta", "0.1", "--data-dir", str(data_dir))
    assert result["icc"] == pytest.approx(observed["icc"]) and result["method"] == "clustered"
    assert result["icc_from"].startswith("from the runs")
    psi, icc, n = observed["discordance"], observed["icc"], result["needed"]
    groups = mmlu_groups(data_dir)

    def z_power(count: int) -> float:
        sizes = Counter(groups[:count]).values()
        deff = 1 + (sum(m * m for m in sizes) / count - 1) * icc
        effect = 0.1 / math.sqrt(psi - 0.1**2)
        return float(NormalIndPower().power(effect, nobs1=count / deff, alpha=0.05, ratio=0))

    assert z_power(n) >= 0.8 > z_power(n - 1)
    text = power("--from", str(a), str(b), "--delta", "0.1", "--data-dir", str(data_dir))
    assert f"ICC: {icc:.4g}, from the runs" in text and "clustered by subject" in text


ERRORS = [
    (["--baseline", "0.6"], "say what to compute: --delta D"),
    (["--delta", "0.02"], "say how the two runs' scores differ: --baseline P"),
    (["--sd", "1", "--baseline", "0.6", "--delta", "0.1"], "--sd is for a metric that is not 0/1"),
    (
        ["--discordance", "0.1", "--delta", "0.2"],
        "--delta 0.2 is more than the discordance 0.1: runs that score a share 0.1 of the samples "
        "differently differ by at most 0.1",
    ),
    (
        ["--baseline", "0.99", "--delta", "0.02"],
        "--baseline 0.99 with --delta 0.02: run B's accuracy would be 1.01; accuracies lie",
    ),
    (
        ["--baseline", "0.6", "--discordance", "0.9", "--delta", "0.02"],
        "--discordance 0.9 is impossible for accuracies 0.6 and 0.62: it lies between 0.02 and "
        "0.78",
    ),
    (["--sd", "1", "--delta", "0.1", "--alpha", "2"], "--alpha 2: give a probability between 0"),
    (["--sd", "1", "--delta", "0"], "--delta 0: give the difference to detect"),
    (["--discordance", "1.5", "--delta", "0.1"], "--discordance 1.5: give the share of samples"),
    (["--sd", "-1", "--delta", "0.1"], "--sd -1: give a standard deviation above 0"),
    (["--sd", "1", "--delta", "0.1", "--icc", "-0.2"], "--icc -0.2: give a correlation from 0"),
    (["--task", "arc_eazy", "--sd", "1", "--delta", "0.1"], "unknown task 'arc_eazy'. Did you"),
]


@pytest.mark.parametrize(("args", "message"), ERRORS)
def test_what_cannot_be_answered_names_the_flag(args: list[str], message: str) -> None:
    out = power(*args, code=2)
    assert "error: " in out and message in out and "Traceback" not in out


def test_a_metric_that_is_not_0_1_uses_the_sd(data_dir: Path) -> None:
    result = as_json("--sd", "0.6", "--delta", "0.1", "--n", "100")
    real_n = NormalIndPower().solve_power(0.1 / 0.6, alpha=0.05, power=0.8, ratio=0)
    assert result["method"] == "paired" and result["needed"] == math.ceil(real_n)
    assert NormalIndPower().power(
        result["mde"] / 0.6, nobs1=100, alpha=0.05, ratio=0
    ) == pytest.approx(0.8)


def test_repeats_are_planned_in_rows_against_the_tasks_rows(data_dir: Path) -> None:
    # 4 repeats a row whose differences all agree (ICC 1): a row says what one sample does, so
    # ψ 0.3 and Δ 0.1 need ((1.96·√0.30 + 0.8416·√0.29) / 0.1)² = 233.3 rows, 936 samples
    args = ["--task", "math500", "--discordance", "0.3", "--delta", "0.1", "--repeats", "4"]
    agree = as_json(*args, "--icc", "1", "--data-dir", str(data_dir))
    assert (agree["method"], agree["unit"], agree["needed"]) == ("rows", "rows", 234)
    assert agree["dataset"]["size"] == 500 and agree["design_effect"] == 4.0
    text = " ".join(power(*args, "--icc", "1", "--data-dir", str(data_dir)).split())
    assert "rows needed to detect Δ = +0.1: 234 (design effect 4.000; 936 samples" in text
    # not given, the ICC is taken as 0 and said to give a lower bound: a quarter of the rows
    free = as_json(*args, "--data-dir", str(data_dir))
    assert free["icc"] == 0.0 and "lower bound" in free["icc_from"]
    assert 0.23 * 234 < free["needed"] < 0.27 * 234
    refused = power("--task", "mmlu_kshot_clp", "--discordance", "0.2", "--delta", "0.05",
                    "--repeats", "4", "--data-dir", str(data_dir), code=2)  # fmt: skip
    assert "drop --repeats" in refused
