"""``sieval.evaluate``: a whole evaluation from Python, returning typed results.

What ``sieval eval`` does, as one call: the tasks by name (stock, or found on the include
path), by file (a task YAML or Python file) or as objects (a ``Spec``, a task); one model by its
endpoint; the same run directory, records, report and resume as the command line::

    import sieval

    results = sieval.evaluate(["arc_easy", "examples/private/quiz_mc.yaml"], limit=20)
    print(results.headline("arc_easy"), results.run_dir)

``endpoint="embedded"`` (the default) starts sieval's reference server in the process. Every
problem is raised as a ``ConfigError`` before anything is sent; a run that finished with failed
samples is returned (``Results.failed``), as the command line exits 1.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from .errors import ConfigError
from .results.document import Report
from .tasks.base import Task

if TYPE_CHECKING:
    from .tasks.catalogue import Registry

__all__ = ["Results", "TaskResult", "evaluate"]


@dataclass(frozen=True)
class TaskResult:
    """One (model, task) of a run, as its report gives it."""

    model: str
    task: str
    headline: str
    """The metric reported first."""
    value: float | None
    """The headline's value (None when no sample was scored)."""
    interval: tuple[float, float] | None
    """The headline's 95% interval, when the report has one."""
    metrics: dict[str, Any]
    """Every figure of the task (``n`` and each metric's mean, the family's own figures)."""
    scored: int
    failed: int
    protocol: str


@dataclass(frozen=True)
class Results:
    """What ``evaluate`` returns: the run directory and each (model, task)'s figures."""

    run_dir: Path
    identity: str
    results: list[TaskResult]
    report: Report = field(repr=False)
    """The whole ``report.json``, typed (``results/document.py``)."""
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.results)

    def __getitem__(self, task: str) -> TaskResult:
        """The result of ``task`` (its first model's)."""
        for result in self.results:
            if result.task == task:
                return result
        raise KeyError(f"no task {task!r} in this run: {', '.join(r.task for r in self.results)}")

    def headline(self, task: str) -> float | None:
        return self[task].value


def _task_results(report: Report) -> list[TaskResult]:
    out = []
    for r in report.results:
        spread = r.spread
        ci = spread.ci if spread is not None else None
        out.append(
            TaskResult(
                model=r.model,
                task=r.task,
                headline=r.headline,
                value=r.value,
                interval=(
                    (float(ci[0]), float(ci[1]))
                    if ci and ci[0] is not None and ci[1] is not None
                    else None
                ),
                metrics=dict(r.metrics),
                scored=r.samples.scored,
                failed=r.samples.failed,
                protocol=r.protocol,
            )
        )
    return out


def _named(tasks: Any, registry: Registry) -> list[str]:
    """Each task as a name the registry knows (files and objects added to it)."""
    from .tasks.catalogue import FileTask
    from .tasks.spec import Spec, SpecTask

    items = [tasks] if isinstance(tasks, str | Path | Spec) or hasattr(tasks, "load") else tasks
    names: list[str] = []
    for item in items:
        if isinstance(item, Path) or (
            isinstance(item, str) and item.endswith((".yaml", ".yml", ".py"))
        ):
            path = Path(item)
            if not path.is_file():
                raise ConfigError(f"task file {str(path)!r} does not exist", path="tasks")
            names += registry.add_file(path)
        elif isinstance(item, str):
            found = registry.expand(item)
            for name in found:
                if name not in registry:
                    raise registry.unknown(name)
            names += found
        else:
            task: Any = SpecTask(item) if isinstance(item, Spec) else item
            if not isinstance(task, FileTask | SpecTask) and not hasattr(task, "load"):
                raise ConfigError(
                    f"evaluate(tasks=...) takes names, task files, Specs or tasks; got "
                    f"{type(item).__name__}",
                    path="tasks",
                )
            names.append(registry.add_task(task))
    return names


def evaluate(
    tasks: str | Path | Task | Any | Sequence[str | Path | Task | Any],
    *,
    endpoint: str = "embedded",
    model: str | None = None,
    kind: Literal["completion", "chat"] | None = None,
    dialect: str | None = None,
    api_key_env: str | None = None,
    num_fewshot: int | None = None,
    limit: int | None = None,
    seed: int = 1234,
    include_path: Sequence[str | Path] = (),
    data_dir: str | Path | None = None,
    out: str | Path = "results",
    concurrency: int | None = None,
    preflight: bool = True,
    serving_checks: str = "auto",
    resume: str | Path | None = None,
) -> Results:
    """Evaluate one model on ``tasks`` and return the figures.

    ``tasks``: names (stock, or on ``include_path``), task files (``.yaml``/``.yml``/``.py``),
    ``Spec`` objects or task objects, alone or in a list. ``endpoint``: the server's base URL,
    or ``"embedded"`` (the reference server, in-process); ``model``: the model id it serves
    (default: the reference's); ``kind``/``dialect``/``api_key_env`` as in a config's model
    entry. ``num_fewshot``, ``limit`` (samples a task) and ``seed`` apply to every task.
    ``resume``: complete that run directory instead (the other arguments but ``tasks`` are
    then its own). Returns ``Results``; raises ``ConfigError`` before any request for any
    problem found before the run.
    """
    return asyncio.run(
        aevaluate(
            tasks,
            endpoint=endpoint,
            model=model,
            kind=kind,
            dialect=dialect,
            api_key_env=api_key_env,
            num_fewshot=num_fewshot,
            limit=limit,
            seed=seed,
            include_path=include_path,
            data_dir=data_dir,
            out=out,
            concurrency=concurrency,
            preflight=preflight,
            serving_checks=serving_checks,
            resume=resume,
        )
    )


async def aevaluate(
    tasks: str | Path | Task | Any | Sequence[str | Path | Task | Any],
    *,
    endpoint: str = "embedded",
    model: str | None = None,
    kind: Literal["completion", "chat"] | None = None,
    dialect: str | None = None,
    api_key_env: str | None = None,
    num_fewshot: int | None = None,
    limit: int | None = None,
    seed: int = 1234,
    include_path: Sequence[str | Path] = (),
    data_dir: str | Path | None = None,
    out: str | Path = "results",
    concurrency: int | None = None,
    preflight: bool = True,
    serving_checks: str = "auto",
    resume: str | Path | None = None,
) -> Results:
    """``evaluate`` inside a running event loop."""
    from .plan.config import EMBEDDED, REFERENCE_MODEL, EvalConfig, check_config
    from .plan.run_config import load_run_config
    from .runner import RunOptions, arun_eval
    from .tasks.base import TaskConfig
    from .tasks.catalogue import registry as make_registry

    if resume is not None:
        config = load_run_config(Path(resume))
        registry = make_registry([Path(p) for p in [*config.include_path, *include_path]])
    else:
        registry = make_registry([Path(p) for p in include_path])
        names = _named(tasks, registry)
        entry: dict[str, Any] = {"endpoint": endpoint, "name": None}
        entry["model"] = model or (REFERENCE_MODEL if endpoint == EMBEDDED else None)
        for key, value in (("kind", kind), ("dialect", dialect), ("api_key_env", api_key_env)):
            if value is not None:
                entry[key] = value
        entry = {k: v for k, v in entry.items() if v is not None}
        folders = [str(p) for p in registry.catalogue.roots]
        for name in names:
            file = registry.catalogue.entries.get(name)
            if file is not None and file.kind != "object":
                folder = str(Path(file.file).parent)
                if not any(folder == f or folder.startswith(f + "/") for f in folders):
                    folders.append(folder)
        raw = {
            "models": [entry],
            "tasks": [
                msgspec.to_builtins(TaskConfig(name=n, num_fewshot=num_fewshot, seed=seed))
                for n in names
            ],
            "include_path": folders,
            "out": str(out),
        }
        try:
            config = check_config(msgspec.convert(raw, EvalConfig), "evaluate()")
        except msgspec.ValidationError as exc:
            raise ConfigError(f"evaluate(): {exc}", path="evaluate") from exc
    options = RunOptions(
        resume=Path(resume) if resume is not None else None,
        data_dir=Path(data_dir) if data_dir is not None else None,
        limit=limit,
        concurrency=concurrency,
        preflight=preflight,
        serving_checks=serving_checks,
    )
    result = await arun_eval(config, options, tasks=registry)
    report = result.report
    assert report is not None  # a run that is not a dry run reports
    return Results(
        run_dir=result.run_dir,
        identity=report.run.identity,
        results=_task_results(report),
        report=report,
        warnings=list(result.warnings),
    )
