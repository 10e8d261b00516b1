"""MT-Bench judged (Zheng et al. 2023, https://arxiv.org/abs/2306.05685): single-answer grading
1-10 by the model playing the ``judge`` role, as FastChat's ``gen_judgment.py --mode single``.

The answers are ``mt_bench_answers``'s (two turns, the second after the model's own first
answer). Then each turn is judged, both judgments sent at once, with FastChat's prompts of
``judge_prompts.jsonl``: turn 1 with ``single-v1`` (``single-math-v1``, with GPT-4's reference
answer of ``reference_answer/gpt-4.jsonl``, for math, reasoning and coding: ``NEED_REF_CATS``),
turn 2 with ``single-v1-multi-turn`` (``single-math-v1-multi-turn``), the whole conversation in
the prompt; a system message and the filled template, temperature 0, ``max_tokens`` 2048
(``chat_completion_openai``'s; option ``judge_max_tokens``).

**The contract**: a rating is read as FastChat reads it (``scoring.verdicts.mt_bench_rating``:
the first ``[[n]]``, else the first ``[n]``); a reply with none is a ``judge_parse_error``,
counted (``judge_parse_errors``) and left out of every mean, as FastChat's -1 is, never scored.

**The figures** (FastChat's ``show_result.py``, single mode): ``score`` the mean of every rating
(turns together), ``turn1`` and ``turn2`` each turn's mean, ``by_category`` each category's mean
of its ratings; ``ratings`` how many there were. The judge is named in the report's ``judged``
mark and in every record's ``judge`` channel (``judging.identity``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..data.registry import get_source
from ..errors import ConfigError
from ..ir.request import Sampling
from ..scoring.verdicts import mt_bench_rating
from ._shared import check_options, int_option
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Requirement,
    Sample,
    SampleResult,
    TaskConfig,
)
from .context import Context
from .conversation import Conversation
from .judging import JUDGE_SELF, identity, judge_self, prompt_hash, reply_text
from .mt_bench_answers import MAX_TOKENS, STANDING_IN, MtBenchAnswers

__all__ = ["TASK", "MtBench"]

NEED_REF_CATS = ("math", "reasoning", "coding")
"""The categories judged against a reference answer (FastChat's ``NEED_REF_CATS``)."""
JUDGE_MAX_TOKENS = 2048
"""FastChat's ``max_tokens`` for an OpenAI judge (``run_judge_single``)."""
PROMPTS = {
    (False, 1): "single-v1",
    (True, 1): "single-math-v1",
    (False, 2): "single-v1-multi-turn",
    (True, 2): "single-math-v1-multi-turn",
}
"""The judge prompt by (judged against a reference, turn)."""


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise ConfigError(
            f"mt_bench needs {path}, beside question.jsonl (FastChat's llm_judge data); set "
            "SIEVAL_DATA_DIR to the folder holding mt_bench/",
            path="data_dir",
        )
    # split on newlines only: the rows' strings hold other line separators (U+2028)
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


class MtBench(MtBenchAnswers):
    name = "mt_bench"
    headline = "score"
    listing = ("judged", "mt_bench")
    roles = ("judge",)
    requirements = (
        Requirement("chat", "each turn is a user message after the conversation so far"),
        Requirement("sampling", "temperature and max_tokens are set per turn"),
    )
    defaults = MappingProxyType(
        {"max_tokens": MAX_TOKENS, "judge_max_tokens": JUDGE_MAX_TOKENS, JUDGE_SELF: False}
    )
    protocol = (
        "MT-Bench (FastChat 0e6d3e4) judged: the answers as mt_bench_answers; each turn graded "
        "1-10 by the judge role with judge_prompts.jsonl (single-v1 / single-math-v1 with GPT-4's "
        "reference for math, reasoning, coding; multi-turn prompts for turn 2), temperature 0, "
        "max_tokens 2048; the rating is the first number in double brackets (else in single "
        "ones), none is a judge_parse_error left out of the means; score = mean of all ratings"
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        folder = data_dir / "mt_bench"
        return [
            *get_source("mt_bench").files(data_dir, "test"),
            folder / "judge_prompts.jsonl",
            folder / "reference_answer" / "gpt-4.jsonl",
        ]

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        self._max_tokens(config)
        self._judge_sampling(config)
        judge_self(self.name, config)
        folder = data_dir / "mt_bench"
        prompts = {p["name"]: p for p in _jsonl(folder / "judge_prompts.jsonl")}
        references = {
            r["question_id"]: list(r["choices"][0]["turns"])
            for r in _jsonl(folder / "reference_answer" / "gpt-4.jsonl")
        }
        for name in PROMPTS.values():
            if name not in prompts:
                raise ConfigError(f"judge_prompts.jsonl has no prompt {name!r}", path="data_dir")
        for _, row in get_source("mt_bench").rows(data_dir, "test"):
            category = row["category"]
            ref = references.get(row["question_id"]) if category in NEED_REF_CATS else None
            if category in NEED_REF_CATS and ref is None:
                raise ConfigError(
                    f"mt_bench question {row['question_id']} ({category}) has no reference "
                    "answer in reference_answer/gpt-4.jsonl",
                    path="data_dir",
                )
            judges = {
                turn: {
                    "name": PROMPTS[(ref is not None, turn)],
                    "system": prompts[PROMPTS[(ref is not None, turn)]]["system_prompt"],
                    "template": prompts[PROMPTS[(ref is not None, turn)]]["prompt_template"],
                }
                for turn in (1, 2)
            }
            data = {
                "category": category,
                "turns": list(row["turns"]),
                "reference": ref,
                "judges": judges,
            }
            yield Sample(id=str(row["question_id"]), data=data, gold=None, group=category)

    def describe(self, sample: Sample) -> dict[str, Any]:
        """The record keeps the question and the judge prompts' names, not their templates."""
        data = sample.data
        return {
            "category": data["category"],
            "turns": data["turns"],
            "judge_prompts": [data["judges"][t]["name"] for t in (1, 2)],
        }

    def _judge_sampling(self, config: TaskConfig) -> Sampling:
        limit = int_option(self.name, config, "judge_max_tokens", JUDGE_MAX_TOKENS, 1)
        return Sampling(temperature=0.0, max_tokens=limit)

    def _judge_requests(
        self, sample: Sample, answers: Sequence[str], config: TaskConfig
    ) -> dict[str, Any]:
        data = sample.data
        q1, q2 = data["turns"]
        refs = {}
        if data["reference"] is not None:
            refs = {"ref_answer_1": data["reference"][0], "ref_answer_2": data["reference"][1]}
        one = data["judges"][1]
        two = data["judges"][2]
        first = one["template"].format(question=q1, answer=answers[0], **refs)
        second = two["template"].format(
            question_1=q1, question_2=q2, answer_1=answers[0], answer_2=answers[1], **refs
        )
        sampling = self._judge_sampling(config)
        return {
            "turn1": Conversation(sampling=sampling, system=one["system"]).request(first),
            "turn2": Conversation(sampling=sampling, system=two["system"]).request(second),
        }

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        """The answers' calls, then the two judgments with stand-ins for the answers (each may
        add up to ``max_tokens`` tokens unseen per answer it holds)."""
        answering = list(super().calls(sample, config, model))
        unseen = self._max_tokens(config)
        judged = self._judge_requests(sample, [STANDING_IN, STANDING_IN], config)
        return [
            *answering,
            PlannedCall("turn1", judged["turn1"], role="judge", exact=False, unseen_tokens=unseen),
            PlannedCall(
                "turn2", judged["turn2"], role="judge", exact=False, unseen_tokens=2 * unseen
            ),
        ]

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        answered = await super().solve(sample, ctx)
        answers = answered.channels["answers"]
        requests = self._judge_requests(sample, answers, ctx.config)
        calls = await ctx.role("judge").gather(requests)
        replies = [reply_text(calls[name]) for name in requests]
        ratings = [mt_bench_rating(text) for text in replies]
        metrics = dict(answered.metrics)
        for turn, rating in enumerate(ratings, 1):
            if rating is not None:
                metrics[f"turn{turn}_rating"] = rating
        metrics["judge_parse_errors"] = float(sum(r is None for r in ratings))
        judges = sample.data["judges"]
        prompts = {
            judges[t]["name"]: prompt_hash(judges[t]["system"], judges[t]["template"])
            for t in (1, 2)
        }
        sampling = self._judge_sampling(ctx.config)
        return SampleResult(
            prediction=answers[1],
            gold=None,
            metrics=metrics,
            channels={
                **answered.channels,
                "ratings": ratings,
                "judge": identity(list(calls.values()), prompts, sampling),
            },
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        every: list[float] = []
        turns: dict[int, list[float]] = {1: [], 2: []}
        categories: dict[str, list[float]] = {}
        errors = 0
        n = 0
        for sample, result in results:
            n += 1
            errors += int(result.metrics.get("judge_parse_errors", 0))
            for turn in (1, 2):
                rating = result.metrics.get(f"turn{turn}_rating")
                if rating is None:
                    continue
                every.append(rating)
                turns[turn].append(rating)
                categories.setdefault(sample.group or "", []).append(rating)
        out: dict[str, Any] = {"n": n, "ratings": len(every), "judge_parse_errors": errors}
        if every:
            out["score"] = sum(every) / len(every)
        for turn, values in turns.items():
            if values:
                out[f"turn{turn}"] = sum(values) / len(values)
        out["by_category"] = {c: sum(v) / len(v) for c, v in sorted(categories.items())}
        return out


TASK = MtBench()
