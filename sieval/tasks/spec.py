"""A task as data: where its rows come from, how its prompt is made, which family scores it.

``Spec`` is the whole declaration; ``SpecTask(spec)`` is the ``Task`` the runner runs. A task
module holds one spec and ``TASK = SpecTask(SPEC)``; the registry finds it. What is common to
every task (reading the rows, drawing the shots, checking the options, the sample ids, the
per-group breakdowns) is done here once; what differs between kinds of task (the requests and the
metrics) is the family's (``families/``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec

from ..data.registry import get_source as source
from ..errors import ConfigError
from ..ir.request import Request
from ..ir.response import Response
from ..scoring.uncertainty import Derived
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    Readiness,
    Requirement,
    Sample,
    SampleResult,
    TaskConfig,
)
from .families.base import Family, Prepared
from .prompt import Prompt, Shot
from .shots import RANDOM, Sampler

__all__ = ["Data", "Spec", "SpecTask"]

Process = Callable[[dict[str, Any], str], dict[str, Any]]
"""A row's fields (and where it was read) to the fields the prompt reads (lm-eval's
``process_docs``, one row at a time)."""


@dataclass(frozen=True, kw_only=True)
class Data:
    """Where a task's rows come from."""

    source: str
    """The dataset folder (its loader ``sieval/data/<source>.py``)."""
    split: str
    """The split scored."""
    shots: str | None = None
    """The split shots are drawn from (lm-eval's ``fewshot_split``, else its fallback: train,
    else validation, else test); None: the task takes no shots."""
    sampler: Sampler = RANDOM
    subsets: tuple[str, ...] = ()
    """Parts read one by one (MMLU's subjects): each sample's group, each with its own shots."""
    process: Process | None = None
    id_field: str | None = None
    """A field holding the row's id; None: ``{split}/{index}`` (``{subset}/{index}``)."""


@dataclass(frozen=True, kw_only=True)
class Spec:
    name: str
    about: str
    """The paper and its link."""
    reference: str
    """What the task follows, e.g. ``lm-eval 0.4.13 tasks/arc/arc_easy.yaml``."""
    data: Data
    prompt: Prompt
    family: Family
    headline: str
    num_fewshot: int = 0
    differs: str = ""
    """Where sieval deliberately departs from the reference (said in the protocol)."""
    protocol: str | None = None
    """The protocol line; None: the family's description of this spec."""
    extra: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    """Row fields a record keeps beside the family's (ARC's choice labels)."""
    figures: Callable[[Iterable[tuple[Sample, SampleResult]]], dict[str, Any]] | None = None
    """The task's figures when they are not the family's (MMLU's lm-eval group aggregates)."""
    breakdowns: Mapping[str, Callable[[str], str]] = field(default_factory=dict)
    """Per-group means reported beside the headline, named: ``{"by_subject": lambda g: g}``."""
    cluster_by_group: bool = False
    derived: Mapping[str, Derived] = field(default_factory=dict)
    """Figures made of sums that ``figures`` computes (IFEval's instruction-level accuracy,
    weighted by instructions), with their intervals; beside the family's own."""
    files: Callable[[Path], list[Path]] | None = None
    """Files the task reads beside its rows' (BBH's prompt files): their checksums enter the run
    identity."""


class SpecTask:
    """The ``Task`` a spec stands for."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.name = spec.name
        self.headline = spec.headline
        self.protocol = spec.protocol or spec.family.protocol(spec)
        self.requirements = spec.family.requirements(spec, COMPLETION_MODEL)
        self.defaults = MappingProxyType({"num_fewshot": spec.num_fewshot, **spec.family.options})
        if spec.cluster_by_group:
            self.cluster_by = "group"
        elif hasattr(spec.family, "repeats"):  # a repeated row's samples cluster by the row
            self.cluster_by = "item"
        if getattr(spec.family, "vote", False):  # maj@k reads the repeats' answers
            self.keeps_predictions = True
        self.metric_ranges = MappingProxyType(dict(getattr(spec.family, "ranges", {})))
        self.derived = MappingProxyType({**getattr(spec.family, "derived", {}), **spec.derived})
        for hook in ("protocol_for", "token_texts", "documents", "score_async", "check_ready"):
            if hasattr(spec.family, hook):
                setattr(self, hook, getattr(self, f"_{hook}"))

    # -- what the runner asks -------------------------------------------------------------------

    def data_files(self, data_dir: Path) -> list[Path]:
        data = self.spec.data
        src = source(data.source)
        splits = [data.split]
        if data.shots is not None and data.shots != data.split and data.shots in src.splits:
            splits.insert(0, data.shots)
        found = [
            path
            for subset in data.subsets or (None,)
            for split in splits
            for path in src.files(data_dir, split, subset)
        ]
        return found + (self.spec.files(data_dir) if self.spec.files is not None else [])

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        """The samples in a fixed order, built as they are read (rows and shots read first)."""
        k = self._check(config)
        data = self.spec.data
        per_subset = [self._subset(data_dir, config, k, s) for s in data.subsets or (None,)]
        if len(per_subset) == 1:
            samples = per_subset[0]
        else:  # one row of every subset in turn, so that a small n spans them all
            samples = (s for row in zip_longest(*per_subset) for s in row if s is not None)
        n = self.samples_per_row(config)
        return samples if n == 1 else _repeated(samples, n)

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        return self.spec.family.requests(self.spec, sample, config, model)

    def samples_per_row(self, config: TaskConfig) -> int:
        """How many samples each row is (its repeats): the runner's ``n`` counts rows."""
        repeats = getattr(self.spec.family, "repeats", None)
        return int(repeats(self.spec, config)) if repeats is not None else 1

    def arguments(self, sample: Sample, config: TaskConfig) -> dict[str, tuple[str, ...]]:
        """The strings each request scores, in lm-eval's form (``(context, continuation)``, or
        ``(document,)``), for the families that have them (the parity evidence compares them)."""
        found: dict[str, tuple[str, ...]] = self.spec.family.arguments(self.spec, sample, config)  # type: ignore[attr-defined]
        return found

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        return self.spec.family.score(self.spec, sample, responses, config, model)

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        figures = self.spec.figures
        out = figures(results) if figures else self.spec.family.aggregate(self.spec, results)
        for name, key in self.spec.breakdowns.items():
            out[name] = self.spec.family.grouped(self.spec, results, key)
        return out

    # -- optional hooks, present when the family has them ---------------------------------------

    def requirements_for(self, model: ModelFacts) -> tuple[Requirement, ...]:
        return self.spec.family.requirements(self.spec, model)

    def _protocol_for(self, model: ModelFacts) -> str:
        return str(self.spec.family.protocol_for(self.spec, model, self.protocol))  # type: ignore[attr-defined]

    def _token_texts(self, config: TaskConfig) -> tuple[str, ...]:
        return tuple(self.spec.family.token_texts(self.spec, config))  # type: ignore[attr-defined]

    async def _score_async(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        family: Any = self.spec.family
        result: SampleResult = await family.score_async(self.spec, sample, responses, config, model)
        return result

    def _check_ready(self, allow_unsafe_code: bool = False) -> Readiness:
        found: Readiness = self.spec.family.check_ready(self.spec, allow_unsafe_code)  # type: ignore[attr-defined]
        return found

    def _documents(self, samples: Sequence[Sample], config: TaskConfig) -> Iterator[str]:
        return iter(self.spec.family.documents(self.spec, samples, config))  # type: ignore[attr-defined]

    # -- loading ----------------------------------------------------------------------------------

    def _check(self, config: TaskConfig) -> int:
        allowed = set(self.spec.family.options)
        unknown = sorted(set(config.options) - allowed)
        if unknown:
            raise ConfigError(
                f"task {self.name} has no option {', '.join(unknown)}; "
                f"it accepts: {', '.join(sorted(allowed)) or '(none)'}",
                path=f"tasks.{self.name}.options",
                received=unknown,
            )
        self.spec.family.check_options(self.spec, config)
        k = self.spec.num_fewshot if config.num_fewshot is None else config.num_fewshot
        if k < 0:
            raise ConfigError(
                f"task {self.name}: num_fewshot must be >= 0, got {k}",
                path=f"tasks.{self.name}.num_fewshot",
                received=k,
            )
        if k and self.spec.data.shots is None:
            raise ConfigError(
                f"task {self.name} is 0-shot; drop num_fewshot", path=f"tasks.{self.name}"
            )
        return k

    def _rows(
        self, data_dir: Path, split: str, subset: str | None
    ) -> list[tuple[str, dict[str, Any]]]:
        process = self.spec.data.process
        rows = source(self.spec.data.source).rows(data_dir, split, subset)
        if process is None:
            return [(where, dict(fields)) for where, fields in rows]
        return [(where, process(dict(fields), where)) for where, fields in rows]

    def _subset(
        self, data_dir: Path, config: TaskConfig, k: int, subset: str | None
    ) -> Iterator[Sample]:
        """The subset's samples: rows, pool and shots read now (a bad file or too few shots is
        an error here), the samples built as they are read."""
        data = self.spec.data
        rows = self._rows(data_dir, data.split, subset)
        pool = self._pool(data_dir, data, subset, k, rows)
        draws = (
            list(
                data.sampler.draw(
                    [f for _, f in pool], [f for _, f in rows], k, config.seed, self.name
                )
            )
            if k
            else [[] for _ in rows]
        )
        return self._samples(config, subset, rows, pool, draws)

    def _samples(
        self,
        config: TaskConfig,
        subset: str | None,
        rows: list[tuple[str, dict[str, Any]]],
        pool: list[tuple[str, dict[str, Any]]],
        draws: list[list[int]],
    ) -> Iterator[Sample]:
        prompt = self.spec.prompt
        shots: dict[int, Shot] = {}
        last: tuple[tuple[int, ...], str] | None = None  # rows that share shots share a prefix
        for index, ((_, row), drawn) in enumerate(zip(rows, draws, strict=True)):
            picked = tuple(drawn)
            for j in picked:
                if j not in shots:
                    shots[j] = prompt.shot(pool[j][1])
            if prompt.description or last is None or last[0] != picked:
                # a description is rendered with the row: each row has its own prefix
                last = (picked, prompt.prefix(row, [shots[j] for j in picked]))
            prefix = last[1]
            prepared = self.spec.family.prepare(self.spec, row, config)
            yield self._sample(index, row, subset, prepared, prefix, picked, pool)

    def _pool(
        self,
        data_dir: Path,
        data: Data,
        subset: str | None,
        k: int,
        rows: list[tuple[str, dict[str, Any]]],
    ) -> list[tuple[str, dict[str, Any]]]:
        if not k or data.shots is None:
            return []
        if data.shots == data.split:
            return rows
        if data.shots not in source(data.source).splits:
            raise ConfigError(
                f"task {self.name}: num_fewshot={k} needs shots from the {data.shots!r} split of "
                f"{data.source}, which is not stored; run it 0-shot",
                path=f"tasks.{self.name}.num_fewshot",
                received=k,
            )
        return self._rows(data_dir, data.shots, subset)

    def _id(self, index: int, row: Mapping[str, Any], split: str, subset: str | None) -> str:
        if self.spec.data.id_field is not None:
            return str(row[self.spec.data.id_field])
        return f"{subset or split}/{index}"

    def _sample(
        self,
        index: int,
        row: dict[str, Any],
        subset: str | None,
        prepared: Prepared,
        fewshot: str,
        picked: tuple[int, ...],
        pool: list[tuple[str, dict[str, Any]]],
    ) -> Sample:
        data = self.spec.data
        shot_split = data.shots or data.split
        shot_ids = [self._id(j, pool[j][1], shot_split, subset) for j in picked]
        fields = {"fewshot": fewshot, **prepared.data, "shot_ids": shot_ids}
        if self.spec.extra is not None:
            fields.update(self.spec.extra(row))
        return Sample(
            id=self._id(index, row, data.split, subset),
            data=fields,
            gold=prepared.gold,
            group=subset,
        )


def _repeated(samples: Iterable[Sample], n: int) -> Iterator[Sample]:
    """Each sample ``n`` times, as ``<id>#r<i>`` with ``repeat: i`` in its data (a family with
    ``repeats`` reads it)."""
    for sample in samples:
        for i in range(n):
            yield msgspec.structs.replace(
                sample, id=f"{sample.id}#r{i}", data={**sample.data, "repeat": i}
            )
