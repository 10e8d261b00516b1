"""The hub fallback: when none of a split's files is in the data directory, rows come from the
hub dataset and config lm-eval reads, checked as local rows are, in the same shape; without the
optional ``datasets`` package (or offline) it is a ``ConfigError`` naming every file looked for
and both fixes.

The hub is faked (``datasets.load_dataset`` replaced): these tests prove which dataset, config and
split are asked for and what is done with the reply, not the hub's contents.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from sieval.data.registry import SOURCES, get_source
from sieval.errors import ConfigError


def first_part(dataset: str) -> tuple[str, str | None]:
    source = get_source(dataset)
    return source.splits[0], source.subsets[0] if source.subset_required else None


@pytest.mark.parametrize("dataset", sorted(SOURCES))
def test_without_files_or_datasets_the_error_says_where_and_how(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dataset: str
) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # the import fails
    source = get_source(dataset)
    split, subset = first_part(dataset)
    with pytest.raises(ConfigError) as info:
        source.rows(tmp_path, split, subset)
    message = info.value.message
    looked = source.files(tmp_path, split, subset)
    assert message.startswith(f"{dataset} data not found (looked for {looked[0]}")
    # all of a split's files (piqa: two), the one subject asked for at a time (mmlu: 57 of them)
    assert all(str(p) in message for p in (looked[:1] if dataset == "mmlu" else looked))
    assert "'datasets' is not installed" in message
    assert f"--data-dir (or $SIEVAL_DATA_DIR) at a directory holding {dataset}/" in message
    assert f"fetch {source.hub}" in message


def fake_hub(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]]) -> list[Any]:
    calls: list[Any] = []

    def load_dataset(path: str, name: str | None, split: str) -> list[dict[str, Any]]:
        calls.append((path, name, split))
        return rows

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    return calls


CHOICES = {"text": ["a", "b"], "label": ["A", "B"]}
GPQA = {"Question": "placeholder q", "Correct Answer": "x", "Incorrect Answer 1": "y",
        "Incorrect Answer 2": "z", "Incorrect Answer 3": "w", "Record ID": "r",
        "Self-reported question-writing time (minutes)": 12.5}  # fmt: skip
HELLASWAG = {"ind": 24, "activity_label": "L", "ctx_a": "A man.", "ctx_b": "he", "ctx": "A man. he",
             "endings": ["a", "b", "c", "d"], "source_id": "s", "split": "val",
             "split_type": "indomain", "label": "3"}  # fmt: skip
IFEVAL = {"key": 1, "prompt": "p", "instruction_id_list": ["a", "b"],
          "kwargs": [{"n": None, "m": None}, {"n": 3, "m": None}]}  # fmt: skip
MBPP = {"source_file": "f", "task_id": 11, "prompt": "p", "code": "c", "test_imports": [],
        "test_list": ["assert 1"]}  # fmt: skip
MMLU_PRO = {"question_id": 1, "question": "q", "options": ["a", "b"], "answer": "B",
            "answer_index": 1, "cot_content": "", "category": "law", "src": "s"}  # fmt: skip
TRUTHFULQA = {"question": "q", "mc1_targets": {"choices": ["a", "b"], "labels": [1, 0]},
              "mc2_targets": {"choices": ["a", "b"], "labels": [1, 1]}}  # fmt: skip

# (dataset, split, subset, the hub row, (path, name, split) asked for, the row given, if changed)
CASES: list[tuple[str, str, str | None, dict[str, Any], tuple[Any, ...], dict[str, Any] | None]] = [
    ("arc_easy", "test", None, {"id": "x", "question": "q", "choices": CHOICES, "answerKey": "B"},
     ("allenai/ai2_arc", "ARC-Easy", "test"), None),
    ("arc_challenge", "train", None, {"id": "x", "question": "q", "choices": CHOICES,
                                      "answerKey": "A"},
     ("allenai/ai2_arc", "ARC-Challenge", "train"), None),
    ("gsm8k", "train", None, {"question": "q", "answer": "so\n#### 4"},
     ("openai/gsm8k", "main", "train"), None),
    ("hellaswag", "validation", None, HELLASWAG, ("Rowan/hellaswag", None, "validation"), None),
    ("mmlu", "dev", "anatomy", {"question": "q", "subject": "anatomy", "choices": list("wxyz"),
                                "answer": 3},
     ("cais/mmlu", "anatomy", "dev"), None),
    ("winogrande", "train", None, {"sentence": "A _ b", "option1": "x", "option2": "y",
                                   "answer": "1"},
     ("allenai/winogrande", "winogrande_xl", "train"), None),
    ("piqa", "validation", None, {"goal": "g", "sol1": "a", "sol2": "b", "label": 1},
     ("baber/piqa", None, "validation"), None),
    ("openbookqa", "test", None, {"id": "7-1", "question_stem": "s", "choices": CHOICES,
                                  "answerKey": "A"},
     ("allenai/openbookqa", "main", "test"), None),
    ("sciq", "validation", None, {"question": "q", "distractor3": "c", "distractor1": "a",
                                  "distractor2": "b", "correct_answer": "d", "support": ""},
     ("allenai/sciq", None, "validation"), None),
    ("boolq", "validation", None, {"question": "q", "passage": "p", "idx": 0, "label": 1},
     ("aps/super_glue", "boolq", "validation"), None),
    ("truthfulqa_mc", "validation", None, TRUTHFULQA,
     ("truthfulqa/truthful_qa", "multiple_choice", "validation"), None),
    ("lambada_openai", "test", None, {"text": "a b"},
     ("EleutherAI/lambada_openai", "default", "test"), None),
    ("wikitext", "validation", None, {"page": " = A = \n"},
     ("EleutherAI/wikitext_document_level", "wikitext-2-raw-v1", "validation"), None),
    ("ifeval", "train", None, IFEVAL, ("google/IFEval", None, "train"),
     {**IFEVAL, "kwargs": [{}, {"n": 3}]}),
    ("bbh", "test", "snarks", {"input": "i", "target": "(A)"},
     ("SaylorTwift/bbh", "snarks", "test"), None),
    ("math500", "test", None, {"problem": "p", "solution": "s", "answer": "1", "subject": "A",
                               "level": 2, "unique_id": "u"},
     ("HuggingFaceH4/MATH-500", "default", "test"), None),
    ("aime2024", "train", None, {"ID": "2024-I-1", "Problem": "p", "Solution": "s", "Answer": 204},
     ("Maxwell-Jia/AIME_2024", None, "train"), None),
    ("aime2025", "test", None, {"problem": "p", "answer": "70", "id": "0"},
     ("math-ai/aime25", None, "test"), {"problem": "p", "answer": 70, "id": "0"}),
    ("gpqa_diamond", "train", None, GPQA, ("Idavidrein/gpqa", "gpqa_diamond", "train"), None),
    ("mmlu_pro", "test", "law", MMLU_PRO, ("TIGER-Lab/MMLU-Pro", None, "test"), None),
    ("humaneval", "test", None, {"task_id": "HumanEval/0", "prompt": "p",
                                 "canonical_solution": "c", "test": "t", "entry_point": "f"},
     ("openai/openai_humaneval", None, "test"), None),
    ("mbpp", "test", "sanitized", MBPP, ("google-research-datasets/mbpp", "sanitized", "test"),
     None),
    # stored as one split, test; on the hub (unverified here) the one split is train
    ("mt_bench", "test", None, {"prompt": ["a", "b"], "prompt_id": 81, "category": "writing",
                                "reference": []},
     ("HuggingFaceH4/mt_bench_prompts", None, "train"),
     {"question_id": 81, "category": "writing", "turns": ["a", "b"], "reference": None}),
    ("arena_hard_v2", "test", None, {"uid": "u", "category": "hard_prompt",
                                     "subcategory": "coding", "prompt": "p"},
     ("lmarena-ai/arena-hard-auto", None, "train"), None),
]  # fmt: skip


def test_every_dataset_has_a_hub_case() -> None:
    assert sorted({case[0] for case in CASES}) == sorted(SOURCES)


@pytest.mark.parametrize(("dataset", "split", "subset", "hub", "call", "given"), CASES,
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_the_fallback_asks_for_lm_evals_dataset(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    dataset: str,
    split: str,
    subset: str | None,
    hub: dict[str, Any],
    call: tuple[Any, ...],
    given: dict[str, Any] | None,
) -> None:
    # a field the loader does not know is dropped (GPQA's rows are the hub's whole dicts)
    extra = {} if dataset == "gpqa_diamond" else {"extra": 1}
    calls = fake_hub(monkeypatch, [{**hub, **extra}])
    got = get_source(dataset).rows(tmp_path, split, subset)
    assert calls == [call]
    path, name, asked = call
    where = f"hub {path} ({name}, {asked})" if name else f"hub {path} ({asked})"
    assert got == [(f"{where} row 0", given or hub)]


def test_hub_rows_are_checked_like_local_ones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_hub(monkeypatch, [{**HELLASWAG, "label": "7"}])
    with pytest.raises(ConfigError, match=r"^hub Rowan/hellaswag \(validation\) row 0: label '7'"):
        get_source("hellaswag").rows(tmp_path, "validation")
    fake_hub(monkeypatch, [{"question": "q", "passage": "p", "idx": 0, "label": 2}])
    with pytest.raises(ConfigError, match=r"\(boolq, validation\) row 0: label 2 is not 0 or 1"):
        get_source("boolq").rows(tmp_path, "validation")
    fake_hub(monkeypatch, [{"problem": "p", "answer": "seventy", "id": "0"}])
    with pytest.raises(ConfigError, match=r"row 0: answer 'seventy' is not an integer"):
        get_source("aime2025").rows(tmp_path, "test")
    fake_hub(monkeypatch, [{**GPQA, "Question": None}])
    with pytest.raises(ConfigError, match=r"row 0: column 'Question' is empty or not text"):
        get_source("gpqa_diamond").rows(tmp_path, "train")
    fake_hub(monkeypatch, [{"text": "nospace"}])
    with pytest.raises(ConfigError, match=r"row 0: the text has no last word"):
        get_source("lambada_openai").rows(tmp_path, "test")


def test_mmlu_pro_keeps_the_category_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_hub(monkeypatch, [MMLU_PRO, {**MMLU_PRO, "question_id": 2, "category": "math"}])
    source = get_source("mmlu_pro")
    assert [r["question_id"] for _, r in source.rows(tmp_path, "test", "math")] == [2]
    assert [w for w, _ in source.rows(tmp_path, "test")] == [
        "hub TIGER-Lab/MMLU-Pro (test) row 0", "hub TIGER-Lab/MMLU-Pro (test) row 1",
    ]  # fmt: skip


def test_all_of_mmlu_asks_for_each_subject(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = fake_hub(monkeypatch, [{"question": "q", "subject": "s", "choices": list("abcd"),
                                    "answer": 0}])  # fmt: skip
    rows = get_source("mmlu").rows(tmp_path, "test")
    assert [c[1] for c in calls] == list(get_source("mmlu").subsets)
    assert len(rows) == 57 and rows[0][1]["subject"] == "abstract_algebra"


def test_local_files_win_over_the_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = fake_hub(monkeypatch, [{"text": "from the hub"}])
    (tmp_path / "lambada_openai").mkdir()
    (tmp_path / "lambada_openai/lambada_test.jsonl").write_text('{"text": "from a file"}\n')
    assert get_source("lambada_openai").rows(tmp_path, "test")[0][1] == {"text": "from a file"}
    assert calls == []
