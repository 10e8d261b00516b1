"""What a family is: the requests and metrics of one kind of task, given a spec.

A family turns a row into the sample's data and gold (``prepare``), a sample into named requests,
the responses into metrics, and the metrics into the task's figures. It may also have the hooks
the runner knows (``Task``'s docstring): ``protocol_for``, ``token_texts``, ``documents``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ...scoring.repeats import same_text
from ...scoring.uncertainty import Bounds, Derived
from .._shared import grouped_means, means
from ..base import ModelFacts, Requirement, Sample, SampleResult, TaskConfig

if TYPE_CHECKING:
    from ...ir.request import Request
    from ...ir.response import Response
    from ..spec import Spec

__all__ = ["Base", "Family", "Prepared"]


@dataclass(frozen=True)
class Prepared:
    """A row as a sample holds it: the fields its requests need, and its gold answer."""

    data: dict[str, Any]
    gold: Any


class Family(Protocol):
    @property
    def kind(self) -> str:
        """What ``sieval tasks`` calls it (``choice log-likelihood``)."""
        ...

    @property
    def options(self) -> Mapping[str, Any]:
        """The task options it reads, with their defaults."""
        ...

    def check_options(self, spec: Spec, config: TaskConfig) -> None: ...

    def requirements(self, spec: Spec, model: ModelFacts) -> tuple[Requirement, ...]: ...

    def protocol(self, spec: Spec) -> str: ...

    def prepare(self, spec: Spec, row: Mapping[str, Any], config: TaskConfig) -> Prepared: ...

    def requests(
        self, spec: Spec, sample: Sample, config: TaskConfig, model: ModelFacts
    ) -> Mapping[str, Request]: ...

    def score(
        self,
        spec: Spec,
        sample: Sample,
        responses: Mapping[str, Response],
        config: TaskConfig,
        model: ModelFacts,
    ) -> SampleResult: ...

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]: ...

    def equivalent(self, first: str, other: str) -> bool:
        """Whether two extracted answers of one row are the same answer (maj@k's vote groups):
        ``other`` against ``first``, the first answer of a group, in the gold's place."""
        ...

    def grouped(
        self,
        spec: Spec,
        results: Iterable[tuple[Sample, SampleResult]],
        key: Callable[[str], str],
    ) -> dict[str, dict[str, Any]]: ...


class Base:
    """The defaults a family overrides where it differs: no options, means of the metrics, no
    declared metric ranges (0/1 values are proportions, others unbounded), no derived figures, two
    answers the same when their text is (``scoring/repeats.py``'s ``same_text``)."""

    kind = "?"
    options: Mapping[str, Any] = {}
    ranges: Mapping[str, Bounds] = {}
    """The range of each per-sample metric that has one (``Task.metric_ranges``)."""
    derived: Mapping[str, Derived] = {}
    """The figures made of sums of per-sample metrics, with their intervals (``Task.derived``)."""

    def check_options(self, spec: Spec, config: TaskConfig) -> None:
        return None

    def equivalent(self, first: str, other: str) -> bool:
        return same_text(first, other)

    def aggregate(
        self, spec: Spec, results: Iterable[tuple[Sample, SampleResult]]
    ) -> dict[str, Any]:
        return means(results)

    def grouped(
        self,
        spec: Spec,
        results: Iterable[tuple[Sample, SampleResult]],
        key: Callable[[str], str],
    ) -> dict[str, dict[str, Any]]:
        return grouped_means(results, lambda s: key(s.group or ""))


def option(config: TaskConfig, name: str, defaults: Mapping[str, Any]) -> Any:
    """A task option's value, or the family's default."""
    return config.options.get(name, defaults[name])


def flag(task: str, config: TaskConfig, name: str, defaults: Mapping[str, Any]) -> bool:
    """A boolean task option, refused when it is not a boolean."""
    value = option(config, name, defaults)
    if not isinstance(value, bool):
        from ...errors import ConfigError

        raise ConfigError(
            f"task {task}: option {name} must be true or false, got {value!r}",
            path=f"tasks.{task}.options.{name}",
            received=value,
        )
    return value


def pooled_mean(groups: Sequence[Sequence[float]]) -> float:
    """lm-eval's group aggregate with ``weight_by_size``: each group's mean times its size,
    summed, over the total size (``aggregate_subtask_metrics``), in the groups' order."""
    means = [sum(values) / len(values) for values in groups]
    sizes = [len(values) for values in groups]
    return sum([m * n for m, n in zip(means, sizes, strict=True)]) / sum(sizes)
