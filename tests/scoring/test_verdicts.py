"""sieval reads a judge's reply as the reference code does, on a corpus of replies: synthetic edge
cases (two verdicts, a verdict quoted in the reasoning, malformed brackets, ties, no verdict) and
real replies of Gemma 3 270M acting as judge on the live vLLM
(``tests/fixtures/judge_replies/gemma-3-270m.json``, ``docs/evidence/judges-live.md``).

The oracles are imported from the data folder (``judge_oracles.py``): FastChat's
``run_judge_single`` for MT-Bench's rating, arena-hard-auto's ``get_score`` for the verdict and
its ``show_result.py`` (``load_judgments``, ``print_leaderboard`` under ``np.random.seed``) for
the score and its bootstrap interval.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sieval.scoring.arena_score import bootstrap
from sieval.scoring.verdicts import (
    ARENA_PATTERNS,
    LABEL_SCORES,
    arena_verdict,
    battle_scores,
    mt_bench_rating,
)

from . import judge_oracles

REAL = Path(__file__).parents[1] / "fixtures" / "judge_replies" / "gemma-3-270m.json"

MT_BENCH_SYNTHETIC = [
    "Rating: [[7]]",
    "The answer is fine. [[3]] On reflection, [[8]]",  # two verdicts: the first wins
    'As the example says, "Rating: [[5]]", but this deserves Rating: [[2]]',  # in the reasoning
    "I cite [4] here. Rating: [[9]]",  # [[n]] is searched first, anywhere
    "Rating: [7]",  # the backup pattern
    "Rating: [[7.5]]",
    "Rating: [[7.]]",
    "Rating: [[seven]]",
    "Rating: [[ 7 ]]",
    "Rating: [[11]]",  # out of range: kept, as FastChat keeps it
    "Rating: [[0]]",
    "Rating: 7/10",
    "Rating: [[-3]]",
    "Rating: [[7]",  # malformed: the backup finds [7]
    "",
    "Rating: [[5]] and the format is [[rating]]",
    "Rating: [[1,000]]",
    "Rating: [[10]]",
    "Rating: [[8.25]] [[9]]",
    "no rating at all",
]

ARENA_SYNTHETIC = [
    "My final verdict is: [[A>B]]",
    "First [[A>B]], then after thinking: [[B>A]]",  # two verdicts: the last wins
    "My final verdict is tie: [[A=B]]",
    "my final verdict is [[a>>b]]",  # read upper-cased
    "Verdict: [A>B]",  # the second pattern
    "[[A>B]] although [B>>A] was close",  # the first pattern with a match wins
    "[[A>>>B]]",  # a label show_result cannot score
    "[[A or B]]",
    "[[A?B]]",
    "",
    "[[B]]",
    'Example output: "My final verdict is tie: [[A=B]]". My final verdict: [[B>>A]]',
    "[[A<B]]",
    "[[B=A]]",
    "[[]]",
    "[[A>B]\n",  # malformed: the second pattern finds [A>B]
    "Assistant A is better: [[A>B]]. Final: [[B>>A]]",
    "I cannot decide.",
]


def _real(kind: str) -> list[str]:
    if not REAL.is_file():
        return []
    found: list[str] = json.loads(REAL.read_text())[kind]
    return found


def _fastchat_rating(module: Any, reply: str) -> float | None:
    module.REPLY = reply
    judge = module.Judge("gpt-4", {"type": "single", "output_format": "[[rating]]",
                                   "system_prompt": "", "prompt_template": "{question}{answer}",
                                   "name": "single-v1"})  # fmt: skip
    question = {"turns": ["q"]}
    answer = {"choices": [{"turns": ["a"]}]}
    rating, _, judgment = module.run_judge_single(question, answer, judge, None)
    assert judgment == reply
    return None if rating == -1 else float(rating)


@pytest.mark.parametrize("kind", ["synthetic", "real"])
def test_mt_bench_ratings_equal_fastchat_s(kind: str) -> None:
    module = judge_oracles.mt_bench()
    corpus = MT_BENCH_SYNTHETIC if kind == "synthetic" else _real("mt_bench")
    if not corpus:
        pytest.skip(f"no real judge replies at {REAL}")
    for reply in corpus:
        assert mt_bench_rating(reply) == _fastchat_rating(module, reply), reply
    if kind == "synthetic":  # the corpus holds both outcomes
        parsed = [mt_bench_rating(r) for r in corpus]
        assert parsed.count(None) == 7 and parsed[1:3] == [3.0, 5.0]


@pytest.mark.parametrize("kind", ["synthetic", "real"])
def test_arena_verdicts_equal_arena_hard_s(kind: str) -> None:
    module = judge_oracles.arena_judgment()
    corpus = ARENA_SYNTHETIC if kind == "synthetic" else _real("arena_hard_v2")
    if not corpus:
        pytest.skip(f"no real judge replies at {REAL}")
    for reply in corpus:
        theirs = module.get_score(reply, list(ARENA_PATTERNS))
        # a label show_result has no score for (its KeyError) is a parse error here
        assert arena_verdict(reply) == (theirs if theirs in LABEL_SCORES else None), reply
    if kind == "synthetic":
        refused = [r for r in corpus if module.get_score(r, list(ARENA_PATTERNS)) is not None]
        assert sum(arena_verdict(r) is None for r in refused) == 2  # [[A>>>B]] and [[B]]


def _games(corpus: list[str]) -> list[tuple[str | None, str | None]]:
    """Pairs of verdicts (game 1, game 2) from the corpus, each reply in both places."""
    verdicts = [arena_verdict(r) for r in corpus]
    return [(verdicts[i], verdicts[(i * 7 + 3) % len(verdicts)]) for i in range(len(verdicts))]


@pytest.mark.parametrize("seed", [0, 42, 1234])
def test_arena_scores_equal_show_result_s_under_one_seed(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = judge_oracles.arena_result()
    import numpy as np  # with pandas: the oracle's

    corpus = ARENA_SYNTHETIC + _real("arena_hard_v2")
    games = _games(corpus) * 3
    folder = tmp_path / "data" / "bench" / "model_judgment" / "judge"
    folder.mkdir(parents=True)
    with (folder / "m.jsonl").open("w") as out:
        for i, (one, two) in enumerate(games):
            row = {"uid": str(i), "category": "hard_prompt", "model": "m",
                   "games": [{"score": one}, {"score": two}]}  # fmt: skip
            out.write(json.dumps(row) + "\n")
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        battles = result.load_judgments(["judge"], "bench")
    ours = [s for one, two in games if one and two for s in battle_scores(one, two)]
    assert [float(s) for s in battles["scores"]] == ours
    np.random.seed(seed)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result.print_leaderboard(battles, "hard_prompt")
    line = next(x for x in printed.getvalue().splitlines() if re.search(r"\bm\s", x))
    score, interval = bootstrap(ours, seed).shown()
    assert line.split()[-5:] == ["m", str(score), *interval.split()]
