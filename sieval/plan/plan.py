"""The plan: everything decided before the first request, with no network I/O.

``plan_run`` selects models and tasks, resolves every task by name and every model's dialect
(once), checks every (model, task) pair's requirements against the dialect's capabilities, loads
every task's samples, hashes its data files, lowers the first sample's requests for each pair (a
``Refused`` stops the run here, with zero requests sent), and computes the run identity. Any
problem is a ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from ..dialects.registry import get_dialect, registry
from ..dialects.spec import Auth, Dialect, Refuse
from ..errors import ConfigError, Refused, did_you_mean
from ..model import prepare
from ..settings import setting
from ..store.identity import file_sha256, fingerprint, sieval_version
from ..store.paths import results_dirname, segment
from ..store.records import SCHEMA_VERSION
from ..tasks.base import ModelFacts, Readiness, Requirement, Task, TaskConfig
from ..tasks.registry import TASKS
from .config import EvalConfig, ModelConfig
from .samples import DuplicateSampleId, Samples

__all__ = [
    "Plan",
    "PlannedModel",
    "PlannedTask",
    "check_capabilities",
    "check_ready",
    "model_facts",
    "plan_run",
    "protocol",
    "requirements",
    "select",
]


@dataclass(frozen=True)
class PlannedModel:
    config: ModelConfig
    dialect: Dialect
    """Resolved once, here; the engine, the pre-flight and the Model all use this one."""
    api_key: str | None = field(default=None, repr=False)

    @property
    def facts(self) -> ModelFacts:
        """What tasks may know of this model before the run (input kind, capabilities); the
        engine adds the token ids it resolves through the server's tokenizer."""
        return model_facts(self.dialect)

    @property
    def auth(self) -> Auth:
        """How this endpoint takes the key: the dialect's scheme or the config's ``auth:``."""
        return self.dialect.auth.with_scheme(self.config.auth)

    @property
    def label(self) -> str:
        return self.config.label

    @property
    def dirname(self) -> str:
        return results_dirname(self.config.label)


@dataclass(frozen=True)
class PlannedTask:
    task: Task
    config: TaskConfig
    samples: Samples
    """Held compactly (``samples.py``): read them by iterating or by position."""
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
    notes: list[str] = field(default_factory=list)
    """Facts a user must know before the run (a task with fewer samples than asked for)."""


def _pick(kind: str, wanted: Sequence[str], known: Sequence[str]) -> list[str]:
    for name in wanted:
        if name not in known:
            raise ConfigError(
                f"unknown {kind} {name!r}.{did_you_mean(name, known)} Known: "
                f"{', '.join(known) or '(none)'}.",
                path=kind,
                received=name,
            )
    return list(wanted)


def select(config: EvalConfig, models: Sequence[str] = (), tasks: Sequence[str] = ()) -> EvalConfig:
    """Keep only the named models (by label) and tasks of ``config``; empty keeps all."""
    from ..tasks.registry import SUITES

    labels = [m.label for m in config.models]
    names = [t.name for t in config.tasks]
    tasks = [n for t in tasks for n in ([m.name for m in SUITES[t].tasks] if t in SUITES else [t])]
    keep_models = set(_pick("model", models, labels)) if models else set(labels)
    keep_tasks = set(_pick("task", tasks, names)) if tasks else set(names)
    return msgspec.structs.replace(
        config,
        models=[m for m in config.models if m.label in keep_models],
        tasks=[t for t in config.tasks if t.name in keep_tasks],
    )


def resolve_task(name: str, tasks: Mapping[str, Task]) -> Task:
    if name not in tasks:
        raise ConfigError(
            f"unknown task {name!r}.{did_you_mean(name, tasks)} Known tasks: "
            f"{', '.join(sorted(tasks)) or '(none)'} (see 'sieval tasks').",
            path="tasks",
            received=name,
        )
    return tasks[name]


def model_facts(dialect: Dialect) -> ModelFacts:
    """A model's facts from its dialect's table: chat when it takes no raw text prompt."""
    row = registry()[dialect.id]
    text = not isinstance(dialect.row_for("input.completion.text"), Refuse)
    return ModelFacts(
        input_kind="completion" if text else "chat",
        capabilities=frozenset(k for k, v in row.capabilities.items() if v == "supported"),
    )


def requirements(task: Task, facts: ModelFacts) -> Sequence[Requirement]:
    """The task's requirements for this model (``requirements_for`` when the task has it)."""
    special = getattr(task, "requirements_for", None)
    found: Sequence[Requirement] = special(facts) if special is not None else task.requirements
    return found


def protocol(task: Task, facts: ModelFacts) -> str:
    """The protocol as the task runs for this model (``protocol_for`` when the task has it)."""
    special = getattr(task, "protocol_for", None)
    return str(special(facts)) if special is not None else task.protocol


def check_capabilities(model: ModelConfig, task: Task) -> None:
    """Refuse a (model, task) pair whose dialect cannot serve one of the task's requirements."""
    dialect = model.dialect_id
    row = registry().get(dialect)
    if row is None or row.dialect is None:
        get_dialect(dialect)  # raises the registry's own message (unknown / not implemented)
    assert row is not None and row.dialect is not None
    for req in requirements(task, model_facts(row.dialect)):
        if row.capabilities.get(req.capability) == "supported":
            continue
        others = [
            r.id for r in registry().values() if r.capabilities.get(req.capability) == "supported"
        ]
        outcome = row.capabilities.get(req.capability, "no")
        verb = "supports only partly" if outcome == "partial" else "does not support"
        raise ConfigError(
            f"{task.name} needs {req.capability} ({req.why}), which {dialect} {verb} "
            f"(model {model.label!r}); dialects that do: {', '.join(others) or 'none yet'}",
            dialect=dialect,
            path=req.capability,
        )


def _dry_lower(model: PlannedModel, planned: PlannedTask) -> None:
    """Lower the first sample's requests: a refusal stops the run before any I/O."""
    if not planned.samples:
        return
    sample = planned.samples[0]
    cfg = model.config
    for name, request in planned.task.requests(sample, planned.config, model.facts).items():
        try:
            prepare(model.dialect, request, cfg.model, cfg.request_defaults)
        except Refused as exc:
            raise ConfigError(
                f"model {cfg.label!r} cannot run task {planned.name!r}: request {name!r} of "
                f"sample {sample.id!r} was refused before I/O: {exc.message}"
                f"{_option_hint(planned, exc.path)}",
                dialect=model.dialect.id,
                path=exc.path,
            ) from exc


def _option_hint(planned: PlannedTask, leaf: str | None) -> str:
    """Where a refused value came from, when a task option sets it (``top_k`` for MMLU)."""
    option = (leaf or "").rsplit(".", 1)[-1].removeprefix("sampled_")
    if option not in planned.task.defaults:
        return ""
    return (
        f" (the task's {option} option sets it: {setting(f'options.{option}')} for {planned.name})"
    )


def _limited(config: TaskConfig, limit: int | None) -> TaskConfig:
    if limit is None:
        return config
    if limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}", path="limit")
    n = limit if config.n is None else min(config.n, limit)
    return msgspec.structs.replace(config, n=n)


def _load(task: Task, config: TaskConfig, data_dir: Path, notes: list[str]) -> PlannedTask:
    loaded = task.load(data_dir, config)
    per_row = getattr(task, "samples_per_row", None)  # n counts rows; a repeated row is k samples
    count = None if config.n is None else config.n * (per_row(config) if per_row else 1)
    try:
        samples = Samples(loaded if count is None else islice(loaded, count))
    except DuplicateSampleId as exc:
        raise ConfigError(
            f"task {task.name!r} produced sample id {exc.sample_id!r} twice; ids are the resume "
            "key",
            path="tasks",
        ) from exc
    if count is not None and count > len(samples):
        notes.append(
            f"task {task.name!r}: n={config.n} but the dataset has {len(samples)} samples; "
            f"all {len(samples)} are evaluated"
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
    keys: bool = True,
) -> Plan:
    """Check and load everything a run needs; raises ``ConfigError`` on the first problem.
    ``keys=False`` reads no API key (a plan that sends nothing: a partial run's report)."""
    known = tasks if tasks is not None else TASKS
    for m in config.models:  # every name that becomes a directory, checked before any I/O
        results_dirname(m.label)
    for tc in config.tasks:
        segment(tc.name, key="tasks[].name", fix="use a task from 'sieval tasks'")
    resolved = [(resolve_task(tc.name, known), _limited(tc, limit)) for tc in config.tasks]
    for model in config.models:
        for task, _ in resolved:
            check_capabilities(model, task)
    models = [
        PlannedModel(
            config=m, dialect=get_dialect(m.dialect_id), api_key=m.api_key() if keys else None
        )
        for m in config.models
    ]
    notes: list[str] = []
    planned = [_load(task, tc, data_dir, notes) for task, tc in resolved]
    for pm in models:
        for p in planned:
            _dry_lower(pm, p)
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
        notes=notes,
    )


def check_ready(plan: Plan, allow_unsafe_code: bool = False) -> Readiness:
    """Each task's own check before the first request (``Task.check_ready``: the code tasks'
    sandbox), gathered: a task that cannot be scored here raises ``ConfigError`` naming the fix,
    before any request is sent or paid for."""
    said: list[str] = []
    warnings: list[str] = []
    record: dict[str, Any] = {}
    for pt in plan.tasks:
        hook = getattr(pt.task, "check_ready", None)
        if hook is None:
            continue
        found: Readiness = hook(allow_unsafe_code)
        said += [line for line in found.said if line not in said]
        warnings += [line for line in found.warnings if line not in warnings]
        if found.record:
            record[pt.name] = found.record
    return Readiness(said=tuple(said), warnings=tuple(warnings), record=record)
