"""The contract every task follows: data -> named IR requests -> per-sample metrics -> aggregate.

A task speaks only the IR. It declares what it needs from a dialect (``requirements``) so a run
can be refused before its first request when the chosen dialect cannot serve it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec

from ..ir.request import Request
from ..ir.response import Response

__all__ = [
    "COMPLETION_MODEL",
    "ModelFacts",
    "Readiness",
    "Requirement",
    "Sample",
    "SampleResult",
    "Task",
    "TaskConfig",
    "describe",
]


@dataclass(frozen=True)
class Requirement:
    """A capability key the dialect must support (see ``ir/capabilities.py``), with a reason."""

    capability: str
    why: str
    min_top_k: int = 0
    """For ``input_top_k`` / ``sampled_top_k``: the smallest k the task will ask for."""


class Readiness(msgspec.Struct, frozen=True, kw_only=True):
    """What a task's check before the run found (``Task.check_ready``): it raises
    ``ConfigError`` naming the fix when the task cannot be scored here."""

    said: tuple[str, ...] = ()
    """Lines the run prints before its first request."""
    warnings: tuple[str, ...] = ()
    """Lines the run warns of, before its first request and in its report."""
    record: dict[str, Any] = {}
    """What the report keeps of it, under the task's name (``report.json``: ``ready``)."""


class TaskConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a config's ``tasks:`` entry may set; everything that can change a score."""

    name: str
    n: int | None = None
    """How many samples to evaluate (the first n in the task's fixed order); None = all."""
    num_fewshot: int | None = None
    """Shots per prompt; None = the task's default."""
    seed: int = 1234
    """Seed for shot sampling and any other draw the task makes."""
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    """Task-specific options, e.g. ``top_k`` for CLP."""


class ModelFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a task may know of the model it asks, resolved by the runner before the first sample
    (from the model's dialect table and, for ``token_ids``, the server's tokenizer)."""

    input_kind: Literal["completion", "chat"] = "completion"
    """``chat`` when the model's dialect takes only chat input: the prompt becomes one user
    message (through the model's chat template)."""
    capabilities: frozenset[str] = frozenset()
    """The capability keys the model's dialect supports (``sieval dialects``)."""
    token_ids: dict[str, int] = {}
    """The texts of the task's ``token_texts`` that are one token of the model's tokenizer, with
    that token's id (choice scoring by id needs no top-k)."""
    max_length: int | None = None
    """The server's maximum model length (prompt and generated tokens), when it reports one."""
    prefix_token_id: int | None = None
    """The BOS the server's tokenizer puts before a text prompt, when it adds one."""
    documents: dict[str, tuple[int, ...]] | None = None
    """The token ids (no special tokens) of the texts a task's ``documents`` names, read through
    the server's tokenizer before the run; None until then."""


COMPLETION_MODEL = ModelFacts()
"""The facts assumed when a caller gives none: a raw-text completion model."""


class Sample(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    """Stable across runs: the resume key."""
    data: dict[str, Any]
    gold: Any
    group: str | None = None
    """For tasks reported per group (MMLU subject)."""


class SampleResult(msgspec.Struct, kw_only=True):
    prediction: Any
    gold: Any
    metrics: dict[str, float]
    channels: dict[str, Any] = msgspec.field(default_factory=dict)
    """The response channels the score used (e.g. continuation token logprobs and offsets)."""


class Task(Protocol):
    """The contract. A task may also define, and the runner then uses:

    * ``requirements_for(model: ModelFacts)``: requirements that depend on the model (a chat
      model needs ``chat`` instead of ``text_prompt``);
    * ``protocol_for(model: ModelFacts)``: the protocol as run for that model (recorded);
    * ``token_texts(config)``: texts whose single-token ids the runner resolves into
      ``ModelFacts.token_ids`` through the server's tokenizer;
    * ``documents(samples, config)``: texts the runner tokenises whole through the server's
      tokenizer into ``ModelFacts.documents`` (with ``max_length`` and ``prefix_token_id``),
      before the run (rolling log-likelihood);
    * ``describe(sample)``: the sample as a reader of its record needs it (``describe`` below is
      the default).
    * ``score_async(sample, responses, config, model)``: a coroutine the runner awaits instead
      of ``score`` (a checker that runs the answer's code in the sandbox);
    * ``check_ready(allow_unsafe_code)``: a ``Readiness``, before the run's first request (the
      code tasks choose their sandbox and run a trivial program in it), or ``ConfigError``
      naming the fix;
    * ``samples_per_row(config)``: how many samples each row is (repeats); the config's ``n``
      then counts rows, ``n * samples_per_row`` samples;
    * ``keeps_predictions = True``: ``aggregate``'s results hold each sample's ``prediction`` too
      (maj@k votes over the repeats' extracted answers);
    * ``cluster_by = "group"``: samples of one ``Sample.group`` are not independent draws (MMLU's
      subjects); their metrics' standard errors are clustered by group. ``cluster_by = "item"``:
      the repeats of one row (ids ``<id>#r<i>``) are clustered by the row, when there are any.
    * ``metric_ranges``: ``{metric: (lowest, highest)}`` for per-sample metrics with a range
      other than a 0/1 proportion's (TruthfulQA MC2's probability mass in [0, 1], a
      log-likelihood at most 0): it picks the metric's interval, which stays in it
      (``scoring/uncertainty.py``);
    * ``derived``: ``{figure: uncertainty.Derived}`` for figures ``aggregate`` computes from sums
      of per-sample metrics (a perplexity, bits per byte), so that the report gives them an
      interval too.
    """

    name: str
    protocol: str
    """The scoring protocol in one line, recorded with every result."""
    headline: str
    """The metric reported first."""
    requirements: Sequence[Requirement]
    defaults: Mapping[str, Any]
    """What ``num_fewshot`` and the task's options default to (shown by ``sieval tasks``)."""

    def data_files(self, data_dir: Path) -> list[Path]:
        """The files this task reads (their checksums enter the run identity)."""
        ...

    def load(self, data_dir: Path, config: TaskConfig) -> Iterable[Sample]:
        """All evaluation samples in a fixed order (shots already drawn into ``data``). It may
        yield them one at a time: the plan stores each as it comes (``runner/samples.py``) and
        stops reading at the config's ``n``."""
        ...

    def requests(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Mapping[str, Request]:
        """Named requests for one sample; they may run concurrently."""
        ...

    def score(
        self,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts = COMPLETION_MODEL,
    ) -> SampleResult:
        """Metrics of one sample from its responses; raise a ``SievalError`` if they cannot be
        trusted (a failed sample is recorded as failed, never as wrong)."""
        ...

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        """Run-level metrics (means, per-group breakdowns) from each sample's ``metrics`` and
        ``group``: the report passes, in the task's sample order, samples that hold only their
        ``id`` and ``group`` and results that hold only their metrics (and their prediction with
        ``keeps_predictions``; it never decodes a
        record's channels, nor keeps every record, to aggregate). Iterate ``results`` rather
        than index it: it may be a view built as it is read."""
        ...


SHARED_FIELDS = ("fewshot", "shot_ids")
"""Sample data that is the same for every sample of a run (the shots): not repeated in records;
each request's body holds the prompt as sent."""


def describe(task: Any, sample: Sample) -> dict[str, Any]:
    """What a record keeps of its sample: the task's ``describe``, else the sample's data without
    the shots, plus the gold answer."""
    special = getattr(task, "describe", None)
    if special is not None:
        described: dict[str, Any] = special(sample)
        return described
    out = {k: v for k, v in sample.data.items() if k not in SHARED_FIELDS}
    out["gold"] = sample.gold
    return out
