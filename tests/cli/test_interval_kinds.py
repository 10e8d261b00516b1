"""Every interval the report shows stays in its metric's range and keeps its coverage at 0% and
100%, says its method, and prints by its magnitude (issue 33.7): a repeats headline with every
row wrong, TruthfulQA MC2's probability, LAMBADA's and WikiText's perplexities, run on the
embedded reference server (whose answers are all wrong and whose log-likelihoods are far from a
real model's, which is what these need)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.runner import RunOptions, arun_eval, parse_config

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))

CHAT = """
models: [{name: m, endpoint: embedded, dialect: openai_chat, concurrency_limit: 8}]
tasks: [{name: math500, n: 10, options: {repeats: 4, temperature: 0.8, max_tokens: 8}}]
"""
SCORING = """
models: [{name: m, endpoint: embedded, concurrency_limit: 8}]
tasks: [{name: truthfulqa_mc2, n: 12}, {name: lambada_openai, n: 30}, {name: wikitext, n: 6}]
"""


@pytest.fixture(scope="module")
async def runs(tmp_path_factory: Any) -> dict[str, tuple[Path, dict[str, Any]]]:
    """The chat run (math500's repeats) and the scoring run, by name, each with its results."""
    out = tmp_path_factory.mktemp("kinds")
    found = {}
    for name, config in (("chat", CHAT), ("scoring", SCORING)):
        options = RunOptions(out=out, run_name=name, data_dir=DATA, preflight=False)
        run_dir = (await arun_eval(parse_config(config), options)).run_dir
        report = json.loads((run_dir / "report.json").read_text())
        found[name] = (run_dir, {r["task"]: r for r in report["results"]})
    return found


@pytest.fixture(scope="module")
def run(runs: dict[str, tuple[Path, dict[str, Any]]]) -> tuple[Path, dict[str, Any]]:
    return runs["scoring"][0], {**runs["chat"][1], **runs["scoring"][1]}


def test_a_repeats_headline_with_every_row_wrong_does_not_collapse(
    run: tuple[Path, dict[str, Any]],
) -> None:
    math500 = run[1]["math500"]
    assert math500["metrics"]["accuracy"] == 0.0 and math500["samples"]["scored"] == 40
    spread = math500["intervals"]["accuracy"]
    # no variance to read the repeats' design effect from: the widest, 10 effective samples
    # (as if each row's repeats agreed), Clopper–Pearson's 1 − 0.025^(1/10); was [0, 0]
    assert spread["ci"][0] == 0.0
    assert spread["ci"][1] == pytest.approx(1 - 0.025 ** (1 / 10))
    assert spread["effective_n"] == 10.0
    assert spread["estimator"] == "clustered(cr1, 10 clusters), clopper-pearson at effective n 10"


def test_a_probability_is_bounded_by_its_range(run: tuple[Path, dict[str, Any]]) -> None:
    mc2 = run[1]["truthfulqa_mc2"]
    spread, value = mc2["intervals"]["acc"], mc2["metrics"]["acc"]
    assert 0.0 < value < 1.0
    assert 0.0 <= spread["ci"][0] < value < spread["ci"][1] <= 1.0
    assert spread["estimator"].startswith("clopper-pearson at effective n")  # was clt


def test_the_perplexities_have_intervals_on_the_log_scale(
    run: tuple[Path, dict[str, Any]],
) -> None:
    lambada = run[1]["lambada_openai"]
    ll = lambada["intervals"]["loglikelihood"]
    ppl = lambada["intervals"]["perplexity"]  # none before
    # exp(−x) of the mean log-likelihood's interval, the ends swapped
    assert ppl["ci"] == pytest.approx([math.exp(-ll["ci"][1]), math.exp(-ll["ci"][0])])
    assert ppl["value"] == pytest.approx(lambada["metrics"]["perplexity"])
    assert "delta method on the log scale" in ppl["estimator"]
    wikitext = run[1]["wikitext"]
    for name in ("word_perplexity", "byte_perplexity", "bits_per_byte"):
        spread = wikitext["intervals"][name]
        assert spread["ci"][0] < wikitext["metrics"][name] < spread["ci"][1], name
        assert spread["estimator"].startswith(("exp(-Σloglikelihood/Σ", "-1.4427·Σ")), name


def report(run_dir: Path) -> str:
    result = CliRunner().invoke(app, ["report", str(run_dir)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_report_prints_by_magnitude_and_names_each_method(
    runs: dict[str, tuple[Path, dict[str, Any]]],
) -> None:
    run_dir, results = runs["scoring"]
    text = report(run_dir)
    word = results["wikitext"]["metrics"]["word_perplexity"]
    assert word > 1e6  # the reference server's is huge: twelve digits and four decimals before
    assert f"{word:.4e}" in text and f"{word:.4f}" not in text
    lo, hi = results["wikitext"]["intervals"]["word_perplexity"]["ci"]
    assert f"{lo:.3e}–{hi:.3e}" in text
    assert "95% CI of perplexity: exp(-mean loglikelihood): the mean's clt interval" in text
    assert "95% CI of acc: clopper-pearson at effective n" in text  # MC2's
    chat = report(runs["chat"][0])
    assert "95% CI of accuracy: clustered(cr1, 10 clusters), clopper-pearson" in chat
    assert "0.000–0.308" in chat  # the repeats headline
