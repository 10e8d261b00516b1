"""mmlu_kshot_clp: hendrycks prompt, interleaved order, one top-k request, letter argmax."""

from __future__ import annotations

from pathlib import Path

import pytest

from sieval.data.mmlu import SUBJECTS
from sieval.errors import ConfigError, ContractViolation
from sieval.ir.request import Sampling, Scoring
from sieval.tasks.base import TaskConfig
from sieval.tasks.mmlu_kshot_clp import TASK

from .helpers import next_token, prompt_of


def test_exact_prompt(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=1)
    sample = next(iter(TASK.load(data_dir, config)))
    assert (sample.id, sample.group, sample.gold) == ("abstract_algebra/0", "abstract_algebra", "B")
    requests = TASK.requests(sample, config)
    assert list(requests) == ["letter"]
    assert prompt_of(requests["letter"]) == (
        "The following are multiple choice questions (with answers) about abstract algebra.\n\n"
        "Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.\n"
        "A. 0\nB. 1\nC. 2\nD. 3\nAnswer: B\n\n"
        "Find the degree for the given field extension Q(sqrt(2), sqrt(3), sqrt(18)) over Q.\n"
        "A. 0\nB. 4\nC. 2\nD. 6\nAnswer:"
    )
    assert requests["letter"].sampling == Sampling(temperature=0.0, max_tokens=1)
    assert requests["letter"].scoring == Scoring(sampled_logprobs=True, sampled_top_k=100)


def test_order_interleaves_subjects_and_uses_five_dev_shots(data_dir: Path) -> None:
    samples = list(TASK.load(data_dir, TaskConfig(name=TASK.name)))
    assert len(samples) == 14042 and len({s.id for s in samples}) == 14042
    assert [s.group for s in samples[:57]] == sorted(SUBJECTS)
    assert samples[57].id == "abstract_algebra/1"
    assert samples[0].data["fewshot"].count("\nAnswer: ") == 5
    assert len(TASK.data_files(data_dir)) == 114


def test_options(data_dir: Path) -> None:
    sample = next(iter(TASK.load(data_dir, TaskConfig(name=TASK.name, num_fewshot=0))))
    assert sample.data["fewshot"].endswith("abstract algebra.\n\n")
    config = TaskConfig(name=TASK.name, options={"top_k": 20})
    assert TASK.requests(sample, config)["letter"].scoring.sampled_top_k == 20
    for bad in ({"top_k": 3}, {"top_k": "many"}, {"topk": 5}):
        with pytest.raises(ConfigError):
            list(TASK.load(data_dir, TaskConfig(name=TASK.name, options=bad)))
    with pytest.raises(ConfigError, match="holds only 5"):
        list(TASK.load(data_dir, TaskConfig(name=TASK.name, num_fewshot=6)))


def test_score_and_aggregate(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    samples = list(TASK.load(data_dir, config))[:3]  # abstract_algebra, anatomy, astronomy
    top = {" C": -0.4, " B": -0.9, "B": -0.3, " A": -2.0, "▁D": -3.0, " the": -0.1}
    results = [(s, TASK.score(s, {"letter": next_token(top)}, config)) for s in samples]
    first = results[0][1]
    assert first.prediction == "B"  # "B" -0.3 beats " C" -0.4 (max over spellings)
    assert first.channels["letter_logprobs"] == {"A": -2.0, "B": -0.3, "C": -0.4, "D": -3.0}
    golds = [s.gold for s in samples]
    aggregate = TASK.aggregate(results)
    assert aggregate["acc"] == sum(g == "B" for g in golds) / 3
    assert set(aggregate["by_subject"]) == {"abstract_algebra", "anatomy", "astronomy"}
    assert aggregate["by_category"]["STEM"]["n"] == 2
    assert aggregate["by_category"]["other"]["n"] == 1


def test_a_missing_letter_fails_the_sample(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    sample = next(iter(TASK.load(data_dir, config)))
    with pytest.raises(
        ContractViolation, match="letter D is not in the top-3 next-token list .its first token is"
    ):
        TASK.score(sample, {"letter": next_token({" A": -1.0, " B": -2.0, " C": -3.0})}, config)
