"""A malformed, inconsistent or empty data file is a ``ConfigError`` naming the file and line."""

from __future__ import annotations

import bz2
import json
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sieval.data.registry import get_source
from sieval.errors import ConfigError

Loader = Callable[[Path], object]


def jsonl(*rows: object) -> str:
    """One line per row: dicts as JSON, strings as written (for broken lines)."""
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def arc(i: int = 0, **changes: Any) -> dict[str, Any]:
    row = {"id": f"q{i}", "question": "What is hot?", "answerKey": "B",
           "choices": {"text": ["ice", "fire"], "label": ["A", "B"]}}  # fmt: skip
    return {**row, **changes}


def gsm8k(**changes: Any) -> dict[str, Any]:
    return {"question": "How many?", "answer": "2+2 = <<2+2=4>>4\n#### 4", **changes}


def load_arc_easy(data_dir: Path) -> object:
    return get_source("arc_easy").rows(data_dir, "test")


def load_hellaswag(data_dir: Path) -> object:
    return get_source("hellaswag").rows(data_dir, "validation")


def load_mmlu(data_dir: Path) -> object:
    return get_source("mmlu").rows(data_dir, "test", "anatomy")


def load_gsm8k(data_dir: Path) -> object:
    return get_source("gsm8k").rows(data_dir, "test")


ARC = ("arc_easy/ARC-Easy-test.jsonl", load_arc_easy)
DERIVED = ("hellaswag/hellaswag_val_full.txt.bz2", load_hellaswag)
MMLU = ("mmlu/test/anatomy_test.csv", load_mmlu)
GSM8K = ("gsm8k/test.jsonl", load_gsm8k)

GOOD_DERIVED = "L: A. b\n0\ne\nf\ng\nh\n"

# (dataset, file content, line named, what the message says)
CASES = [
    # ARC-Easy
    (ARC, jsonl(arc(0), "{not json"), 2, "not valid JSON"),
    (ARC, jsonl(arc(0), [1, 2]), 2, "Expected `object`, got `array`"),
    (ARC, jsonl({k: v for k, v in arc(0).items() if k != "answerKey"}), 1, "`answerKey`"),
    (ARC, jsonl(arc(0, question=7)), 1, "Expected `str`, got `int` - at `$.question`"),
    (ARC, jsonl(arc(0), arc(1, answerKey="E")), 2, "answerKey 'E' is not one of the labels A, B"),
    (
        ARC,
        jsonl(arc(0, choices={"text": ["a", "b", "c"], "label": ["A", "B"]})),
        1,
        "3 choice texts but 2 labels",
    ),
    (
        ARC,
        jsonl(arc(0, choices={"text": ["a", "b"], "label": ["A", "A"]})),
        1,
        "label 'A' appears twice",
    ),
    (ARC, jsonl(arc(0, choices={"text": ["a", ""], "label": ["A", "B"]})), 1, "choice B is empty"),
    (ARC, jsonl(arc(0, choices={"text": ["a"], "label": ["B"]})), 1, "at least two choices"),
    (ARC, jsonl(arc(0), arc(1), arc(0)), 3, "id 'q0' is already used at {path}:1"),
    # HellaSwag, derived six-line text
    (DERIVED, GOOD_DERIVED + "M: B. c\n1\ne\n", 7, "has 3 of its 6 lines"),
    (DERIVED, GOOD_DERIVED + "M: B. c\none\ne\nf\ng\nh\n", 8, "label 'one' is not an ending index"),
    (DERIVED, GOOD_DERIVED + "M: B. c\n4\ne\nf\ng\nh\n", 8, "label '4' is not an ending index"),
    (DERIVED, "no separator\n0\ne\nf\ng\nh\n", 1, "'<activity_label>: <context>'"),
    (DERIVED, "L: A. b\n0\ne\n\ng\nh\n", 4, "ending 1 is empty"),
    # MMLU CSV (a quoted field may span lines: the record's first line is named)
    (MMLU, 'q,a,b,c,d,A\n"two\nlines",a,b,c,d,B\nq,a,b,c,A\n', 4, "expected 6 fields"),
    (MMLU, "q,a,b,c,d,A\nq,a,b,c,d,E\n", 2, "answer 'E' is not one of A, B, C, D"),
    (MMLU, 'q,a,b,c,d,A\n"never closed,a,b,c,d,A\n', 2, "not valid CSV"),
    # GSM8K
    (GSM8K, jsonl(gsm8k(), gsm8k(answer="4")), 2, "no final '#### N'"),
    (GSM8K, jsonl(gsm8k(answer="so\n####4")), 1, "no final '#### N'"),
    (
        GSM8K,
        jsonl(gsm8k(answer="so\n#### four")),
        1,
        "'four' after the last '#### ' is not a number",
    ),
    (
        GSM8K,
        jsonl(gsm8k(answer="so\n#### 4\n")),
        1,
        "'4\\n' after the last '#### ' is not a number",
    ),
    (GSM8K, jsonl({"question": "q"}), 1, "`answer`"),
]


def write(data_dir: Path, relative: str, content: str | bytes) -> Path:
    path = data_dir / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = content.encode() if isinstance(content, str) else content
    path.write_bytes(bz2.compress(raw) if path.suffix == ".bz2" else raw)
    return path


def name(dataset: tuple[str, Loader]) -> str:
    return dataset[0].split("/")[-1]


@pytest.mark.parametrize(
    ("dataset", "content", "line", "problem"),
    CASES,
    ids=[f"{name(d)}:{line}:{problem}" for d, _, line, problem in CASES],
)
def test_a_bad_row_names_file_and_line(
    tmp_path: Path, dataset: tuple[str, Loader], content: str, line: int, problem: str
) -> None:
    relative, load = dataset
    path = write(tmp_path, relative, content)
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    where = f"{path}:{line}"
    assert info.value.path == where
    assert info.value.message.startswith(f"{where}: ")
    assert problem.format(path=path) in info.value.message


DATASETS = [ARC, DERIVED, MMLU, GSM8K]


@pytest.mark.parametrize("dataset", DATASETS, ids=name)
@pytest.mark.parametrize("content", ["", "\n\n"], ids=["empty", "blank-lines"])
def test_an_empty_file_has_no_samples(
    tmp_path: Path, dataset: tuple[str, Loader], content: str
) -> None:
    relative, load = dataset
    path = write(tmp_path, relative, content)
    with pytest.raises(ConfigError, match=f"^no samples in {re.escape(str(path))}") as info:
        load(tmp_path)
    assert info.value.path == str(path)


@pytest.mark.parametrize("dataset", DATASETS, ids=name)
def test_bytes_that_are_not_utf8(tmp_path: Path, dataset: tuple[str, Loader]) -> None:
    relative, load = dataset
    good = {ARC: jsonl(arc(0)), DERIVED: GOOD_DERIVED,
            MMLU: "q,a,b,c,d,A\n", GSM8K: jsonl(gsm8k())}[dataset]  # fmt: skip
    path = write(tmp_path, relative, good.encode() + b'"caf\xe9"\n')
    with pytest.raises(ConfigError, match="not valid UTF-8") as info:
        load(tmp_path)
    first_bad = good.count("\n") + 1
    assert info.value.path == f"{path}:{first_bad}"


def test_a_damaged_bz2_file(tmp_path: Path) -> None:
    path = tmp_path / DERIVED[0]
    path.parent.mkdir(parents=True)
    path.write_bytes(bz2.compress(GOOD_DERIVED.encode())[:-10])
    with pytest.raises(ConfigError, match="not a readable bzip2 file") as info:
        load_hellaswag(tmp_path)
    assert info.value.path == str(path)


def fake_hub(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]]) -> None:
    def load_dataset(path: str, name: str | None, split: str) -> list[dict[str, Any]]:
        return rows

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))


def test_hub_rows_are_checked_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_hub(monkeypatch, [gsm8k(), gsm8k(answer="no marker")])
    with pytest.raises(ConfigError, match=r"^hub openai/gsm8k \(main, test\) row 1: ") as info:
        load_gsm8k(tmp_path)
    assert info.value.path == "hub openai/gsm8k (main, test) row 1"
    fake_hub(monkeypatch, [{"question": "q", "choices": ["a", "b", "c"], "answer": 0}])
    with pytest.raises(ConfigError, match=r"row 0: .*`\$.choices`"):
        load_mmlu(tmp_path)
    fake_hub(monkeypatch, [{"question": "q", "choices": ["a", "b", "c", "d"], "answer": 4}])
    with pytest.raises(ConfigError, match=r"\(anatomy, test\) row 0: answer 4 is not an index"):
        load_mmlu(tmp_path)
    fake_hub(monkeypatch, [])
    with pytest.raises(ConfigError, match=r"^no samples in hub allenai/ai2_arc \(ARC-Easy, test\)"):
        load_arc_easy(tmp_path)


def test_blank_lines_are_not_rows(tmp_path: Path) -> None:
    write(tmp_path, ARC[0], "\n" + jsonl(arc(0)) + "\n\n" + jsonl(arc(1)))
    assert [fields["id"] for _, fields in get_source("arc_easy").rows(tmp_path, "test")] == [
        "q0",
        "q1",
    ]
    write(tmp_path, MMLU[0], "q,a,b,c,d,A\n\nr,a,b,c,d,B\n")
    rows = get_source("mmlu").rows(tmp_path, "test", "anatomy")
    assert [fields["answer"] for _, fields in rows] == [0, 1]
    write(tmp_path, DERIVED[0], GOOD_DERIVED + "\n\n")
    assert len(get_source("hellaswag").rows(tmp_path, "validation")) == 1
