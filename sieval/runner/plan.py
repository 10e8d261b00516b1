"""The pre-flight: everything decided before the first request, with no network I/O.

``plan_run`` selects models and tasks, resolves every task by name, checks every (model, task)
pair's requirements against the dialect's capabilities, loads every task's samples, hashes its
data files, lowers the first sample's requests for each pair (a ``Refused`` stops the run here,
with zero requests sent), and computes the run identity. Any problem is a ``ConfigError``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..config import EvalConfig, ModelConfig
from ..dialects.plane import lower
from ..dialects.registry import REGISTRY, get_dialect
from ..errors import ConfigError, Refused
from ..ir.defaults import with_defaults
from ..tasks.base import Sample, Task, TaskConfig
from .identity import file_sha256, fingerprint, sieval_version
from .records import SCHEMA_VERSION

__all__ = [
    "Plan",
    "PlannedModel",
    "PlannedTask",
    "check_capabilities",
    "default_tasks",
    "plan_run",
    "select",
]


@dataclass(frozen=True)
class PlannedModel:
    config: ModelConfig
    api_key: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return self.config.label

    @property
    def dirname(self) -> str:
        return safe_name(self.config.label)


@dataclass(frozen=True)
class PlannedTask:
    task: Task
    config: TaskConfig
    samples: list[Sample]
    checksums: dict[str, str]

    @property
    def name(self) -> str:
        return self.config.name


@dataclass(frozen=True)
class Plan:
    models: list[PlannedModel]
    tasks: list[PlannedTask]
    data_dir: Path
    identity: str
    inputs: dict[str, Any]
    """What the identity hashes (secret-free), stored in ``run.json`` and ``report.json``."""


def safe_name(label: str) -> str:
    """A label usable as one directory name (``google/gemma`` -> ``google_gemma``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", label) or "_"


def default_tasks() -> Mapping[str, Task]:
    """The task registry (``sieval.tasks.registry.TASKS``)."""
    try:
        from ..tasks.registry import TASKS
    except ModuleNotFoundError as exc:  # pragma: no cover - until the tasks piece lands
        if exc.name != "sieval.tasks.registry":
            raise
        raise ConfigError(
            "no task registry is installed (sieval.tasks.registry is missing)", path="tasks"
        ) from exc
    registry: Mapping[str, Task] = TASKS
    return registry


def _pick(kind: str, wanted: Sequence[str], known: Sequence[str]) -> list[str]:
    for name in wanted:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"unknown {kind} {name!r}.{hint} Known: {', '.join(known) or '(none)'}.",
                path=kind,
                received=name,
            )
    return list(wanted)


def select(config: EvalConfig, models: Sequence[str] = (), tasks: Sequence[str] = ()) -> EvalConfig:
    """Keep only the named models (by label) and tasks of ``config``; empty keeps all."""
    labels = [m.label for m in config.models]
    names = [t.name for t in config.tasks]
    keep_models = set(_pick("model", models, labels)) if models else set(labels)
    keep_tasks = set(_pick("task", tasks, names)) if tasks else set(names)
    return msgspec.structs.replace(
        config,
        models=[m for m in config.models if m.label in keep_models],
        tasks=[t for t in config.tasks if t.name in keep_tasks],
    )


def resolve_task(name: str, registry: Mapping[str, Task]) -> Task:
    if name not in registry:
        close = difflib.get_close_matches(name, list(registry), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown task {name!r}.{hint} Known tasks: {', '.join(sorted(registry)) or '(none)'} "
            "(see 'sieval tasks').",
            path="tasks",
            received=name,
        )
    return registry[name]


def check_capabilities(model: ModelConfig, task: Task) -> None:
    """Refuse a (model, task) pair whose dialect cannot serve one of the task's requirements."""
    dialect = model.dialect_id
    row = REGISTRY.get(dialect)
    if row is None or row.dialect is None:
        get_dialect(dialect)  # raises the registry's own message (unknown / not implemented)
    assert row is not None
    for req in task.requirements:
        if row.capabilities.get(req.capability) == "supported":
            continue
        others = [
            r.id for r in REGISTRY.values() if r.capabilities.get(req.capability) == "supported"
        ]
        outcome = row.capabilities.get(req.capability, "no")
        verb = "supports only partly" if outcome == "partial" else "does not support"
        raise ConfigError(
            f"{task.name} needs {req.capability} ({req.why}), which {dialect} {verb} "
            f"(model {model.label!r}); dialects that do: {', '.join(others) or 'none yet'}",
            dialect=dialect,
            path=req.capability,
        )


def _dry_lower(model: ModelConfig, planned: PlannedTask) -> None:
    """Lower the first sample's requests: a refusal stops the run before any I/O."""
    if not planned.samples:
        return
    dialect = get_dialect(model.dialect_id)
    sample = planned.samples[0]
    for name, request in planned.task.requests(sample, planned.config).items():
        try:
            lower(dialect, with_defaults(request, model.request_defaults), model.model)
        except Refused as exc:
            raise ConfigError(
                f"model {model.label!r} cannot run task {planned.name!r}: request {name!r} of "
                f"sample {sample.id!r} was refused before I/O: {exc.message}",
                dialect=dialect.id,
                path=exc.path,
            ) from exc


def _limited(config: TaskConfig, limit: int | None) -> TaskConfig:
    if limit is None:
        return config
    if limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}", path="limit")
    n = limit if config.n is None else min(config.n, limit)
    return msgspec.structs.replace(config, n=n)


def _load(task: Task, config: TaskConfig, data_dir: Path) -> PlannedTask:
    samples = list(task.load(data_dir, config))
    if config.n is not None:
        samples = samples[: config.n]
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(
            f"task {task.name!r} produced sample id {dup!r} twice; ids are the resume key",
            path="tasks",
        )
    checksums: dict[str, str] = {}
    for path in task.data_files(data_dir):
        key = str(path.relative_to(data_dir)) if path.is_relative_to(data_dir) else str(path)
        checksums[key] = file_sha256(path) if path.is_file() else "missing"
    return PlannedTask(task=task, config=config, samples=samples, checksums=checksums)


def plan_run(
    config: EvalConfig,
    *,
    data_dir: Path,
    limit: int | None = None,
    tasks: Mapping[str, Task] | None = None,
) -> Plan:
    """Check and load everything a run needs; raises ``ConfigError`` on the first problem."""
    registry = tasks if tasks is not None else default_tasks()
    resolved = [(resolve_task(tc.name, registry), _limited(tc, limit)) for tc in config.tasks]
    for model in config.models:
        for task, _ in resolved:
            check_capabilities(model, task)
    models = [PlannedModel(config=m, api_key=m.api_key()) for m in config.models]
    planned = [_load(task, tc, data_dir) for task, tc in resolved]
    for model in config.models:
        for p in planned:
            _dry_lower(model, p)
    inputs: dict[str, Any] = {
        "sieval_version": sieval_version(),
        "records_schema_version": SCHEMA_VERSION,
        "models": {m.label: m.config.identity() for m in models},
        "tasks": {
            p.name: {
                "config": msgspec.to_builtins(p.config),
                "protocol": p.task.protocol,
                "data": p.checksums,
            }
            for p in planned
        },
    }
    return Plan(
        models=models,
        tasks=planned,
        data_dir=data_dir,
        identity=fingerprint(inputs),
        inputs=inputs,
    )
