"""The seed datasets read through the loaders' real path (``Source.rows``, what every task
reads): the stored files as SOURCE.md describes them, the hub only when they are absent."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from sieval.data import checksums, resolve_data_dir
from sieval.data.mmlu import SUBJECTS
from sieval.data.registry import get_source
from sieval.errors import ConfigError


def test_arc_easy(data_dir: Path) -> None:
    test = [fields for _, fields in get_source("arc_easy").rows(data_dir, "test")]
    assert len(test) == 2376
    assert (test[0]["id"], test[0]["answerKey"]) == ("Mercury_417466", "A")
    assert len(get_source("arc_easy").rows(data_dir, "train")) == 2251
    assert {len(row["choices"]["text"]) for row in test} == {3, 4, 5}
    assert len({row["id"] for row in test}) == len(test)


def test_hellaswag_derived(data_dir: Path) -> None:
    rows = get_source("hellaswag").rows(data_dir, "validation")
    assert len(rows) == 10042
    first = rows[0][1]
    assert (first["activity_label"], first["ctx_a"], first["ctx_b"]) == (
        "Roof shingle removal",
        "A man is sitting on a roof. he",
        "",
    )
    assert first["label"] == "3" and len(first["endings"]) == 4


def test_mmlu(data_dir: Path) -> None:
    assert sorted(p.name.removesuffix("_test.csv") for p in (data_dir / "mmlu/test").iterdir()) == (
        sorted(SUBJECTS)
    )
    mmlu = get_source("mmlu")
    assert len(mmlu.rows(data_dir, "test")) == 14042
    first = mmlu.rows(data_dir, "test", "abstract_algebra")[0][1]
    assert first["question"].startswith("Find the degree for the given field extension")
    assert (first["choices"], first["answer"]) == (["0", "4", "2", "6"], 1)
    assert all(len(mmlu.rows(data_dir, "dev", s)) == 5 for s in SUBJECTS)


def test_mmlu_categories_follow_the_original_release() -> None:
    counts = {c: list(SUBJECTS.values()).count(c) for c in set(SUBJECTS.values())}
    assert counts == {"STEM": 18, "humanities": 13, "social sciences": 12, "other": 14}


def test_gsm8k(data_dir: Path) -> None:
    test = get_source("gsm8k").rows(data_dir, "test")
    assert len(test) == 1319 and test[0][1]["answer"].endswith("#### 18")
    assert len(get_source("gsm8k").rows(data_dir, "train")) == 7473


def test_checksums_match_source_md(data_dir: Path) -> None:
    sums = checksums(get_source("arc_easy").files(data_dir, "test"))
    assert list(sums.values()) == [
        "c9757629cb775832c3c67b4aa1425e3eda01708a2b02fa229b0c3ed1bcb70fe1"
    ]


def test_resolve_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SIEVAL_DATA_DIR", raising=False)
    assert resolve_data_dir() is None
    monkeypatch.setenv("SIEVAL_DATA_DIR", str(tmp_path))
    assert resolve_data_dir() == tmp_path
    assert resolve_data_dir("elsewhere") == Path("elsewhere")


def test_hub_failure_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def load_dataset(path: str, name: str | None, split: str) -> list[dict[str, Any]]:
        raise OSError("offline")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    with pytest.raises(ConfigError, match=r"could not be loaded \(OSError: offline\)"):
        get_source("gsm8k").rows(tmp_path, "test")


def test_a_quoted_mmlu_field_may_span_lines(tmp_path: Path) -> None:
    mmlu = tmp_path / "mmlu" / "dev"
    mmlu.mkdir(parents=True)
    (mmlu / "anatomy_dev.csv").write_text('"two\nlines, with ""quotes""",a,b,c,d,D\n')
    (row,) = get_source("mmlu").rows(tmp_path, "dev", "anatomy")
    assert (row[1]["question"], row[1]["answer"]) == ('two\nlines, with "quotes"', 3)
