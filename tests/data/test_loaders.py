"""Loaders read the shared data, fall back to the hub only when files are absent, and say how to
supply missing data."""

from __future__ import annotations

import bz2
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from sieval.data import (
    SUBJECTS,
    arc_easy_file,
    checksums,
    hellaswag_file,
    load_arc_easy,
    load_gsm8k,
    load_hellaswag,
    load_mmlu,
    resolve_data_dir,
)
from sieval.errors import ConfigError


def test_arc_easy(data_dir: Path) -> None:
    test = load_arc_easy(data_dir, "test")
    assert len(test) == 2376
    assert test[0].id == "Mercury_417466"
    assert test[0].answer == 0
    assert len(load_arc_easy(data_dir, "train")) == 2251
    assert {len(item.choices) for item in test} == {3, 4, 5}
    assert len({item.id for item in test}) == len(test)


def test_hellaswag_derived(data_dir: Path) -> None:
    items = load_hellaswag(data_dir, "validation")
    assert len(items) == 10042
    first = items[0]
    assert (first.activity_label, first.ctx_a, first.ctx_b) == (
        "Roof shingle removal",
        "A man is sitting on a roof. he",
        "",
    )
    assert first.label == 3 and first.derived and len(first.endings) == 4


def test_mmlu(data_dir: Path) -> None:
    assert sorted(p.name.removesuffix("_test.csv") for p in (data_dir / "mmlu/test").iterdir()) == (
        sorted(SUBJECTS)
    )
    assert sum(len(load_mmlu(data_dir, s, "test")) for s in SUBJECTS) == 14042
    first = load_mmlu(data_dir, "abstract_algebra", "test")[0]
    assert first.question.startswith("Find the degree for the given field extension")
    assert (first.options, first.answer) == (("0", "4", "2", "6"), "B")
    assert all(len(load_mmlu(data_dir, s, "dev")) == 5 for s in SUBJECTS)


def test_mmlu_categories_follow_the_original_release() -> None:
    counts = {c: list(SUBJECTS.values()).count(c) for c in set(SUBJECTS.values())}
    assert counts == {"STEM": 18, "humanities": 13, "social sciences": 12, "other": 14}


def test_gsm8k(data_dir: Path) -> None:
    test = load_gsm8k(data_dir, "test")
    assert len(test) == 1319 and test[0].answer.endswith("#### 18")
    assert len(load_gsm8k(data_dir, "train")) == 7473


def test_checksums_match_source_md(data_dir: Path) -> None:
    sums = checksums([arc_easy_file(data_dir, "test")])
    assert list(sums.values()) == [
        "c9757629cb775832c3c67b4aa1425e3eda01708a2b02fa229b0c3ed1bcb70fe1"
    ]


def test_resolve_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SIEVAL_DATA_DIR", raising=False)
    assert resolve_data_dir() is None
    monkeypatch.setenv("SIEVAL_DATA_DIR", str(tmp_path))
    assert resolve_data_dir() == tmp_path
    assert resolve_data_dir("elsewhere") == Path("elsewhere")


def test_missing_without_datasets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # import fails
    with pytest.raises(ConfigError) as info:
        load_arc_easy(tmp_path, "test")
    message = info.value.message
    assert str(arc_easy_file(tmp_path, "test")) in message
    assert "--data-dir" in message and "SIEVAL_DATA_DIR" in message and "datasets" in message


def fake_hub(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]] | Exception) -> list[Any]:
    calls: list[Any] = []

    def load_dataset(path: str, name: str | None, split: str) -> list[dict[str, Any]]:
        calls.append((path, name, split))
        if isinstance(rows, Exception):
            raise rows
        return rows

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    return calls


def test_hub_failure_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_hub(monkeypatch, OSError("offline"))
    with pytest.raises(ConfigError, match=r"could not be loaded \(OSError: offline\)"):
        load_gsm8k(tmp_path, "test")


def test_hub_fallbacks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    arc = {"id": "x", "question": "q", "choices": {"text": ["a", "b"], "label": ["1", "2"]}}
    calls = fake_hub(monkeypatch, [{**arc, "answerKey": "2"}])
    assert load_arc_easy(tmp_path, "test")[0].answer == 1
    fake_hub(monkeypatch, [{"question": "q", "choices": ["w", "x", "y", "z"], "answer": 2}])
    assert load_mmlu(tmp_path, "anatomy", "val")[0].answer == "C"
    fake_hub(monkeypatch, [{"question": "q", "answer": "a\n#### 3"}])
    assert load_gsm8k(tmp_path, "train")[0].answer == "a\n#### 3"
    row = {"activity_label": "L", "ctx_a": "A.", "ctx_b": "b", "endings": ["e"] * 4, "label": "1"}
    hub = fake_hub(monkeypatch, [row])
    item = load_hellaswag(tmp_path, "train")[0]
    assert (item.ctx_b, item.label, item.derived) == ("b", 1, False)
    assert calls == [("allenai/ai2_arc", "ARC-Easy", "test")]
    assert hub == [("Rowan/hellaswag", None, "train")]


def test_local_files_win(tmp_path: Path) -> None:
    folder = tmp_path / "hellaswag"
    folder.mkdir()
    row = {"activity_label": "L", "ctx_a": "A.", "ctx_b": "b", "endings": ["e"] * 4, "label": 2}
    (folder / "hellaswag_val.jsonl").write_text(json.dumps(row) + "\n\n")
    with bz2.open(folder / "hellaswag_val_full.txt.bz2", "wt") as fh:
        fh.write("L: A. b\n0\ne\ne\ne\ne")  # no final newline
    assert hellaswag_file(tmp_path, "validation") == folder / "hellaswag_val.jsonl"
    assert load_hellaswag(tmp_path, "validation")[0].label == 2
    (folder / "hellaswag_val.jsonl").unlink()
    assert load_hellaswag(tmp_path, "validation")[0].derived
    mmlu = tmp_path / "mmlu" / "dev"
    mmlu.mkdir(parents=True)
    (mmlu / "anatomy_dev.csv").write_text('"two\nlines, with ""quotes""",a,b,c,d,D\n')
    item = load_mmlu(tmp_path, "anatomy", "dev")[0]
    assert (item.question, item.answer) == ('two\nlines, with "quotes"', "D")
