"""Arena-Hard-Auto v2.0 (Li et al. 2024, https://arxiv.org/abs/2406.11939): the model's answer to
each of the 750 prompts judged pairwise against the stored o3-mini answer by the model playing
the ``judge`` role, in both orders, as arena-hard-auto 196f6b8 judges and scores
(``arena_hard_v2/reference/``, read from the data folder, never copied).

**Answer**: the prompt as one user message, temperature 0, ``max_tokens`` 4096 (option; the
reference's answer settings live in a config that is not stored). **Judgment**: two games sent at
once, game 1 with the baseline as assistant A, game 2 with the model as A; the system prompt of
``judge_utils.py``'s ``JUDGE_SETTINGS`` for the question's category and the template of
``arena-hard-v2.0.yaml``, temperature 0 and ``max_tokens`` 16000 as that config sets them
(option ``judge_max_tokens``). The baseline is o3-mini for every prompt: upstream judges
creative writing against gemini-2.0-flash-001, whose answers are not stored, so the
``creative_writing`` figure is against o3-mini (said in the protocol).

**The contract**: a game's verdict is read as ``get_score`` reads it (``scoring.verdicts``: the
last match of the first pattern that matches); no verdict, or a label the score table lacks, is a
``judge_parse_error``: the sample keeps its answers and its parse errors, and neither game's
battles are scored (``show_result`` drops a judgment with a null game the same way).

**The figures**, per category apart (``hard_prompt``, ``creative_writing``), as
``show_result.py``'s ``print_leaderboard`` computes them: the battles (a "significantly" verdict
counts three times) resampled 100 times, the score the mean of the resampled means in %, its
5-95 % interval (``scoring.arena_score``, seed ``BOOTSTRAP_SEED`` as ``np.random.seed``; the
battles in the task's sample order). Style control is not computed (``arena_score``).
**Position bias**: per sample, ``model_first`` and ``baseline_first`` (the model's standing on
0, 0.25, 0.5, 0.75, 1 in each game) and ``inconsistent`` (1 when the two games pick different
sides: one a win, the other a tie or a loss); ``inconsistency`` is its rate.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ..data.arena_hard_v2 import BASELINE_FILE, baseline
from ..data.registry import get_source
from ..errors import ConfigError
from ..ir.request import Sampling
from ..scoring.arena_score import bootstrap
from ..scoring.verdicts import WEIGHT, arena_verdict
from ._shared import check_options, first_choice, int_option
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Requirement,
    Sample,
    SampleResult,
    Task,
    TaskConfig,
)
from .context import Context
from .conversation import Conversation
from .judging import JUDGE_SELF, identity, judge_self, prompt_hash, reply_text

__all__ = ["TASK", "ArenaHardV2"]

MAX_TOKENS = 4096
BOOTSTRAP_SEED = 0
CATEGORIES = ("hard_prompt", "creative_writing")
STANDING_IN = "(the model's answer)"
_A_SCORE = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B=A": 0.5, "B>A": 0.25, "A<B": 0.25,
            "B>>A": 0.0, "A<<B": 0.0, "B<A": 0.75, "B<<A": 1.0}  # fmt: skip
"""Assistant A's standing under each label, on five steps (the battles it stands for:
``_battles``)."""


def _battles(standing: float) -> list[float]:
    """The model's battles for its standing in one game (``LABEL_SCORES``)."""
    if standing in (0.0, 1.0):
        return [standing] * WEIGHT
    return [{0.25: 0.0, 0.5: 0.5, 0.75: 1.0}[standing]]


def _constants(path: Path) -> dict[str, Any]:
    """The module-level constants of ``judge_utils.py``, read without running it."""
    found: dict[str, Any] = {}

    def value(node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return found[node.id]
        if isinstance(node, ast.Dict):
            pairs = zip(node.keys, node.values, strict=True)
            return {value(k): value(v) for k, v in pairs if k is not None}
        return ast.literal_eval(node)

    for statement in ast.parse(path.read_text()).body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                found[target.id] = value(statement.value)
    return found


class ArenaHardV2(Task):
    name = "arena_hard_v2"
    headline = "hard_prompt"
    listing = ("judged", "arena_hard_v2")
    roles = ("judge",)
    requirements = (Requirement("chat", "the prompt is one user message"),)
    defaults = MappingProxyType(
        {"max_tokens": MAX_TOKENS, "judge_max_tokens": 16000, JUDGE_SELF: False}
    )
    protocol = (
        "Arena-Hard-Auto v2.0 (arena-hard-auto 196f6b8): the answer at temperature 0, max_tokens "
        "4096; judged against o3-mini-2025-01-31 (also for creative_writing, whose upstream "
        "baseline gemini-2.0-flash is not stored) in two games, both orders, judge_utils.py's "
        "system prompt and arena-hard-v2.0.yaml's template, temperature 0; get_score's verdict, "
        "none a judge_parse_error; battles weighted 3 for >>, 100 bootstrap rounds (seed 0), "
        "per category, in %; no style control"
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        folder = data_dir / "arena_hard_v2"
        return [
            *get_source("arena_hard_v2").files(data_dir, "test"),
            folder / BASELINE_FILE,
            folder / "reference" / "judge_utils.py",
            folder / "reference" / "arena-hard-v2.0.yaml",
        ]

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        int_option(self.name, config, "judge_max_tokens", 16000, 1)
        judge_self(self.name, config)
        folder = data_dir / "arena_hard_v2" / "reference"
        for needed in ("judge_utils.py", "arena-hard-v2.0.yaml"):
            if not (folder / needed).is_file():
                raise ConfigError(
                    f"arena_hard_v2 needs {folder / needed} (arena-hard-auto's judge settings)",
                    path="data_dir",
                )
        settings = _constants(folder / "judge_utils.py")["JUDGE_SETTINGS"]
        template = yaml.safe_load((folder / "arena-hard-v2.0.yaml").read_text())["prompt_template"]
        answers = baseline(data_dir)
        for _, row in get_source("arena_hard_v2").rows(data_dir, "test"):
            if row["uid"] not in answers:
                raise ConfigError(
                    f"arena_hard_v2 prompt {row['uid']} has no baseline answer", path="data_dir"
                )
            data = {
                "category": row["category"],
                "subcategory": row["subcategory"],
                "prompt": row["prompt"],
                "baseline": answers[row["uid"]],
                "system": settings[row["category"]]["system_prompt"],
                "template": template,
            }
            yield Sample(id=row["uid"], data=data, gold=None, group=row["category"])

    def describe(self, sample: Sample) -> dict[str, Any]:
        data = sample.data
        return {k: data[k] for k in ("category", "subcategory", "prompt")}

    def _answer(self, config: TaskConfig) -> Sampling:
        return Sampling(
            temperature=0.0, max_tokens=int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        )

    def _judge_sampling(self, config: TaskConfig) -> Sampling:
        limit = int_option(self.name, config, "judge_max_tokens", 16000, 1)
        return Sampling(temperature=0.0, max_tokens=limit)

    def _games(self, sample: Sample, answer: str, config: TaskConfig) -> dict[str, Any]:
        data = sample.data
        sampling = self._judge_sampling(config)

        def game(a: str, b: str) -> Any:
            text = data["template"].format(QUESTION=data["prompt"], ANSWER_A=a, ANSWER_B=b)
            return Conversation(sampling=sampling, system=data["system"]).request(text)

        return {
            "baseline_first": game(data["baseline"], answer),
            "model_first": game(answer, data["baseline"]),
        }

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        ask = Conversation(sampling=self._answer(config)).request(sample.data["prompt"])
        unseen = int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        games = self._games(sample, STANDING_IN, config)
        return [
            PlannedCall("answer", ask),
            *(
                PlannedCall(name, request, role="judge", exact=False, unseen_tokens=unseen)
                for name, request in games.items()
            ),
        ]

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        call = await ctx.call(
            "answer",
            Conversation(sampling=self._answer(ctx.config)).request(sample.data["prompt"]),
        )
        choice = first_choice(call.result())
        answer = choice.text
        games = self._games(sample, answer, ctx.config)
        calls = await ctx.role("judge").gather(games)
        labels = {name: arena_verdict(reply_text(c)) for name, c in calls.items()}
        metrics: dict[str, float] = {
            "judge_parse_errors": float(sum(v is None for v in labels.values()))
        }
        first, second = labels["baseline_first"], labels["model_first"]
        if first is not None and second is not None:
            model_first = _A_SCORE[second]
            baseline_first = 1.0 - _A_SCORE[first]
            metrics["model_first"] = model_first
            metrics["baseline_first"] = baseline_first
            metrics["inconsistent"] = float(_side(model_first) != _side(baseline_first))
        data = sample.data
        sent = {
            f"arena-hard-v2.0:{data['category']}": prompt_hash(data["system"], data["template"])
        }
        return SampleResult(
            prediction=answer,
            gold=None,
            metrics=metrics,
            channels={
                "verdicts": labels,
                "judge": identity(list(calls.values()), sent, self._judge_sampling(ctx.config)),
            },
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        battles: dict[str, list[float]] = {}
        n = errors = judged = inconsistent = 0
        for sample, result in results:
            n += 1
            m = result.metrics
            errors += int(m.get("judge_parse_errors", 0))
            if "model_first" not in m:
                continue
            judged += 1
            inconsistent += int(m["inconsistent"])
            group = battles.setdefault(sample.group or "", [])
            group += _battles(m["model_first"]) + _battles(m["baseline_first"])
        out: dict[str, Any] = {"n": n, "judged": judged, "judge_parse_errors": errors}
        if judged:
            out["inconsistency"] = inconsistent / judged
        for category in sorted(battles, key=lambda c: (c not in CATEGORIES, c)):
            found = bootstrap(battles[category], BOOTSTRAP_SEED)
            out[category] = found.score * 100
            out[f"{category}_interval"] = {"lower": found.lower * 100, "upper": found.upper * 100}
            out[f"{category}_battles"] = found.battles
        return out


def _side(standing: float) -> int:
    """Which side a game picks for the model: 1 better, 0 a tie, -1 worse."""
    return (standing > 0.5) - (standing < 0.5)


TASK = ArenaHardV2()
