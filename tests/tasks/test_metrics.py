"""The metric arithmetic against independent oracles: lm-eval 0.4.13's own metric functions on
fixed log-likelihoods (recorded by scripts/lm_eval_strings.py in its venv:
tests/fixtures/lm_eval/0.4.13/metrics.json), and small cases computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sieval.scoring import argmax, pick_acc_norm
from sieval.scoring.continuation import ContinuationScore
from sieval.tasks.base import Sample, SampleResult, TaskConfig
from sieval.tasks.families.base import pooled_mean
from sieval.tasks.families.choice import _mass
from sieval.tasks.registry import TASKS

ORACLE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "lm_eval" / "0.4.13" / "metrics.json").read_text()
)


def score(ll: float, text: str) -> ContinuationScore:
    return ContinuationScore(
        logprob_sum=ll, n_tokens=1, n_chars=len(text) + 1, n_bytes=len(text) + 1, is_greedy=None
    )


@pytest.mark.parametrize("case", ORACLE["choice"])
def test_acc_acc_norm_and_mc2_are_lm_evals(case: dict) -> None:
    scores = [score(ll, c) for ll, c in zip(case["lls"], case["choices"], strict=True)]
    assert argmax(case["lls"]) == case["argmax"]
    assert pick_acc_norm(scores, case["choices"]) == case["argmax_norm"]
    assert _mass(case["lls"], case["labels"]) == case["mc2"]  # to the bit


def results(**metrics: list[float]) -> list[tuple[Sample, SampleResult]]:
    names = list(metrics)
    rows = zip(*metrics.values(), strict=True)
    return [
        (
            Sample(id=str(i), data={}, gold=None),
            SampleResult(prediction=None, gold=None, metrics=dict(zip(names, row, strict=True))),
        )
        for i, row in enumerate(rows)
    ]


def test_perplexity_is_lm_evals() -> None:
    items = ORACLE["perplexity"]["items"]
    task = TASKS["lambada_openai"]
    figures = task.aggregate(results(acc=[1.0] * len(items), loglikelihood=items))
    assert figures["perplexity"] == ORACLE["perplexity"]["value"]


def test_word_and_byte_perplexity_and_bits_per_byte_are_lm_evals() -> None:
    r = ORACLE["rolling"]
    figures = TASKS["wikitext"].aggregate(
        results(
            loglikelihood=r["lls"],
            words=[float(w) for w in r["words"]],
            bytes=[float(b) for b in r["bytes"]],
        )
    )
    for name in ("word_perplexity", "byte_perplexity", "bits_per_byte"):
        assert figures[name] == r[name], name


def test_mutual_information_by_hand() -> None:
    """Conditional -1.0, -2.0; after the BOS alone -3.0, -2.5: acc picks 0, mutual
    information (-1 + 3 = 2 against -2 + 2.5 = 0.5) picks 0; with priors -0.5, -2.5 it picks 1
    (-0.5 against 0.5)."""
    cond = [-1.0, -2.0]
    assert argmax([c - p for c, p in zip(cond, [-3.0, -2.5], strict=True)]) == 0
    assert argmax([c - p for c, p in zip(cond, [-0.5, -2.5], strict=True)]) == 1


def test_mmlus_acc_is_lm_evals_group_aggregate() -> None:
    """Per subject means weighted by size (lm-eval's aggregate_subtask_metrics): 2/3 and 1/4
    over sizes 3 and 4 -> (2/3*3 + 1/4*4) / 7 = 3/7."""
    assert pooled_mean([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]]) == pytest.approx(3 / 7)
    samples = [
        (
            Sample(id=f"{s}/{i}", data={}, gold=None, group=s),
            SampleResult(prediction=None, gold=None, metrics={"acc": v}),
        )
        for s, values in (("anatomy", [1.0, 0.0]), ("virology", [1.0, 1.0, 0.0]))
        for i, v in enumerate(values)
    ]
    figures = TASKS["mmlu"].aggregate(samples)
    assert figures["acc"] == pytest.approx(3 / 5)
    assert figures["by_category"]["stem"] == {"n": 2, "acc": 0.5}  # lm-eval files anatomy in STEM
    assert figures["by_category"]["other"]["acc"] == pytest.approx(2 / 3)
    assert figures["by_subject"]["virology"]["n"] == 3
    assert math.isclose(figures["acc"], (0.5 * 2 + 2 / 3 * 3) / 5)
    assert TaskConfig(name="mmlu").seed == 1234  # lm-eval's fewshot_random_seed
