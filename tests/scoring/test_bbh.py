"""BBH extraction against lm-evaluation-harness 0.4.13's ``bbh_cot_fewshot`` filters.

``tests/fixtures/bbh/lm-eval-0.4.13/oracle.json`` holds what lm-eval's own filter list (built
from its task yaml by its filter registry) and its ``exact_match`` returned on 30 synthetic texts
and on the 81 chain-of-thought exemplar answers of ``bbh/cot-prompts/`` (``scripts/
record_bbh_oracle.py``); sieval must return the same answer and score on every one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sieval.scoring.bbh import extract_bbh, score_bbh

ORACLE = Path(__file__).parents[1] / "fixtures" / "bbh" / "lm-eval-0.4.13" / "oracle.json"
INVALID = "[invalid]"


def cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(ORACLE.read_text())["cases"]
    return cases


def test_the_fixture_records_lm_evals_filter_list() -> None:
    meta = json.loads(ORACLE.read_text())["meta"]
    assert meta["lm_eval"] == "0.4.13"
    assert meta["filter_list"]["filter"] == [
        {"function": "regex", "regex_pattern": "(?<=the answer is )(.*)(?=.)"},
        {"function": "take_first"},
    ]


def test_synthetic_texts_agree_with_lm_eval() -> None:
    synthetic = [c for c in cases() if c["source"] == "synthetic"]
    assert len(synthetic) == 30
    for case in synthetic:
        verdict = score_bbh(case["text"], case["target"])
        theirs = None if case["filtered"] == INVALID else case["filtered"]
        if case["name"] == "invalid_literal":  # the model's literal "[invalid]" is an answer here
            assert verdict.extracted == INVALID and verdict.correct
            continue
        assert verdict.extracted == theirs, case["name"]
        assert verdict.correct == (case["exact_match"] == 1.0), case["name"]
        assert verdict.rule == (None if theirs is None else "the_answer_is")


def test_lm_evals_quirks_are_kept() -> None:
    # the look-ahead eats the last character; the first match wins, even on the same line;
    # only a lowercase "the answer is " followed by a space counts
    assert extract_bbh("So the answer is True") == "Tru"
    assert extract_bbh("the answer is (A). No, the answer is (C).") == "(A). No, the answer is (C)"
    assert extract_bbh("The answer is (A).") is None
    assert score_bbh('So the answer is "True".', "True").correct is False


def test_cot_exemplars_agree_with_lm_eval(data_dir: Path) -> None:
    exemplars = [c for c in cases() if c["source"] == "cot-prompts"]
    assert len(exemplars) == 81
    for case in exemplars:
        text = (data_dir / "bbh" / "cot-prompts" / case["file"]).read_text()
        answer = text.split("\n\nQ: ")[1:][case["index"]].split("\nA: ", 1)[1]
        assert extract_bbh(answer) == case["filtered"], (case["file"], case["index"])
        assert case["filtered"] != INVALID
