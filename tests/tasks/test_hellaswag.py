"""hellaswag_kshot_ppl: lm-eval query text, shot sources, requests, acc / acc_norm."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest

from sieval.tasks.base import TaskConfig
from sieval.tasks.hellaswag_kshot_ppl import TASK, preprocess, query

from .helpers import prompt_of, scored


def item(ctx_a: str, ctx_b: str, derived: bool = False) -> tuple[dict[str, object], str]:
    """A row and where it was read (the derived text, or JSON Lines)."""
    row = {"activity_label": "Label", "ctx_a": ctx_a, "ctx_b": ctx_b, "endings": ["e"] * 4,
           "label": "0"}  # fmt: skip
    return row, "hellaswag_val_full.txt.bz2:1" if derived else "hellaswag_val.jsonl:1"


def test_preprocess() -> None:
    assert preprocess(" How to x [title] Do y. [step] He  goes. ") == "How to x. Do y. He goes."
    assert preprocess("a [header] b [substeps] c") == "a b c"


def test_query_original_and_derived() -> None:
    assert query(*item("A man is on a roof.", "he IS")) == "Label: A man is on a roof. He is"
    assert query(*item("A man is on a roof.", "")) == "Label: A man is on a roof."
    assert query(*item("A man is on a roof. he", "", derived=True)) == (
        "Label: A man is on a roof. He"
    )
    assert query(*item("the man", "", derived=True)) == "Label: The man"


def test_real_first_sample_and_validation_shots(data_dir: Path) -> None:
    config = TaskConfig(name=TASK.name)
    samples = list(TASK.load(data_dir, config))
    first = samples[0]
    assert first.id == "validation/0" and first.gold == 3
    assert first.data["query"] == "Roof shingle removal: A man is sitting on a roof. He"
    assert first.data["choices"][3] == "starts pulling up roofing on a roof."
    common = samples[0].data["shot_ids"]
    assert len(common) == 10
    for sample in samples:
        shots = sample.data["shot_ids"]
        assert sample.id not in shots and len(set(shots)) == 10
    replaced = [s for s in samples if s.data["shot_ids"] != common]
    assert sorted(s.id for s in replaced) == sorted(common)  # only the shots themselves differ
    for sample in replaced:
        assert sample.data["fewshot"].count("\n\n") == 10
    assert list(TASK.load(data_dir, config))[5].data["shot_ids"] == samples[5].data["shot_ids"]
    assert [p.name for p in TASK.data_files(data_dir)] == ["hellaswag_val_full.txt.bz2"]


def write(tmp_path: Path, train: bool) -> Path:
    folder = tmp_path / "hellaswag"
    folder.mkdir()
    with bz2.open(folder / "hellaswag_val_full.txt.bz2", "wt", encoding="utf-8") as fh:
        fh.write("Cooking: A cook cuts. she\n1\nsings.\nfries it.\nsleeps.\nflies.\n")
        fh.write("Running: A man runs.\n0\nHe stops.\nHe flies.\nHe swims.\nHe sings.\n")
    if train:
        row = {"activity_label": "Golf", "ctx_a": "A man swings.", "ctx_b": "the ball",
               "endings": ["flies [title] far.", "x", "y", "z"], "label": 0}  # fmt: skip
        (folder / "hellaswag_train.jsonl").write_text(json.dumps(row) + "\n")
    return tmp_path


def test_exact_prompt_with_a_validation_shot(tmp_path: Path) -> None:
    """Shots come from validation (no train split is stored; a train file beside it is not
    read), never the item itself."""
    data_dir = write(tmp_path, train=True)
    config = TaskConfig(name=TASK.name, num_fewshot=1)
    sample = next(iter(TASK.load(data_dir, config)))
    assert sample.data["shot_ids"] == ["validation/1"]
    requests = TASK.requests(sample, config)
    assert list(requests) == ["choice:0", "choice:1", "choice:2", "choice:3"]
    assert prompt_of(requests["choice:1"]) == (
        "Running: A man runs. He stops.\n\nCooking: A cook cuts. She fries it."
    )
    assert len(TASK.data_files(data_dir)) == 1


def test_validation_shots_exclude_the_item(tmp_path: Path) -> None:
    data_dir = write(tmp_path, train=False)
    samples = list(TASK.load(data_dir, TaskConfig(name=TASK.name, num_fewshot=1)))
    assert [s.data["shot_ids"] for s in samples] == [["validation/1"], ["validation/0"]]
    assert samples[0].data["fewshot"] == "Running: A man runs. He stops.\n\n"
    zero = list(TASK.load(data_dir, TaskConfig(name=TASK.name, num_fewshot=0)))
    assert zero[0].data["fewshot"] == "" and zero[0].data["shot_ids"] == []


def test_acc_and_acc_norm(tmp_path: Path) -> None:
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    sample = next(iter(TASK.load(write(tmp_path, train=False), config)))
    requests = TASK.requests(sample, config)
    context = len("Cooking: A cook cuts. She")
    # sums -1.0 / -1.47 / -4.0 / -3.0 -> acc 0.
    # acc_norm divides by len(ending), the preprocessed ending without its leading space
    # (lm-eval): "sings." 6, "fries it." 9, "sleeps." 7, "flies." 6 -> -0.1667 / -0.1633 /
    # -0.57 / -0.5 -> 1, the gold. (Over the scored " sings." 7 and " fries it." 10 it would be
    # -0.1429 / -0.147 -> 0.)
    logprobs = (-1.0, -1.47, -4.0, -3.0)
    responses = {name: scored(prompt_of(r), context, lp)
                 for (name, r), lp in zip(requests.items(), logprobs, strict=True)}  # fmt: skip
    result = TASK.score(sample, responses, config)
    assert result.metrics == {"acc": 0.0, "acc_norm": 1.0}
    assert result.prediction == 1
    assert [c["norm_chars"] for c in result.channels["choices"]] == [6, 9, 7, 6]
    assert TASK.aggregate([(sample, result)])["acc_norm"] == 1.0


def derived(tmp_path: Path, *items: tuple[str, int, list[str]]) -> Path:
    """A derived HellaSwag file of ``(head, label, endings)`` items (six lines each)."""
    folder = tmp_path / "hellaswag"
    folder.mkdir()
    lines = [line for head, label, endings in items for line in (head, str(label), *endings)]
    with bz2.open(folder / "hellaswag_val_full.txt.bz2", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return folder / "hellaswag_val_full.txt.bz2"


def test_acc_norm_divides_by_the_preprocessed_ending(tmp_path: Path) -> None:
    # lm-eval's choices are preprocess(ending); acc_norm divides by their length.
    derived(tmp_path, ("Cooking: A cook cuts. she", 1, ["x [step] y", "abcdef", "u", "v"]))
    config = TaskConfig(name=TASK.name, num_fewshot=0)
    (sample,) = list(TASK.load(tmp_path, config))
    requests = TASK.requests(sample, config)
    assert prompt_of(requests["choice:0"]) == "Cooking: A cook cuts. She x y"
    context = len("Cooking: A cook cuts. She")
    # "x y" (3 chars) -1.0 -> -0.333; "abcdef" (6) -1.9 -> -0.317: acc_norm 1, the gold.
    # By the raw ending (10 chars, -0.1) or the scored " x y" (4, -0.25 vs " abcdef" -0.27)
    # it would be 0.
    logprobs = (-1.0, -1.9, -5.0, -5.0)
    responses = {name: scored(prompt_of(r), context, lp)
                 for (name, r), lp in zip(requests.items(), logprobs, strict=True)}  # fmt: skip
    result = TASK.score(sample, responses, config)
    assert result.metrics == {"acc": 0.0, "acc_norm": 1.0}


def test_an_ending_that_preprocesses_to_nothing_is_refused(tmp_path: Path) -> None:
    from sieval.errors import ConfigError

    path = derived(
        tmp_path, ("L: A. b", 0, ["e", "f", "g", "h"]), ("L: A. b", 0, ["e", "[step]", "g", "h"])
    )
    with pytest.raises(
        ConfigError, match="ending 1 .* is empty after lm-eval's preprocess"
    ) as info:
        list(TASK.load(tmp_path, TaskConfig(name=TASK.name, num_fewshot=0)))
    assert info.value.path == f"{path}:7"


@pytest.mark.parametrize("k", [2, 5])
def test_too_many_validation_shots(tmp_path: Path, k: int) -> None:
    from sieval.errors import ConfigError

    with pytest.raises(ConfigError, match="shot pool"):
        TASK.load(write(tmp_path, train=False), TaskConfig(name=TASK.name, num_fewshot=k))
