"""A finished run as every exporter reads it: ``report.json`` for the figures, ``run.json`` for
the config, the records for the samples (each request's body expanded to what was sent).

Exporters never recompute a figure: a value, its standard error and its interval are the
report's, so an export and ``sieval report`` never disagree. What they derive is only the shape
another tool expects (a metric name, a file name, a hash).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import ConfigError
from ..results.document import Report, UnitResult
from ..results.explain import prompt_text
from ..results.shots import shots
from ..results.snapshot import snapshot
from ..results.view import units
from ..store.records import Record, RequestRecord, expand_requests
from ..store.rundir import read_run_json

if TYPE_CHECKING:
    from ..tasks.base import Task

__all__ = ["Sample", "Source", "TaskRun", "generation_of", "load_source", "sha256"]


@dataclass(frozen=True)
class Sample:
    """One recorded sample with its requests expanded (in the task's request order)."""

    record: Record
    requests: dict[str, RequestRecord]

    @property
    def prompt(self) -> str | None:
        """The first request's input as text."""
        first = next(iter(self.requests.values()), None)
        return prompt_text(first) if first is not None else None

    @property
    def usage(self) -> dict[str, int]:
        """The tokens of every request of the sample, summed per key."""
        total: dict[str, int] = {}
        for request in self.requests.values():
            for key, value in request.usage.items():
                total[key] = total.get(key, 0) + int(value)
        return total

    @property
    def replicas(self) -> list[str]:
        """The replicas that answered the sample's requests, in request order, each once."""
        found = [getattr(r, "replica", None) for r in self.requests.values()]
        return list(dict.fromkeys(r for r in found if r))


@dataclass
class TaskRun:
    """One (model, task) of the run: its report entry and its samples."""

    result: UnitResult
    samples: list[Sample]
    shots: int | None

    @property
    def model(self) -> str:
        return self.result.model

    @property
    def task(self) -> str:
        return self.result.task

    @property
    def headline(self) -> str:
        return self.result.headline

    def scalar_metrics(self) -> dict[str, float]:
        """The report's top-level numeric metrics but ``n`` (groups such as MMLU's subjects are
        exported by the formats that have a place for them)."""
        return {
            k: float(v)
            for k, v in self.result.metrics.items()
            if k != "n" and isinstance(v, int | float) and not isinstance(v, bool)
        }

    def sample_metrics(self, sample: Sample) -> dict[str, float]:
        """The sample's figures under the report's names: a per-sample flag the report gives as
        a rate (``censored`` as ``censored_rate``, ``invalid`` as ``invalid_rate``) takes its
        name, so a sample's row joins its aggregate."""
        reported = self.result.metrics
        out: dict[str, float] = {}
        for name, value in sample.record.metrics.items():
            rate = f"{name}_rate"
            out[rate if name not in reported and rate in reported else name] = value
        return out

    def spread(self, metric: str) -> dict[str, Any]:
        """The report's interval of ``metric`` as plain data, the shape the formats write:
        ``{value, se, ci, n, estimator}`` (or empty)."""
        found = self.result.intervals.get(metric)
        return {} if found is None else dict(msgspec.to_builtins(found))


@dataclass
class Source:
    """A run directory read once for the exporters."""

    run_dir: Path
    report: Report
    run: dict[str, Any]
    units: list[TaskRun] = field(default_factory=list)

    @property
    def identity(self) -> str:
        return self.report.run.identity

    @property
    def started(self) -> float:
        return self.report.timings.started

    @property
    def version(self) -> str:
        return self.report.sieval_version or "unknown"

    def stamp(self) -> str:
        """The run's start as lm-eval stamps its files: ISO time with ``-`` for ``:`` (UTC)."""
        when = datetime.fromtimestamp(self.started, tz=UTC).replace(tzinfo=None)
        return when.isoformat().replace(":", "-")

    def iso_started(self) -> str:
        return datetime.fromtimestamp(self.started, tz=UTC).isoformat()

    def models(self) -> list[str]:
        return list(dict.fromkeys(u.model for u in self.units))

    def of_model(self, model: str) -> list[TaskRun]:
        return [u for u in self.units if u.model == model]

    def model_config(self, model: str) -> dict[str, Any]:
        """The model's entry of the run's config (``run.json``), or of its inputs."""
        for entry in (self.run.get("config") or {}).get("models") or []:
            label = entry.get("name") or entry.get("model")
            if label == model:
                return dict(entry)
        inputs = self.report.run.inputs
        return dict((inputs.get("models") or {}).get(model) or {})

    def model_id(self, model: str) -> str:
        """The model id sent on the wire (the label when the run does not say)."""
        entry = self.model_config(model)
        return str(entry.get("model") or model)

    def provenance(self, model: str) -> dict[str, Any]:
        """Who answered ``model``'s units as plain data (``UnitProvenance``), or empty."""
        for unit in self.of_model(model):
            return dict(msgspec.to_builtins(unit.result.provenance))
        return {}

    def task_config(self, task: str) -> dict[str, Any]:
        inputs = self.report.run.inputs
        return dict(((inputs.get("tasks") or {}).get(task) or {}).get("config") or {})

    def protocol(self, task: str) -> str:
        inputs = self.report.run.inputs
        return str(((inputs.get("tasks") or {}).get(task) or {}).get("protocol") or "")


def load_source(
    run_dir: Path, *, data_dir: Path | None = None, tasks: Mapping[str, Task] | None = None
) -> Source:
    """Read ``run_dir`` (``ConfigError`` when it is not a finished run: an export of a partial
    run would travel as if it were whole). ``tasks``: the run's tasks (its task files' too), as
    ``snapshot`` takes them."""
    report = snapshot(run_dir, data_dir=data_dir, tasks=tasks)
    if not isinstance(report.partial, msgspec.UnsetType):
        raise ConfigError(
            f"{run_dir} is not finished ({report.partial.missing} samples "
            f"missing): finish it with 'sieval eval --resume {run_dir}' before exporting it",
            path="run",
        )
    source = Source(run_dir, report, read_run_json(run_dir))
    for unit in units(run_dir, report):
        samples = [
            Sample(record, expand_requests(record.requests, unit.shared))
            for record in sorted(unit.records, key=lambda r: _order(r.sample_id))
        ]
        source.units.append(TaskRun(unit.result, samples, shots(report, unit.result.task)))
    return source


def _order(sample_id: str) -> tuple[Any, ...]:
    """Sample ids in dataset order: ``test/10`` after ``test/9``."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", sample_id))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generation_of(sample: Sample) -> str | None:
    """The text a generating sample answered (its ``text`` channel), else None."""
    text = sample.record.channels.get("text")
    return text if isinstance(text, str) else None


def iter_samples(source: Source) -> Iterator[tuple[TaskRun, Sample]]:
    for unit in source.units:
        for sample in unit.samples:
            yield unit, sample


def plain(value: Any) -> Any:
    """``value`` made JSON-plain (tuples as lists, keys as text)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
