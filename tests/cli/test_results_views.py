"""Intervals in the report and its terminal forms; ``--format md|csv|json``; ``sieval samples``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from runs import options
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.runner import arun_eval, parse_config

CONFIG = """
models: [{name: ref, endpoint: embedded}]
tasks:
  - {name: arc_easy_kshot_ppl, n: 15, num_fewshot: 1}
  - {name: mmlu_kshot_clp, n: 30, num_fewshot: 1}
  - {name: gsm8k_kshot_base_gen, n: 2, num_fewshot: 1}
"""


@pytest.fixture(scope="module")
async def run_dir(tmp_path_factory: Any) -> Path:
    out = tmp_path_factory.mktemp("views")
    return (
        await arun_eval(parse_config(CONFIG), options(out=out, run_name="r", preflight=True))
    ).run_dir


def records(run_dir: Path, task: str) -> list[dict[str, Any]]:
    lines = (run_dir / "ref" / task / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def cli(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


async def test_every_metric_has_its_interval(run_dir: Path) -> None:
    report = json.loads((run_dir / "report.json").read_text())
    arc, mmlu, _ = report["results"]
    values = [r["metrics"]["acc_norm"] for r in records(run_dir, "arc_easy_kshot_ppl")]
    lo, hi = proportion_confint(sum(values), len(values), method="wilson")
    spread = arc["intervals"]["acc_norm"]
    assert spread["ci"] == pytest.approx([lo, hi]) and spread["estimator"] == "wilson"
    assert spread["n"] == 15 and set(arc["intervals"]) == {"acc", "acc_norm", "acc_uncond"}
    clustered = mmlu["intervals"]["acc"]
    subjects = {r["group"] for r in records(run_dir, "mmlu_kshot_clp")}
    assert clustered["estimator"].startswith(
        f"clustered(cr1, {len(subjects)} clusters), clopper-pearson at effective n "
    )
    assert clustered["clusters"] == len(subjects) and "se_iid" in clustered


async def test_the_report_tables_show_the_interval(run_dir: Path) -> None:
    report = json.loads((run_dir / "report.json").read_text())
    lo, hi = report["results"][0]["intervals"]["acc_norm"]["ci"]
    out = cli("report", str(run_dir))
    assert f"{lo:.3f}–{hi:.3f}" in out and "95% CI of acc, acc_norm, acc_uncond: wilson" in out


async def test_formats_carry_the_same_figures(run_dir: Path) -> None:
    report = json.loads((run_dir / "report.json").read_text())
    arc = report["results"][0]
    rows = json.loads(cli("report", str(run_dir), "--format", "json"))
    row = next(r for r in rows if r["task"] == "arc_easy_kshot_ppl" and r["metric"] == "acc_norm")
    assert row["value"] == arc["metrics"]["acc_norm"]
    assert [row["ci_low"], row["ci_high"]] == arc["intervals"]["acc_norm"]["ci"]
    subjects = [r for r in rows if r["metric"].startswith("by_subject.")]
    assert subjects and all(r["ci_low"] is None for r in subjects)  # no interval claimed
    table = list(csv.DictReader(io.StringIO(cli("report", str(run_dir), "--format", "csv"))))
    assert len(table) == len(rows)
    assert float(table[rows.index(row)]["ci_high"]) == row["ci_high"]
    markdown = cli("report", str(run_dir), "--format", "md").splitlines()
    assert markdown[0].startswith("| model | task | metric |") and len(markdown) == len(rows) + 2
    assert (
        f"| ref | arc_easy_kshot_ppl | acc_norm | {row['value']:.4f} |"
        in markdown[2 + rows.index(row)]
    )


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--format", "xml"])
    assert result.exit_code == 2 and "choose one of table, md, csv, json" in result.output


async def test_samples_filters_by_outcome_and_id(run_dir: Path) -> None:
    arc = records(run_dir, "arc_easy_kshot_ppl")
    wrong = {r["sample_id"] for r in arc if r["metrics"]["acc_norm"] == 0.0}
    out = cli("samples", str(run_dir), "--task", "arc_easy_kshot_ppl", "--wrong", "--limit", "0")
    shown = {line.split(" / ")[2].split()[0] for line in out.splitlines() if " / " in line}
    assert shown == wrong
    one = arc[0]
    full = cli("samples", str(run_dir), "--id", one["sample_id"], "--body")
    assert one["sample"]["choices"][0] in full and "prompt (first request, as sent)" in full
    assert '"echo": true' in full and "scoring.input_logprobs: consumed echo" in full
    limited = cli("samples", str(run_dir), "--task", "mmlu_kshot_clp", "--limit", "3")
    assert "3 of 30 matching samples shown" in limited


async def test_report_and_compare_write_the_html_file(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "pages"
    out.mkdir()
    cli("report", str(run_dir), "--html", str(out))
    page = (out / "report.html").read_text()
    assert page.lower().startswith("<!doctype html>") and "arc_easy_kshot_ppl" in page
    assert 'id="compare"' not in page
    both = CliRunner().invoke(
        app, ["report", str(run_dir), "--format", "json", "--html", str(out / "b.html")]
    )
    assert json.loads(both.stdout) and (out / "b.html").exists()  # stdout: the rows alone
    cli("compare", str(run_dir), str(run_dir), "--html", str(out / "c.html"))
    compared = (out / "c.html").read_text()
    assert 'id="compare"' in compared
    # a run against itself: no discordance, so no MDE, and the page says why for each task
    assert compared.count('<td class="num mde"') == compared.count("data-metric=") > 0
    assert compared.count('class="note mde-note"') == 3  # arc, mmlu and gsm8k's headlines
    assert "no minimum detectable difference: the runs score every sample the same" in compared
