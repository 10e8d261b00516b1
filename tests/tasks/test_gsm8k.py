"""gsm8k_kshot_base_gen: prompt, shots, greedy request, strict vs flexible exact match."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from sieval.errors import ConfigError, ContractViolation
from sieval.ir.request import Sampling
from sieval.ir.response import Response
from sieval.tasks.base import COMPLETION_MODEL, TaskConfig
from sieval.tasks.gsm8k_kshot_base_gen import TASK
from sieval.tasks.registry import TASKS

from .helpers import generated, prompt_of


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    folder = tmp_path / "gsm8k"
    folder.mkdir()
    train = [{"question": f"T{i}?", "answer": f"{i}+1 = <<{i}+1={i + 1}>>{i + 1}\n#### {i + 1}"}
             for i in range(4)]  # fmt: skip
    test = [{"question": "How many?", "answer": "2*500 = 1000\n#### 1,000"}]
    for split, rows in (("train", train), ("test", test)):
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_exact_prompt_and_request(tiny: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=2, seed=3)
    (sample,) = list(TASK.load(tiny, config))
    assert (sample.id, sample.gold) == ("test/0", "1000")
    a, b = (int(s.split("/")[1]) for s in sample.data["shot_ids"])
    expected = (
        f"Question: T{a}?\nAnswer: {a}+1 = <<{a}+1={a + 1}>>{a + 1}\n#### {a + 1}\n\n"
        f"Question: T{b}?\nAnswer: {b}+1 = <<{b}+1={b + 1}>>{b + 1}\n#### {b + 1}\n\n"
        "Question: How many?\nAnswer:"
    )
    requests = TASK.requests(sample, config)
    assert list(requests) == ["gen"]
    assert prompt_of(requests["gen"]) == expected
    assert requests["gen"].sampling == Sampling(
        temperature=0.0, max_tokens=256, stop=("Question:", "</s>", "<|im_end|>")
    )
    longer = TaskConfig(name=TASK.name, options={"max_tokens": 512})
    assert TASK.requests(sample, longer)["gen"].sampling.max_tokens == 512
    with pytest.raises(ConfigError):
        list(TASK.load(tiny, TaskConfig(name=TASK.name, options={"max_tokens": 0})))


def test_real_data_shots(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name)
    samples = list(TASK.load(data_dir, config))
    assert len(samples) == 1319 and samples[0].gold == "18"
    shots = samples[0].data["shot_ids"]
    assert len(shots) == 8 and all(s.startswith("train/") for s in shots)
    assert next(iter(TASK.load(data_dir, config))).data["shot_ids"] == shots
    assert len(TASK.data_files(data_dir)) == 2


def test_strict_and_flexible_disagree(tiny: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    (sample,) = list(TASK.load(tiny, config))
    ended = {"censored": 0.0}  # each answer ended (finish_reason "stop"): none censored
    cases = {
        " 2*500 = 1,000\n#### 1,000": {"exact_match": 1.0, "flexible_exact_match": 1.0, **ended},
        " 2*500 = 1000 apples.": {"exact_match": 0.0, "flexible_exact_match": 1.0, **ended},
        " #### 1000\nThen 3 more.": {"exact_match": 1.0, "flexible_exact_match": 0.0, **ended},
    }
    results = []
    for text, metrics in cases.items():
        result = TASK.score(sample, {"gen": generated(text)}, config)
        assert result.metrics == metrics, text
        results.append((sample, result))
    assert TASK.aggregate(results) == {
        "n": 3, "exact_match": 2 / 3, "flexible_exact_match": 2 / 3,
        "censored_rate": 0.0}  # fmt: skip
    with pytest.raises(ContractViolation):
        TASK.score(sample, {"gen": Response(choices=())}, config)


@pytest.mark.parametrize(
    ("text", "exact", "flexible"),
    [
        # lm-eval's strict-match wants exactly "#### " and a digit, sign, "." or "," run
        (" ####1000", 0.0, 1.0),
        (" #### $1,000", 0.0, 1.0),
        (" ####\n1000", 0.0, 1.0),
        (" #### 1,000.", 1.0, 1.0),
        # flexible-extract keeps "." inside a number and takes the last match
        (" 1.000 apples", 0.0, 0.0),
        (" It is 1000 or .1000", 0.0, 0.0),
        (" #### 1000\nThen 1000.", 1.0, 1.0),
    ],
)
def test_exact_match_is_lm_evals(tiny: Path, text: str, exact: float, flexible: float) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    (sample,) = list(TASK.load(tiny, config))
    result = TASK.score(sample, {"gen": generated(text)}, config)
    assert result.metrics == {"exact_match": exact, "flexible_exact_match": flexible,
                              "censored": 0.0}  # fmt: skip
    assert result.prediction == result.channels["strict"]


@pytest.mark.parametrize("name", ["gsm8k_kshot_base_gen", "gsm8k_0shot_gen"])
def test_sampled_and_repeated_with_pass_and_maj_at_k(data_dir: Path, name: str) -> None:
    task = TASKS[name]
    config = TaskConfig(name=name, seed=7, options={"repeats": 3, "temperature": 0.7})
    samples = list(task.load(data_dir, config))[:6]
    assert [s.id for s in samples] == [
        "test/0#r0", "test/0#r1", "test/0#r2", "test/1#r0", "test/1#r1", "test/1#r2",
    ]  # fmt: skip
    sent = [task.requests(s, config)["gen"].sampling for s in samples[:3]]
    assert [(s.temperature, s.seed) for s in sent] == [(0.7, 7), (0.7, 8), (0.7, 9)]
    greedy = task.requests(samples[0], TaskConfig(name=name, options={"repeats": 2}))["gen"]
    assert greedy.sampling.temperature == 0.0 and greedy.sampling.seed is msgspec.UNSET
    # row 0 (gold 18): right once, then 17 twice; row 1 (gold 3): never right
    replies = [" #### 18", " #### 17", " #### 17", " #### 4", " #### 5", " #### 6"]
    results = [
        (s, task.score(s, {"gen": generated(r)}, config))
        for s, r in zip(samples, replies, strict=True)
    ]
    figures = task.aggregate(results)
    assert figures["repeats"] == 3
    assert figures["pass@1"] == pytest.approx((1 / 3 + 0) / 2)
    assert figures["pass@2"] == pytest.approx((1 - 1 / 3) / 2)  # 1 - C(2,2)/C(3,2)
    assert figures["maj@1"] == pytest.approx(0.5)  # the first answer of row 0 is right
    assert figures["maj@2"] == pytest.approx(0.5)  # 18 and 17 tie: the first seen wins
    assert task.cluster_by == "item" and task.keeps_predictions
    assert "the options temperature, max_tokens, repeats replace" in task.protocol_for(
        COMPLETION_MODEL
    )
    with pytest.raises(ConfigError, match="option temperature must be a finite number >= 0"):
        next(iter(task.load(data_dir, TaskConfig(name=name, options={"temperature": -1}))))
