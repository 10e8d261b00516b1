"""arc_easy_kshot_ppl: prompt, shots, requests, acc / acc_norm / acc_uncond."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sieval.errors import ConfigError, ContractViolation
from sieval.ir.request import Sampling, Scoring
from sieval.tasks.arc_easy_kshot_ppl import TASK
from sieval.tasks.base import TaskConfig

from .helpers import prompt_of, scored


def row(i: int, question: str, choices: list[str], answer: int) -> dict[str, object]:
    labels = ["A", "B", "C", "D", "E"][: len(choices)]
    return {"id": f"q{i}", "question": question, "answerKey": labels[answer],
            "choices": {"text": choices, "label": labels}}  # fmt: skip


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    folder = tmp_path / "arc_easy"
    folder.mkdir()
    train = [row(i, f"Train {i}?", [f"wrong {i}", f"right {i}"], 1) for i in range(5)]
    test = [row(9, "What is hot?", ["ice", "fire", "snow"], 1)]
    for split, rows in (("train", train), ("test", test)):
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (folder / f"ARC-Easy-{split}.jsonl").write_text(text)
    return tmp_path


def test_prompt_is_exact(tiny: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=2, seed=7)
    (sample,) = list(TASK.load(tiny, config))
    a, b = (int(i[1:]) for i in sample.data["shot_ids"])
    expected = (
        f"Question: Train {a}?\nAnswer: right {a}\n\n"
        f"Question: Train {b}?\nAnswer: right {b}\n\n"
        "Question: What is hot?\nAnswer:"
    )
    requests = TASK.requests(sample, config)
    assert list(requests) == [f"{kind}:{i}" for kind in ("choice", "uncond") for i in range(3)]
    assert prompt_of(requests["choice:1"]) == expected + " fire"
    assert prompt_of(requests["uncond:2"]) == "Answer: snow"
    for request in requests.values():
        assert request.sampling == Sampling(temperature=0.0, max_tokens=1)
        assert request.scoring == Scoring(input_logprobs=True)


def test_zero_shot_and_bad_configs(tiny: Path) -> None:
    (sample,) = list(TASK.load(tiny, TaskConfig(name=TASK.name, num_fewshot=0)))
    assert sample.data["fewshot"] == "" and sample.data["shot_ids"] == []
    with pytest.raises(ConfigError, match="only 5"):
        list(TASK.load(tiny, TaskConfig(name=TASK.name, num_fewshot=6)))
    with pytest.raises(ConfigError, match=">= 0"):
        list(TASK.load(tiny, TaskConfig(name=TASK.name, num_fewshot=-1)))
    with pytest.raises(ConfigError, match="no option top_k"):
        list(TASK.load(tiny, TaskConfig(name=TASK.name, options={"top_k": 5})))


def test_shots_are_seeded_and_from_train(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name)
    samples = list(TASK.load(data_dir, config))
    assert len(samples) == 2376 and samples[0].id == "Mercury_417466"
    shots = samples[0].data["shot_ids"]
    assert len(shots) == 25 and all(s.data["shot_ids"] == shots for s in samples)
    assert not set(shots) & {s.id for s in samples}
    assert next(iter(TASK.load(data_dir, config))).data["shot_ids"] == shots
    assert (
        next(iter(TASK.load(data_dir, TaskConfig(name=TASK.name, seed=1)))).data["shot_ids"]
        != shots
    )
    assert {p.name for p in TASK.data_files(data_dir)} == {
        "ARC-Easy-train.jsonl", "ARC-Easy-test.jsonl"}  # fmt: skip


def test_acc_acc_norm_and_acc_uncond_can_all_differ(tiny: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    (sample,) = list(TASK.load(tiny, config))
    sample = type(sample)(id=sample.id, data={**sample.data, "choices": ["a", "bbbbbb", "cc"]},
                          gold=2)  # fmt: skip
    requests = TASK.requests(sample, config)
    context = len("Question: What is hot?\nAnswer:")
    # sums -1.0 / -3.0 / -1.2 -> acc 0.
    # acc_norm divides by len(choice), the choice without its leading space (lm-eval):
    # over 1 / 6 / 2 chars -> -1.0 / -0.5 / -0.6 -> 1. (Over the scored " a" / " bbbbbb" /
    # " cc", 2 / 7 / 3 chars, it would be -0.5 / -0.43 / -0.4 -> 2.)
    # unconditional -0.2 / -0.5 / -0.9 -> differences -0.8 / -2.5 / -0.3 -> acc_uncond 2
    cond, uncond = (-1.0, -3.0, -1.2), (-0.2, -0.5, -0.9)
    responses = {f"choice:{i}": scored(prompt_of(requests[f"choice:{i}"]), context, lp)
                 for i, lp in enumerate(cond)}  # fmt: skip
    for i, lp in enumerate(uncond):
        responses[f"uncond:{i}"] = scored(prompt_of(requests[f"uncond:{i}"]), 7, lp)
    result = TASK.score(sample, responses, config)
    assert result.metrics == {"acc": 0.0, "acc_norm": 0.0, "acc_uncond": 1.0}
    assert (result.prediction, result.gold) == (1, 2)
    # the record keeps both lengths: what was scored (" bbbbbb") and what acc_norm divided by
    assert result.channels["choices"][1]["n_chars"] == 7
    assert result.channels["choices"][1]["norm_chars"] == 6
    aggregate = TASK.aggregate([(sample, result)])
    assert aggregate == {"n": 1, "acc": 0.0, "acc_norm": 0.0, "acc_uncond": 1.0}
    assert TASK.aggregate([]) == {"n": 0}

    responses["choice:0"] = scored(prompt_of(requests["choice:0"]), context - 1, -1.0)
    with pytest.raises(ContractViolation, match="merged"):
        TASK.score(sample, responses, config)
