"""A task as data: where its rows come from, how its prompt is made, which family scores it.

``Spec`` is the whole declaration; ``SpecTask(spec)`` is the (static) ``Task`` the runner runs. A
task module holds one spec and ``TASK = SpecTask(SPEC)``; the registry finds it. What is common to
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
from typing import Any, Protocol

import msgspec

from ..data.registry import get_source
from ..errors import ConfigError, did_you_mean
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
    StaticTask,
    TaskConfig,
)
from .families.base import Family, Prepared
from .prompt import Prompt, Shot
from .shots import RANDOM, Sampler

__all__ = ["Data", "Spec", "SpecTask"]

Process = Callable[[dict[str, Any], str], dict[str, Any]]
"""A row's fields (and where it was read) to the fields the prompt reads (lm-eval's
``process_docs``, one row at a time)."""


class Rows(Protocol):
    """What a task reads its rows through: a stored dataset (``data/source.py``'s ``Source``),
    a task's own files (``data/file_data.py``'s ``FileData``) or a hub dataset (``HubData``)."""

    @property
    def folder(self) -> str: ...

    @property
    def splits(self) -> tuple[str, ...]: ...

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]: ...

    def rows(
        self, data_dir: Path, split: str, subset: str | None = None
    ) -> list[tuple[str, dict[str, Any]]]: ...


def source(name: str | Rows) -> Rows:
    """The rows' reader: a stored dataset by its folder name, or the reader itself."""
    return get_source(name) if isinstance(name, str) else name


ProcessSplit = Callable[[list[tuple[str, dict[str, Any]]]], list[tuple[str, dict[str, Any]]]]
"""A whole split's rows to the rows scored (lm-eval's ``process_docs``, which may drop, add or
reorder rows)."""


@dataclass(frozen=True, kw_only=True)
class Data:
    """Where a task's rows come from."""

    source: str | Rows
    """The dataset folder (its loader ``sieval/data/<source>.py``), or a reader of the task's
    own files (``data/file_data.py``)."""
    split: str
    """The split scored."""
    shots: str | None = None
    """The split shots are drawn from (lm-eval's ``fewshot_split``, else its fallback: train,
    else validation, else test); None: the task takes no shots."""
    sampler: Sampler = RANDOM
    subsets: tuple[str, ...] = ()
    """Parts read one by one (MMLU's subjects): each sample's group, each with its own shots."""
    subset_option: str = ""
    """The task option that chooses some of the subsets (MMLU's ``subjects``: ``all``, or names
    and groups joined by ``+``); empty: every subset is run."""
    subset_groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Names that stand for several subsets in that option (lm-eval's ``stem``)."""
    process: Process | None = None
    process_split: ProcessSplit | None = None
    """Applied to each split's rows after ``process`` (lm-eval's ``process_docs`` as written)."""
    shot_rows: tuple[dict[str, Any], ...] | None = None
    """Shots written in the task itself (lm-eval's ``fewshot_config.samples``), drawn instead of
    a split's rows."""
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
    fixed_shots: int = 0
    """Shots written into the prompt itself (BBH's 3 CoT examples in each subtask's prompt
    file): not drawn, not changed by ``num_fewshot``; ``sieval tasks`` shows them as shots."""
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
    shot_prompt: Prompt | None = None
    """How a shot is rendered when it differs from the row's prompt (lm-eval's
    ``fewshot_config.doc_to_*`` and delimiters); None: ``prompt``."""


class SpecTask(StaticTask):
    """The ``Task`` a spec stands for: its requests and score are the family's."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.name = spec.name
        self.headline = spec.headline
        self.protocol = spec.protocol or spec.family.protocol(spec)
        self.requirements = spec.family.requirements(spec, COMPLETION_MODEL)
        chooses = {spec.data.subset_option: "all"} if spec.data.subset_option else {}
        self.defaults = MappingProxyType(
            {"num_fewshot": spec.num_fewshot, **spec.family.options, **chooses}
        )
        if spec.cluster_by_group:
            self.cluster_by = "group"
        elif hasattr(spec.family, "repeats"):  # a repeated row's samples cluster by the row
            self.cluster_by = "item"
        # maj@k reads the repeats' answers; a corpus-level metric its items
        self.keeps_predictions = bool(
            getattr(spec.family, "vote", False) or getattr(spec.family, "custom", None)
        )
        self.metric_ranges = MappingProxyType(dict(getattr(spec.family, "ranges", {})))
        self.derived = MappingProxyType({**getattr(spec.family, "derived", {}), **spec.derived})

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
        chosen = self.subsets(config) or (None,)
        per_subset = [self._subset(data_dir, config, k, s) for s in chosen]
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

    # -- the hooks, the family's where it has them -----------------------------------------------

    def requirements_for(self, model: ModelFacts) -> tuple[Requirement, ...]:
        return self.spec.family.requirements(self.spec, model)

    def protocol_for(self, model: ModelFacts) -> str:
        family: Any = self.spec.family
        if not hasattr(family, "protocol_for"):
            return self.protocol
        return str(family.protocol_for(self.spec, model, self.protocol))

    def token_texts(self, config: TaskConfig) -> tuple[str, ...]:
        family: Any = self.spec.family
        return (
            tuple(family.token_texts(self.spec, config)) if hasattr(family, "token_texts") else ()
        )

    def documents(self, samples: Sequence[Sample], config: TaskConfig) -> Iterator[str]:
        family: Any = self.spec.family
        if not hasattr(family, "documents"):
            return iter(())
        return iter(family.documents(self.spec, samples, config))

    async def score_async(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        """The family's ``score_async`` where it has one (a checker that runs the answer's
        code, awaited inside the run's loop), else ``score``."""
        family: Any = self.spec.family
        if not hasattr(family, "score_async"):
            return self.score(sample, responses, config, model)
        result: SampleResult = await family.score_async(self.spec, sample, responses, config, model)
        return result

    def check_ready(self, allow_unsafe_code: bool = False) -> Readiness:
        family: Any = self.spec.family
        if not hasattr(family, "check_ready"):
            return Readiness()
        found: Readiness = family.check_ready(self.spec, allow_unsafe_code)
        return found

    # -- loading ----------------------------------------------------------------------------------

    def subsets(self, config: TaskConfig) -> tuple[str, ...]:
        """The subsets the entry runs, in the data's order: all of them, or those its subset
        option names (each a subset or a group of them; ``+``, ``,`` or spaces between)."""
        data = self.spec.data
        value = config.options.get(data.subset_option, "all") if data.subset_option else "all"
        items = value if isinstance(value, list) else str(value).replace(",", "+").split("+")
        words = [w for item in items for w in str(item).split() if w]
        if words == ["all"] or not data.subset_option:
            return data.subsets
        known = {*data.subsets, *data.subset_groups}
        wanted: set[str] = set()
        for word in words:
            if word not in known:
                raise ConfigError(
                    f"task {self.name}: {data.subset_option} {word!r} is neither one of its "
                    f"{len(data.subsets)} subsets nor a group."
                    f"{did_you_mean(word, known)} Groups: {', '.join(data.subset_groups)}; "
                    f"subsets: {', '.join(data.subsets[:3])}, ... ({len(data.subsets)} in all)",
                    path=f"tasks.{self.name}.options.{data.subset_option}",
                    received=word,
                )
            wanted |= set(data.subset_groups.get(word, (word,)))
        return tuple(s for s in data.subsets if s in wanted)

    def _check(self, config: TaskConfig) -> int:
        allowed = set(self.spec.family.options) | (
            {self.spec.data.subset_option} if self.spec.data.subset_option else set()
        )
        unknown = sorted(set(config.options) - allowed)
        if unknown:
            raise ConfigError(
                f"task {self.name} has no option {', '.join(unknown)}."
                f"{did_you_mean(unknown[0], allowed)} "
                f"It accepts: {', '.join(sorted(allowed)) or '(none)'}",
                path=f"tasks.{self.name}.options",
                received=unknown,
            )
        self.subsets(config)
        if self.spec.data.subset_option in config.options:  # the family sees its own options
            own = {k: v for k, v in config.options.items() if k != self.spec.data.subset_option}
            config = msgspec.structs.replace(config, options=own)
        self.spec.family.check_options(self.spec, config)
        k = self.spec.num_fewshot if config.num_fewshot is None else config.num_fewshot
        if k < 0:
            raise ConfigError(
                f"task {self.name}: num_fewshot must be >= 0, got {k}",
                path=f"tasks.{self.name}.num_fewshot",
                received=k,
            )
        if k and self.spec.data.shots is None and self.spec.data.shot_rows is None:
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
            out = [(where, dict(fields)) for where, fields in rows]
        else:
            out = [(where, process(dict(fields), where)) for where, fields in rows]
        whole = self.spec.data.process_split
        return out if whole is None else whole(out)

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
        shot_prompt = self.spec.shot_prompt or prompt
        shots: dict[int, Shot] = {}
        last: tuple[tuple[int, ...], str] | None = None  # rows that share shots share a prefix
        for index, ((_, row), drawn) in enumerate(zip(rows, draws, strict=True)):
            picked = tuple(drawn)
            for j in picked:
                if j not in shots:
                    shots[j] = shot_prompt.shot(pool[j][1])
            if prompt.description or last is None or last[0] != picked:
                # a description is rendered with the row: each row has its own prefix
                last = (picked, prompt.prefix(row, [shots[j] for j in picked], shot_prompt))
            prefix = last[1]
            prepared = self.spec.family.prepare(self.spec, row, config)
            if config.fewshot_as_multiturn and picked:  # the shots as turns, not as text
                turns = prompt.turns(row, [shots[j] for j in picked])
                prepared = Prepared(data={**prepared.data, **turns}, gold=prepared.gold)
                prefix = ""
            yield self._sample(index, row, subset, prepared, prefix, picked, pool)

    def _pool(
        self,
        data_dir: Path,
        data: Data,
        subset: str | None,
        k: int,
        rows: list[tuple[str, dict[str, Any]]],
    ) -> list[tuple[str, dict[str, Any]]]:
        if k and data.shot_rows is not None:
            return [(f"fewshot_config.samples[{i}]", dict(r)) for i, r in enumerate(data.shot_rows)]
        if not k or data.shots is None:
            return []
        if data.shots == data.split:
            return rows
        if data.shots not in source(data.source).splits:
            raise ConfigError(
                f"task {self.name}: num_fewshot={k} needs shots from the {data.shots!r} split of "
                f"{source(data.source).folder}, which is not stored; run it 0-shot",
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
