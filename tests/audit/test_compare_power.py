"""``sieval compare``'s minimum detectable difference (MDE): from each comparison's n and how
its differences varied, checked against scipy's exact McNemar power and statsmodels' z-test, and
the line that says what it means."""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from runs import options
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from typer.testing import CliRunner

from sieval.analysis.compare import compare_runs
from sieval.cli.main import app
from sieval.runner import arun_eval, parse_config
from sieval.store.records import decode_record

sys.path.insert(0, str(Path(__file__).parents[1] / "scoring"))
from power_oracle import exact_mcnemar_power

CONFIG = """
models: [{name: ref, endpoint: embedded}]
tasks:
  - {name: arc_easy_kshot_ppl, n: 120, num_fewshot: 0}
  - {name: mmlu_kshot_clp, n: 171, num_fewshot: 0}
"""


@pytest.fixture(scope="module")
async def run_a(tmp_path_factory: Any) -> Path:
    out = tmp_path_factory.mktemp("compare_power")
    return (await arun_eval(parse_config(CONFIG), options(out=out, run_name="a"))).run_dir


def records(unit: Path) -> list[dict[str, Any]]:
    lines = (unit / "records.jsonl").read_bytes().splitlines()
    return [msgspec.to_builtins(decode_record(line)) for line in lines]


def edited(a: Path, b: Path, task: str, edit: Any) -> Path:
    """A copy of run ``a`` whose ``task`` records ``edit`` changed."""
    shutil.copytree(a, b)
    unit = b / "ref" / task
    rows = records(unit)
    for i, row in enumerate(rows):
        edit(i, row)
    (unit / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return b


def flip(metric: str, which: set[int], only_wrong: bool = False) -> Any:
    def edit(i: int, row: dict[str, Any]) -> None:
        if i in which and (not only_wrong or row["metrics"][metric] == 0.0):
            row["metrics"][metric] = 1.0 - row["metrics"][metric]

    return edit


def unit(result: dict[str, Any], task: str) -> dict[str, Any]:
    return next(t for t in result["tasks"] if t["task"] == task)


async def test_identical_runs_have_no_mde_and_say_why(run_a: Path) -> None:
    arc = unit(compare_runs(run_a, run_a), "arc_easy_kshot_ppl")
    mde = arc["metrics"]["acc_norm"]["mde"]
    assert mde["value"] is None and mde["discordance"] == 0.0 and mde["method"] == "mcnemar"
    assert "score every sample the same" in mde["why"]
    assert arc["mde_note"].startswith("acc_norm: no minimum detectable difference: the runs")


async def test_the_mcnemar_mde_is_where_scipys_exact_power_reaches_0_8(
    run_a: Path, tmp_path: Path
) -> None:
    which = set(random.Random(7).sample(range(120), 14))
    b = edited(run_a, tmp_path / "b", "arc_easy_kshot_ppl", flip("acc_norm", which))
    arc = unit(compare_runs(run_a, b), "arc_easy_kshot_ppl")
    head = arc["metrics"]["acc_norm"]
    mde = head["mde"]
    assert mde["method"] == "mcnemar" and mde["n"] == 120
    assert mde["discordance"] == pytest.approx(14 / 120)
    assert exact_mcnemar_power(120, 14 / 120, mde["value"]) >= 0.8 - 1e-9
    assert exact_mcnemar_power(120, 14 / 120, mde["value"] - 1e-6) < 0.8
    assert abs(head["diff"]) < mde["value"]  # 14 flips both ways: too few to show anything
    assert arc["mde_note"] == (
        f"acc_norm: this comparison could not have detected a difference smaller than "
        f"{mde['value']:.4f} (found with probability 0.8 at α 0.05, two-sided; McNemar's exact "
        f"test, 11.7% of 120 pairs discordant); the observed {head['diff']:+.4f} is below it, "
        "so it is no evidence that the runs are equal"
    )
    assert arc["metrics"]["acc"]["mde"]["value"] is None  # acc was not edited: no discordance


async def test_a_difference_above_the_mde_gets_no_line(run_a: Path, tmp_path: Path) -> None:
    b = edited(run_a, tmp_path / "b", "arc_easy_kshot_ppl",
               flip("acc_norm", set(range(120)), only_wrong=True))  # fmt: skip
    arc = unit(compare_runs(run_a, b), "arc_easy_kshot_ppl")
    head = arc["metrics"]["acc_norm"]
    assert head["diff"] > head["mde"]["value"] and arc["mde_note"] is None


async def test_a_clustered_mde_uses_the_clusters_design_effect(run_a: Path, tmp_path: Path) -> None:
    rng = random.Random(8)
    favour = {i for i in range(171) if rng.random() < 0.3}
    b = edited(run_a, tmp_path / "b", "mmlu_kshot_clp", flip("acc", favour))
    mmlu = unit(compare_runs(run_a, b), "mmlu_kshot_clp")
    mde = mmlu["metrics"]["acc"]["mde"]
    assert mde["method"] == "clustered"
    xs = {
        r["sample_id"]: (r["metrics"]["acc"], r["group"])
        for r in records(run_a / "ref" / "mmlu_kshot_clp")
    }
    ys = {r["sample_id"]: r["metrics"]["acc"] for r in records(b / "ref" / "mmlu_kshot_clp")}
    d = np.array([ys[i] - xs[i][0] for i in xs])
    groups = [xs[i][1] for i in xs]
    n, psi = len(d), float(np.mean(d != 0))
    residuals = d - d.mean()
    sums = np.array([residuals[[g == key for g in groups]].sum() for key in sorted(set(groups))])
    c = len(sums)
    cr1 = c / (c - 1) * float((sums**2).sum()) / n**2
    deff = cr1 / stats.sem(d) ** 2
    assert mde["discordance"] == pytest.approx(psi) and mde["design_effect"] == pytest.approx(deff)
    # the z-test with Var = (ψ − Δ²)·DEFF / n detects the MDE with probability 0.8
    effect = mde["value"] / math.sqrt(psi - mde["value"] ** 2)
    power = NormalIndPower().power(effect, nobs1=n / deff, alpha=0.05, ratio=0)
    assert power == pytest.approx(0.8, abs=1e-8)


async def test_a_metric_that_is_not_0_1_uses_the_sd_of_its_differences(
    run_a: Path, tmp_path: Path
) -> None:
    noise = np.random.default_rng(9).normal(0.0, 0.4, size=120)

    def blur(i: int, row: dict[str, Any]) -> None:
        row["metrics"]["acc_uncond"] += float(noise[i])

    b = edited(run_a, tmp_path / "b", "arc_easy_kshot_ppl", blur)
    mde = unit(compare_runs(run_a, b), "arc_easy_kshot_ppl")["metrics"]["acc_uncond"]["mde"]
    sd = float(np.std(noise, ddof=1))
    assert mde["method"] == "paired" and mde["sd"] == pytest.approx(sd, rel=1e-9)
    power = NormalIndPower().power(mde["value"] / sd, nobs1=120, alpha=0.05, ratio=0)
    assert power == pytest.approx(0.8, abs=1e-8)


async def test_the_command_prints_the_mde_and_its_line(run_a: Path, tmp_path: Path) -> None:
    which = set(random.Random(7).sample(range(120), 14))
    b = edited(run_a, tmp_path / "b", "arc_easy_kshot_ppl", flip("acc_norm", which))
    env = {"COLUMNS": "250"}
    out = CliRunner().invoke(app, ["compare", str(run_a), str(b)], env=env)
    assert out.exit_code == 0, out.output
    mde = unit(compare_runs(run_a, b), "arc_easy_kshot_ppl")["metrics"]["acc_norm"]["mde"]
    assert f"±{mde['value']:.4f}" in out.output and "MDE" in out.output
    assert "this comparison could not have detected a difference smaller than" in out.output
    stricter = CliRunner().invoke(
        app, ["compare", str(run_a), str(b), "--power", "0.9", "--format", "json"]
    )
    mde_90 = unit(json.loads(stricter.output), "arc_easy_kshot_ppl")["metrics"]["acc_norm"]
    assert mde_90["mde"]["power"] == 0.9 and mde_90["mde"]["value"] > mde["value"]
    assert exact_mcnemar_power(120, 14 / 120, mde_90["mde"]["value"]) >= 0.9 - 1e-9
    bad = CliRunner().invoke(app, ["compare", str(run_a), str(b), "--alpha", "5"])
    assert bad.exit_code == 2 and "--alpha 5: give a probability between 0 and 1" in bad.output
