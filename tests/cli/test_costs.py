"""Cost through the command line: ``sieval eval --dry-run``, ``--price``, ``--budget-*``,
``sieval plan``'s forecast and ``sieval report``'s cost table (and the HTML one)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from typer.testing import CliRunner

from sieval.cli.main import app

runner = CliRunner()

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
ONE_LINE = ["eval", "--endpoint", "embedded", "--task", "arc_easy_kshot_ppl:num_fewshot=1"]


def test_dry_run_prints_the_forecast_and_writes_nothing(tmp_path: Path) -> None:
    args = [*ONE_LINE, "--limit", "2", "--price", "0.15,0.60,USD", "--dry-run"]
    result = runner.invoke(app, [*args, "--data-dir", str(DATA), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "forecast · sieval-reference" in out and "cost ≤ (USD)" in out
    assert "prompt tokens: exact: POST /tokenize" in out
    assert "dry run: no model request was sent and no run directory was written" in out
    row = next(line for line in out.splitlines() if line.startswith("│ arc_easy_kshot_ppl"))
    samples, requests, prompt, most, cost = re.findall(r"[\d.,]+", row.split("│", 2)[2])
    assert (samples, requests, most) == ("2", "16", "16")  # 8 requests a sample, 1 token each
    assert float(cost) == round((int(prompt.replace(",", "")) * 0.15 + 16 * 0.60) / 1e6, 4)
    assert not (tmp_path / "o").exists()


def test_flags_that_cannot_mean_anything_are_refused(tmp_path: Path) -> None:
    base = [*ONE_LINE, "--limit", "1", "--data-dir", str(DATA), "--out", str(tmp_path / "o")]
    price = runner.invoke(app, [*base, "--price", "cheap", "--dry-run"])
    assert price.exit_code == 2 and "--price 'cheap'" in price.output
    cost = runner.invoke(app, [*base, "--budget-cost", "1"])
    assert cost.exit_code == 2
    assert "--budget-cost needs the price of every model" in cost.output
    assert "--price IN,OUT[,CURRENCY]" in cost.output  # the one-line form names its flag
    tokens = runner.invoke(app, [*base, "--budget-tokens", "lots"])
    assert tokens.exit_code == 2 and "--budget-tokens 'lots'" in tokens.output
    config = tmp_path / "eval.yaml"
    config.write_text("models: [{endpoint: embedded}]\ntasks: [{name: arc_easy_kshot_ppl, n: 1}]\n")
    beside = runner.invoke(app, ["eval", str(config), "--price", "1,2"])
    assert beside.exit_code == 2 and "price: N" in beside.output
    resumed = runner.invoke(app, ["eval", "--resume", str(tmp_path), "--dry-run"])
    assert resumed.exit_code == 2 and "--dry-run forecasts a new run" in resumed.output
    assert not (tmp_path / "o").exists()


def test_a_budget_stop_its_report_and_its_resume(tmp_path: Path) -> None:
    base = [*ONE_LINE, "--limit", "4", "--data-dir", str(DATA), "--out", str(tmp_path / "o")]
    stopped = runner.invoke(app, [*base, "--price", "1000,1000,credits", "--budget-cost", "2"])
    assert stopped.exit_code == 1, stopped.output
    assert "stopped: budget: spent " in stopped.output and "resume with: sieval eval --resume" in (
        stopped.output
    )
    assert "cost: sieval-reference: spent " in stopped.output
    (run_dir,) = (tmp_path / "o").iterdir()
    report = runner.invoke(app, ["report", str(run_dir)])
    assert report.exit_code == 0, report.output
    assert "cost · sieval-reference" in report.output
    forecast_row = next(x for x in report.output.splitlines() if "│ forecast │" in x)
    assert "≤" in forecast_row  # the forecast's output and cost are maxima
    assert re.search(r"budget: spent [\d.]+ credits of 2\.0000 credits", report.output)
    assert "stopped: budget" in report.output
    data = json.loads((run_dir / "report.json").read_text())
    spent = data["budget"]["cost"]["spent"]
    html = runner.invoke(app, ["report", str(run_dir), "--html", str(tmp_path / "r.html")])
    assert html.exit_code == 0, html.output
    page = (tmp_path / "r.html").read_text()
    assert 'id="cost-table"' in page and "Budget: spent" in page
    actual = data["results"][0]["cost"]["actual"]
    assert f'data-spent="{actual["input_tokens"]} {actual["output_tokens"]}"' in page
    resumed = runner.invoke(app, ["eval", "--resume", str(run_dir), "--budget-cost", "100"])
    assert resumed.exit_code == 0, resumed.output
    budget = json.loads((run_dir / "report.json").read_text())["budget"]
    again = budget["cost"]
    assert again["spent_before"] == spent and again["spent"] > spent and budget["stopped"] is None


def test_plan_prints_the_forecast_and_keeps_it(tmp_path: Path) -> None:
    config = tmp_path / "eval.yaml"
    config.write_text(
        "models: [{endpoint: embedded, price: {input: 3, output: 15}}]\n"
        "tasks: [{name: mmlu_kshot_clp, n: 4, num_fewshot: 1}]\n"
    )
    out = tmp_path / "big"
    result = runner.invoke(
        app, ["plan", str(config), "--out", str(out), "--shards", "2", "--data-dir", str(DATA)]
    )
    assert result.exit_code == 0, result.output
    assert "forecast · sieval-reference" in result.output and "cost ≤" in result.output
    plan = json.loads((out / "plan.json").read_text())
    stored = json.loads((out / "forecast.json").read_text())
    assert plan["setup"]["forecast"]["units"] == stored["units"]
    (unit,) = stored["units"]
    assert unit["requests"] == 4 and unit["exact_requests"] == 4


def test_a_shard_s_budget_counts_its_own_records(tmp_path: Path) -> None:
    config = tmp_path / "eval.yaml"
    config.write_text(
        "models: [{endpoint: embedded, concurrency_limit: 2}]\n"
        "tasks: [{name: arc_easy_kshot_ppl, n: 6, num_fewshot: 1}]\n"
    )
    out = tmp_path / "big"
    planned = runner.invoke(
        app, ["plan", str(config), "--out", str(out), "--shards", "2", "--data-dir", str(DATA)]
    )
    assert planned.exit_code == 0, planned.output
    (unit,) = json.loads((out / "forecast.json").read_text())["units"]
    budget = unit["prompt_tokens"] // 4  # about a quarter of the run: within shard 0's half
    other = runner.invoke(app, ["eval", "--run", str(out), "--shard", "1/2"])
    assert other.exit_code == 0, other.output  # half the run spent, by shard 1
    shard = ["eval", "--run", str(out), "--shard", "0/2", "--budget-tokens", str(budget)]
    stopped = runner.invoke(app, shard)
    assert stopped.exit_code == 1, stopped.output
    assert f"of {budget:,} tokens (--budget-tokens)" in stopped.output
    path = out / "sieval-reference" / "arc_easy_kshot_ppl" / "shards" / "0" / "records.jsonl"
    recorded = [json.loads(x) for x in path.read_text().splitlines()]
    assert 0 < len(recorded) < 3  # shard 0 holds 3 samples; shard 1's spending is not counted
    again = runner.invoke(app, [*shard[:-1], str(budget * 4)])  # its own records count
    assert again.exit_code == 0, again.output
    assert len(path.read_text().splitlines()) == 3


def _text(parts: list[object]) -> str:
    from rich.console import Console

    console = Console(width=100, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    for part in parts:
        console.print(part)
    return console.export_text()


def test_the_cost_views_say_what_the_figures_leave_out() -> None:
    from sieval.cli.costs import render_costs, render_forecast
    from sieval.cost.forecast import Counting, Forecast, UnitForecast
    from sieval.plan.config import Price
    from sieval.results.document import (
        CostActual,
        Report,
        RunInfo,
        SampleCounts,
        UnitCost,
        UnitProvenance,
        UnitResult,
    )

    unit = {"model": "m", "samples": 2, "exact_requests": 0, "method": "estimate: bytes / 4"}
    forecast = Forecast(
        units=[
            UnitForecast(**unit, task="a", requests=2, prompt_tokens=10, max_output_tokens=8),
            UnitForecast(
                **unit,
                task="b",
                requests=2,
                prompt_tokens=5,
                max_output_tokens=0,
                unbounded_requests=2,
            ),
        ],
        counting=[
            Counting(model="m", method="estimate: bytes / 4", requests=4, tokenized=0, seconds=0.01)
        ],
    )
    shown = _text(render_forecast(forecast, {"m": Price(input=1.0, output=2.0, currency="EUR")}))
    total = next(line for line in shown.splitlines() if line.startswith("│ total"))
    cells = [cell.strip() for cell in total.split("│")[2:-1]]
    assert cells == ["4", "4", "~15", "8", "0.0000"]  # samples, requests, ~prompt, most, cost
    assert "~ prompt tokens: estimate: bytes / 4 (in 0.0 s)" in shown
    assert "+ 2 requests set no max_tokens" in shown and "0+" in shown
    assert "cost ≤ (EUR)" in shown

    actual = CostActual(input_tokens=12, output_tokens=3, without_usage=2, retries=1)
    report = Report(
        run=RunInfo(identity="sha256:0"),
        results=[
            UnitResult(
                model="m",
                task="a",
                headline="acc",
                samples=SampleCounts(total=2, scored=2, failed=0, missing=0),
                provenance=UnitProvenance(
                    requested_model="m", reported_models=[], dialect="openai_completions"
                ),
                cost=UnitCost(forecast=None, actual=actual, price=None),
            )
        ],
    )
    told = _text(render_costs(report))
    assert "no forecast was made for this run" in told
    # no forecast: its row is not printed as dashes, the spent row stands alone (issue 41)
    row = next(line for line in told.splitlines() if line.startswith("│ a "))
    assert [cell.strip() for cell in row.split("│")[1:-1]] == ["a", "spent", "12", "3"]
    assert "forecast" not in told.split("no forecast was made")[0]
    assert "2 replies reported no usage" in told
    assert "1 attempt was sent again" in told and "may have computed it too" in told
