"""Arena-Hard v2.0 judged end to end against the embedded reference server (a deterministic
judge): both games sent with the reference's prompts, the baseline first then the model first;
the verdicts read as ``get_score`` reads them; the score per category as ``show_result.py``
computes it from the battles; position bias reported; a broken verdict never scored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from runs import DATA, options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import plan_run
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval, read_records
from sieval.scoring.arena_score import bootstrap
from sieval.scoring.verdicts import LABEL_SCORES, battle_scores
from sieval.tasks.arena_hard_v2 import _A_SCORE, BOOTSTRAP_SEED, _battles
from tests.scoring import judge_oracles

JUDGE = "roles:\n  judge: {name: j, endpoint: embedded, kind: chat}"


def _rows() -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Three short hard prompts and two creative-writing ones (short baseline answers)."""
    folder = DATA / "arena_hard_v2"
    if not (folder / "question.jsonl").is_file():
        pytest.skip(f"benchmark data not found at {folder}; set SIEVAL_DATA_DIR")
    lines = (folder / "baseline_o3-mini-2025-01-31.jsonl").read_text().split("\n")
    answers = {
        r["uid"]: r["messages"][-1]["content"]["answer"] for r in map(json.loads, lines[:-1])
    }
    rows = {
        r["uid"]: r
        for r in map(json.loads, (folder / "question.jsonl").read_text().split("\n")[:-1])
    }
    picked: dict[str, list[str]] = {"hard_prompt": [], "creative_writing": []}
    for uid, row in rows.items():
        wanted = picked[row["category"]]
        if (
            len(wanted) < (3 if row["category"] == "hard_prompt" else 2)
            and len(answers[uid]) + len(row["prompt"]) < 1500
        ):
            wanted.append(uid)
    return [*picked["hard_prompt"], *picked["creative_writing"]], rows


def config(samples: list[str], judge: str = JUDGE) -> Any:
    return parse_config(
        "models: [{name: m, endpoint: embedded, kind: chat}]\n"
        f"tasks: [{{name: arena_hard_v2, samples: {json.dumps(samples)}, "
        "options: {judge_self: true, max_tokens: 64, judge_max_tokens: 256}}]\n" + judge
    )


def test_the_five_step_standing_is_the_reference_s_battles() -> None:
    """Each game's standing (what a record keeps) gives back the battles ``show_result`` makes
    of the two labels, in its order."""
    assert set(_A_SCORE) == set(LABEL_SCORES)
    for first in LABEL_SCORES:  # game 1: the baseline as A
        for second in LABEL_SCORES:  # game 2: the model as A
            kept = _battles(_A_SCORE[second]) + _battles(1 - _A_SCORE[first])
            assert kept == battle_scores(first, second)


def test_a_judged_task_without_a_judge_is_refused() -> None:
    samples, _ = _rows()
    with pytest.raises(ConfigError, match=r"calls a model in the role 'judge'"):
        plan_run(config(samples, judge=""), data_dir=DATA)


async def test_both_orders_are_judged_and_scored_as_the_reference_does(tmp_path: Path) -> None:
    samples, rows = _rows()
    result = await arun_eval(config(samples), options(out=tmp_path))
    assert result.exit_code == 0
    records = read_records(result.run_dir / "m" / "arena_hard_v2" / "records.jsonl").records
    folder = judge_oracles.ARENA
    template = yaml.safe_load((folder / "arena-hard-v2.0.yaml").read_text())["prompt_template"]
    settings = judge_oracles.load("judge_utils_oracle", folder / "judge_utils.py", {})
    oracle = judge_oracles.arena_judgment()
    battles: dict[str, list[float]] = {}
    inconsistent = 0
    for uid in samples:  # the task's order: the question file's
        record = records[uid]
        row = rows[uid]
        assert list(record.requests) == ["answer", "judge:baseline_first", "judge:model_first"]
        answer = record.prediction
        first = record.requests["judge:baseline_first"].messages
        second = record.requests["judge:model_first"].messages
        assert first is not None and second is not None
        system = settings.JUDGE_SETTINGS[row["category"]]["system_prompt"]
        assert first[0]["content"][0]["text"] == second[0]["content"][0]["text"] == system
        baseline_text = first[1]["content"][0]["text"].split(
            "<|The Start of Assistant A's Answer|>\n"
        )[1]
        expected = template.format(
            QUESTION=row["prompt"],
            ANSWER_A=baseline_text.split("\n<|The End of Assistant A's Answer|>")[0],
            ANSWER_B=answer,
        )
        assert first[1]["content"][0]["text"] == expected
        swapped = template.format(
            QUESTION=row["prompt"],
            ANSWER_A=answer,
            ANSWER_B=baseline_text.split("\n<|The End of Assistant A's Answer|>")[0],
        )
        assert second[1]["content"][0]["text"] == swapped
        replies = {
            k: r.output[0]["text"] for k, r in record.requests.items() if r.output and k != "answer"
        }
        labels = {
            k[len("judge:") :]: oracle.get_score(t, [r"\[\[([AB<>=]+)\]\]", r"\[([AB<>=]+)\]"])
            for k, t in replies.items()
        }
        assert record.channels["verdicts"] == labels
        ours = battle_scores(labels["baseline_first"], labels["model_first"])
        battles.setdefault(row["category"], []).extend(ours)
        a = _A_SCORE[labels["model_first"]]
        b = 1 - _A_SCORE[labels["baseline_first"]]
        inconsistent += ((a > 0.5) - (a < 0.5)) != ((b > 0.5) - (b < 0.5))
    entry = result.report.results[0]
    assert entry.headline == "hard_prompt"
    for category, found in battles.items():
        score = bootstrap(found, BOOTSTRAP_SEED)
        assert entry.metrics[category] == pytest.approx(score.score * 100)
        assert entry.metrics[f"{category}_battles"] == len(found)
    assert set(battles) == {"hard_prompt", "creative_writing"}
    assert entry.metrics["inconsistency"] == inconsistent / len(samples)
    assert entry.metrics["judge_parse_errors"] == 0


async def test_a_broken_verdict_scores_neither_game(tmp_path: Path) -> None:
    samples, _ = _rows()
    async with ReferenceServer(port=0, faults="judge-unparseable") as judge:
        served = (
            f"roles:\n  judge: {{name: j, endpoint: '{judge.url}', model: sieval-reference, "
            "kind: chat}"
        )
        result = await arun_eval(config(samples[:2], served), options(out=tmp_path))
    entry = result.report.results[0]
    assert entry.metrics["judge_parse_errors"] == 4 and entry.metrics["judged"] == 0
    assert "hard_prompt" not in entry.metrics and "inconsistency" not in entry.metrics
