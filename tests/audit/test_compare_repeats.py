"""``sieval compare`` and ``sieval power --from`` on runs whose samples are repeats of their rows:
paired and tested by row, powered in rows (issue 33).

The constructed pair: math500, 40 rows x 4 repeats, run on the embedded server, then each run's
``accuracy`` rewritten so that B is right on every repeat of 8 rows A got wrong, A on every
repeat of 4 rows B got wrong, and both on 10 rows. Over the 160 samples as independent pairs
that is 32 against 16 (McNemar p 0.0293, interval 0.016–0.184); by row it is 8 against 4
(McNemar's exact test on the rows: p = 2 · 794/4096 = 0.388, interval −0.069–0.269).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from sieval.analysis.compare import compare_runs
from sieval.cli.main import app
from sieval.runner import RunOptions, arun_eval, parse_config
from sieval.store.records import decode_record

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


def config(temperature: float) -> Any:
    return parse_config(
        "models: [{name: m, endpoint: embedded, dialect: openai_chat, concurrency_limit: 8}]\n"
        "tasks: [{name: math500, n: 40, options: {repeats: 4, temperature: "
        f"{temperature}, max_tokens: 8}}}}]"
    )


def rewrite(run: Path, right: Any) -> None:
    """Each record's ``accuracy`` set by its row's position among the rows."""
    unit = run / "m" / "math500" / "records.jsonl"
    records = [msgspec.to_builtins(decode_record(line)) for line in unit.read_bytes().splitlines()]
    order = list(dict.fromkeys(r["sample_id"].split("#r")[0] for r in records))
    for record in records:
        row = order.index(record["sample_id"].split("#r")[0])
        record["metrics"]["accuracy"] = 1.0 if right(row) else 0.0
    unit.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture(scope="module")
async def pair(tmp_path_factory: Any) -> tuple[Path, Path]:
    """A at temperature 0.8, B at 0.7 (one input differs, as compare and power must say)."""
    out = tmp_path_factory.mktemp("repeats")
    runs = []
    for name, temperature in (("a", 0.8), ("b", 0.7)):
        options = RunOptions(out=out, run_name=name, data_dir=DATA, preflight=False)
        runs.append((await arun_eval(config(temperature), options)).run_dir)
    a, b = runs
    rewrite(a, lambda row: 8 <= row < 22)  # right on rows 8-21
    rewrite(b, lambda row: row < 8 or 12 <= row < 22)  # right on rows 0-7 and 12-21
    return a, b


def test_the_pair_is_tested_and_its_interval_clustered_by_row(pair: tuple[Path, Path]) -> None:
    (task,) = compare_runs(*pair)["tasks"]
    assert (task["paired"], task["rows"], task["repeats"]) == (160, 40, True)
    accuracy = task["metrics"]["accuracy"]
    assert accuracy["diff"] == pytest.approx(0.1)
    assert accuracy["ci"] == pytest.approx([-0.069011, 0.269011], abs=1e-6)  # was 0.016–0.184
    assert accuracy["estimator"] == "clustered(cr1, 40 clusters)"
    assert accuracy["mcnemar"] is None  # McNemar over samples would count repeats as pairs
    test = accuracy["test"]
    assert (test["name"], test["unit"], test["n"], test["method"]) == (
        "sign-flip", "rows", 40, "exact",
    )  # fmt: skip
    assert test["p_value"] == 2 * 794 / 4096  # was 0.0293
    assert (test["b_better"], test["a_better"], test["tied"]) == (8, 4, 28)
    mde = accuracy["mde"]
    assert (mde["method"], mde["n"], mde["repeats"], mde["samples"]) == ("rows", 40, 4, 160)


def test_the_table_says_what_its_columns_are(pair: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(app, ["compare", str(pair[0]), str(pair[1])], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "160 paired samples (40 rows)" in text
    assert "+0.1000 │ -0.069–0.269" in text and "│ 0.388 │" in text
    assert "a, b: each run's mean over the 160 samples (40 rows) scored in both runs" in text
    assert "p: the sign-flip test on rows" in text
    assert "accuracy by row (a row's repeats summed): more right in a 4, in b 8, tied 28" in text


def power(*args: str) -> str:
    result = CliRunner().invoke(app, ["power", *args], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_power_from_repeats_counts_rows_against_the_tasks_rows(pair: tuple[Path, Path]) -> None:
    runs = ["--from", str(pair[0]), str(pair[1]), "--data-dir", str(DATA)]
    answer = json.loads(power(*runs, "--delta", "0.1", "--format", "json"))
    assert (answer["method"], answer["unit"], answer["repeats"]) == ("rows", "rows", 4)
    assert answer["dataset"]["size"] == 500  # MATH-500's rows
    # ψ 0.3 and every row's repeats alike (ICC taken as 1): a row says what one sample does, so
    # n = ((1.96·√0.30 + 0.8416·√0.29) / 0.1)² = 233.3 rows; before, 249 "samples"
    assert answer["icc"] == 1.0 and answer["needed"] == 234
    text = power(*runs, "--delta", "0.1")
    assert "rows needed to detect Δ = +0.1: 234" in text
    assert "936 samples at 4 repeats a row" in text and "dataset: 500 rows" in text
    assert "160 pairs (40 rows of 4 repeats)" in text


def test_power_from_says_how_the_runs_inputs_differ_and_why_no_mde(
    pair: tuple[Path, Path],
) -> None:
    runs = ["--from", str(pair[0]), str(pair[1]), "--data-dir", str(DATA)]
    text = power(*runs)
    assert "what differs between the runs' inputs (1):" in text
    assert "temperature" in text
    # a metric the runs score alike: the comparison's own reason, not a generic one
    same = power(*runs, "--metric", "truncated")
    assert "smallest detectable difference with 40 rows" in same
    assert "none: the runs score every sample the same" in same
