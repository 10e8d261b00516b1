"""Re-running censored samples at a larger token budget: ``sieval eval --rerun-censored FACTOR``.

An opt-in stage after a run's samples (or on ``--resume`` of a finished run): every sample whose
latest record is censored (``scoring/censored.py``: the budget cut its answer before it gave one)
runs once more with each request's ``max_tokens`` multiplied by ``FACTOR`` (rounded up; the
model's ``request_defaults`` applied first, as ``Model.call`` applies them). Its new record says
so (``Record.rerun``: the factor, the budget that produced this answer and the one before), and is
the sample's latest, so the report scores it; the first record stays in ``records.jsonl`` as an
earlier line. A sample whose latest record is already a re-run at that factor or more is not run
again, so the stage is safe to repeat; a larger factor re-runs what is still censored (at that
factor times the task's own budget).

The report counts the re-runs (``censored.reruns``, ``results/tally.py``'s ``Reruns``): how many,
at which budgets, how many of them are still censored and how many failed. A re-run that fails
is recorded as failed (counted, never scored): a later ``--resume`` runs the sample again at the
task's own budget, and ``--rerun-censored`` then re-runs it if it is censored again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError
from ..ir.defaults import with_defaults
from ..ir.request import Request
from ..ir.response import Response
from ..plan.samples import Samples
from ..store.records import latest_at
from ..tasks.base import COMPLETION_MODEL, ModelFacts, Sample, SampleResult, StaticTask, TaskConfig

__all__ = ["Rerun", "censored_at", "check_factor", "larger"]

OF = "censored"
"""Why a record is a re-run (``Record.rerun["of"]``)."""


def check_factor(factor: float) -> float:
    """The factor, or a ``ConfigError`` naming the flag: a finite number above 1."""
    if not isinstance(factor, int | float) or not math.isfinite(factor) or factor <= 1:
        raise ConfigError(
            f"--rerun-censored {factor!r}: give the factor the token budget is multiplied by, a "
            "number above 1 (e.g. --rerun-censored 4)",
            path="rerun_censored",
            received=factor,
        )
    return float(factor)


def larger(request: Request, factor: float) -> Request:
    """``request`` with its ``max_tokens`` times ``factor`` (rounded up); as it is when it sets
    none."""
    budget = request.sampling.max_tokens
    if not isinstance(budget, int):
        return request
    sampling = msgspec.structs.replace(request.sampling, max_tokens=math.ceil(budget * factor))
    return msgspec.structs.replace(request, sampling=sampling)


class Rerun(StaticTask):
    """A task whose requests are another's at ``factor`` times the budget (the model's request
    defaults applied first); everything else is the task's own."""

    def __init__(self, task: StaticTask, factor: float, defaults: Mapping[str, Any]) -> None:
        self.task = task
        self.factor = factor
        self.request_defaults = defaults
        self.name, self.protocol, self.headline = task.name, task.protocol, task.headline
        self.requirements, self.defaults = task.requirements, task.defaults
        self.keeps_predictions, self.cluster_by = task.keeps_predictions, task.cluster_by
        self.metric_ranges, self.derived = task.metric_ranges, task.derived

    def load(self, data_dir: Path, config: TaskConfig) -> Iterable[Sample]:
        return self.task.load(data_dir, config)

    def describe(self, sample: Sample) -> dict[str, Any]:
        return self.task.describe(sample)

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        return self.task.score(sample, responses, config, model)

    async def score_async(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        return await self.task.score_async(sample, responses, config, model)

    def _first(self, sample: Sample, config: TaskConfig, model: ModelFacts) -> dict[str, Request]:
        named = self.task.requests(sample, config, model)
        return {name: with_defaults(r, self.request_defaults) for name, r in named.items()}

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> dict[str, Request]:
        return {n: larger(r, self.factor) for n, r in self._first(sample, config, model).items()}

    def rerun_of(self, sample: Sample, config: TaskConfig, model: ModelFacts) -> dict[str, Any]:
        """What the re-run's record says of its budget (``Record.rerun``)."""
        first = self._first(sample, config, model)
        return {
            "of": OF,
            "factor": self.factor,
            "max_tokens": {n: larger(r, self.factor).sampling.max_tokens for n, r in first.items()},
            "was": {n: r.sampling.max_tokens for n, r in first.items()},
        }


def censored_at(path: Path, samples: Samples, factor: float) -> list[int]:
    """The positions of the samples whose latest record is scored and censored, and not a
    re-run at ``factor`` or more already."""
    out = []
    for at, record in latest_at(path, samples.position, len(samples)):
        if record.status != "ok" or record.metrics.get("censored") != 1.0:
            continue
        had = (record.rerun or {}).get("factor")
        if isinstance(had, int | float) and had >= factor:
            continue
        out.append(at)
    return sorted(out)
