"""MT-Bench's answers, two turns and no judge yet (Zheng et al. 2023, "Judging LLM-as-a-Judge with
MT-Bench and Chatbot Arena", https://arxiv.org/abs/2306.05685).

Each of the 80 questions is a conversation, as FastChat's ``gen_api_answer`` holds it: the first
turn asked, the model answers, then the second turn asked after the model's own first answer
(its text sent back as the assistant's turn), with no system message; the temperature per
category is FastChat's ``temperature_config`` (writing and roleplay 0.7, STEM and humanities
0.1, the others 0; where it samples, the run's seed, on a wire that takes one: the Responses and
Messages wires have none, so there those answers are not reproducible), at most ``max_tokens``
1024 a turn (``max_new_token``).

The score is a **placeholder**, named for what it is: ``complete`` is 1 when both turns came
back with an answer the model ended itself (text, not cut at ``max_tokens``), beside each turn's
length in characters and whether it was cut. The judged score (1-10 by a judge model, per turn
and category) is the judged task's, which reads these answers' records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec

from ..data.registry import get_source
from ..ir.request import Sampling
from ..ir.response import ended_for_length
from ._shared import check_options, grouped_means, int_option, means
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
from .conversation import Conversation, message

__all__ = ["TASK", "MtBenchAnswers"]

TEMPERATURE = {
    "writing": 0.7, "roleplay": 0.7, "extraction": 0.0, "math": 0.0, "coding": 0.0,
    "reasoning": 0.0, "stem": 0.1, "humanities": 0.1,
}  # fmt: skip
"""FastChat's ``temperature_config`` (``fastchat/llm_judge/common.py``)."""
MAX_TOKENS = 1024
"""FastChat's ``max_new_token`` default."""
STANDING_IN = "(the model's first answer)"
"""The first answer in the request that stands for turn 2 before I/O (the forecast's bound adds
the answer's ``max_tokens`` to it)."""


class MtBenchAnswers(Task):
    name = "mt_bench_answers"
    headline = "complete"
    listing = ("2 turns", "mt_bench")
    requirements = (
        Requirement("chat", "each turn is a user message after the conversation so far"),
        Requirement("sampling", "temperature and max_tokens are set per turn"),
    )
    defaults = MappingProxyType({"max_tokens": MAX_TOKENS})
    protocol = (
        "MT-Bench (FastChat 0e6d3e4): two turns, the second after the model's own first answer, "
        "no system message; temperature by category (temperature_config; seeded where the wire "
        "takes a seed), max_tokens 1024 a turn; placeholder score, no judge: complete = both "
        "turns answered and not cut"
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return get_source("mt_bench").files(data_dir, "test")

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        self._max_tokens(config)
        for _, row in get_source("mt_bench").rows(data_dir, "test"):
            data = {"category": row["category"], "turns": list(row["turns"])}
            yield Sample(id=str(row["question_id"]), data=data, gold=None, group=row["category"])

    def _max_tokens(self, config: TaskConfig) -> int:
        return int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)

    def _sampling(self, sample: Sample, config: TaskConfig, model: ModelFacts) -> Sampling:
        temperature = TEMPERATURE.get(sample.data["category"], 0.7)
        sampling = Sampling(temperature=temperature, max_tokens=self._max_tokens(config))
        if temperature > 0 and "seed" in model.capabilities:  # a resumed run asks the same
            sampling = msgspec.structs.replace(sampling, seed=config.seed)
        return sampling

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        """Turn 1 as sent; turn 2 with a stand-in for the first answer, which may add up to
        ``max_tokens`` tokens unseen."""
        first, second = sample.data["turns"]
        chat = Conversation(sampling=self._sampling(sample, config, model))
        later = Conversation(
            sampling=chat.sampling,
            messages=[message("user", first), message("assistant", STANDING_IN)],
        )
        return [
            PlannedCall("turn1", chat.request(first)),
            PlannedCall(
                "turn2",
                later.request(second),
                exact=False,
                unseen_tokens=self._max_tokens(config),
            ),
        ]

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        chat = Conversation(sampling=self._sampling(sample, ctx.config, ctx.facts))
        answers = [
            await chat.ask(ctx, f"turn{i}", q) for i, q in enumerate(sample.data["turns"], 1)
        ]
        texts = [a.text for a in answers]
        finish = [a.finish_reason if isinstance(a.finish_reason, str) else None for a in answers]
        cut = [ended_for_length(f) for f in finish]
        metrics = {
            "complete": float(all(t.strip() for t in texts) and not any(cut)),
            "turn1_chars": float(len(texts[0])),
            "turn2_chars": float(len(texts[1])),
            "turn1_cut": float(cut[0]),
            "turn2_cut": float(cut[1]),
        }
        return SampleResult(
            prediction=texts[1],
            gold=None,
            metrics=metrics,
            channels={"answers": texts, "finish_reasons": finish},
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        kept = list(results)
        out = means(kept)
        out["by_category"] = grouped_means(kept, lambda s: s.group or "")
        return out


TASK = MtBenchAnswers()
