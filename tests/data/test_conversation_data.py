"""MT-Bench's and Arena-Hard v2.0's rows through the loaders' real path, as SOURCE.md counts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sieval.data import arena_hard_v2
from sieval.data.registry import get_source
from sieval.errors import ConfigError


def test_mt_bench(data_dir: Path) -> None:
    rows = [fields for _, fields in get_source("mt_bench").rows(data_dir, "test")]
    assert len(rows) == 80
    assert Counter(r["category"] for r in rows) == dict.fromkeys(
        ["writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities"],
        10,
    )
    assert all(len(r["turns"]) == 2 for r in rows)
    # 39 rows carry a reference (math 10, reasoning 10, coding 9, and 10 elsewhere)
    assert sum(r["reference"] is not None for r in rows) == 39
    assert rows[0]["question_id"] == 81
    assert (
        rows[0]["turns"][1]
        == "Rewrite your previous response. Start every sentence with the letter A."
    )


def test_mt_bench_refuses_a_one_turn_row(tmp_path: Path) -> None:
    (tmp_path / "mt_bench").mkdir()
    row = {"question_id": 1, "category": "writing", "turns": ["only one"]}
    (tmp_path / "mt_bench" / "question.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ConfigError, match=r"question.jsonl:1: expected two non-empty turns, got 1"):
        get_source("mt_bench").rows(tmp_path, "test")


def test_arena_hard_v2(data_dir: Path) -> None:
    rows = [fields for _, fields in get_source("arena_hard_v2").rows(data_dir, "test")]
    assert len(rows) == 750
    assert Counter(r["category"] for r in rows) == {"hard_prompt": 500, "creative_writing": 250}
    answers = arena_hard_v2.baseline(data_dir)
    assert set(answers) == {r["uid"] for r in rows}
    assert all(isinstance(a, str) and a for a in answers.values())
