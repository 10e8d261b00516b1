"""Task files from the user's folders, beside the stock tasks: the include path.

``--include-path DIR`` (repeatable), ``include_path:`` in a config and ``$SIEVAL_INCLUDE_PATH``
(folders joined by ``:``) name folders searched recursively for task files:

- ``*.yaml`` / ``*.yml`` in lm-evaluation-harness's task format (``yaml_task.py``): a file with
  ``task: NAME`` is a task; ``group: NAME`` with ``task: [...]`` a group of tasks; ``tag: X`` on
  tasks makes a tag X of them (a group or tag runs its members);
- ``*.py`` declaring ``SPEC`` (a ``Spec``), ``TASK`` (a task object) or a task class (one with
  ``load`` and ``solve`` or ``requests``; built with no arguments): a Python task file.

Files are listed without importing anything (YAML read for its names, Python read as a syntax
tree); a task is resolved when it is used, and only then are its ``!function`` modules and its
Python file imported. A task file may also be named directly: ``--task path/to/file.yaml``.

The stock tasks keep their names: an included task of the same name is reached by its file
(``sieval tasks`` lists it as shadowed). Each resolved task carries its ``source``: its files'
hashes and (YAML) its resolved keys, which enter the run identity, so a resume of a run whose
task file changed is refused, naming the change.
"""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..data.source import file_sha256
from ..errors import ConfigError, did_you_mean
from .base import COMPLETION_MODEL, ModelFacts, PlannedCall, Sample, SampleResult, Task, TaskConfig
from .families import Generated
from .spec import Spec, SpecTask
from .yaml_file import Located, _module_at, peek, read_yaml
from .yaml_task import definition, functions_of, resolve

if TYPE_CHECKING:
    from .context import Context

__all__ = [
    "INCLUDE_PATH_ENV",
    "Catalogue",
    "Entry",
    "Registry",
    "env_include_path",
    "is_task_file",
    "load_python",
    "registry",
]

INCLUDE_PATH_ENV = "SIEVAL_INCLUDE_PATH"
_YAML = (".yaml", ".yml")
_SKIP = {"__pycache__", ".git", ".venv", "node_modules"}
_TASK_BASES = {"Task", "StaticTask", "SpecTask"}


def env_include_path() -> list[Path]:
    """The folders of ``$SIEVAL_INCLUDE_PATH`` (``os.pathsep``-separated)."""
    value = os.environ.get(INCLUDE_PATH_ENV, "")
    return [Path(p) for p in value.split(os.pathsep) if p]


def is_task_file(name: str) -> bool:
    """Whether a ``--task`` value names a file rather than a task."""
    return name.endswith((*_YAML, ".py")) and Path(name).expanduser().is_file()


@dataclass(frozen=True)
class Entry:
    """A task found in a task file, not resolved yet."""

    name: str
    file: Path
    root: Path
    """The include-path folder it was found under (its files stay inside it)."""
    kind: str
    """``yaml`` or ``python``."""
    inline: Mapping[str, Any] | None = None
    """A task written inside a group file's ``task:`` list."""


class FileTask(SpecTask):
    """A spec read from a task file, with its source (which enters the run identity)."""

    def __init__(self, spec: Spec, source: dict[str, Any]) -> None:
        super().__init__(spec)
        self.source = source
        self.source_file = source["file"]


class JudgedFileTask(FileTask):
    """A task file whose scorers ask the judge role (``metric: judge``): its calls depend on the
    answers, so it is not static; the family's ``solve`` asks the generation, then the judge."""

    static: ClassVar[bool] = False

    def __init__(self, spec: Spec, source: dict[str, Any]) -> None:
        super().__init__(spec, source)
        assert isinstance(spec.family, Generated)  # the one family with a judge scorer
        self.family = spec.family
        self.roles = self.family.roles

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        return self.family.calls(self.spec, sample, config, model)

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        return await self.family.solve(self.spec, sample, ctx)


def file_task(spec: Spec, source: dict[str, Any]) -> FileTask:
    """The task of a spec read from a file: judged when a scorer asks the judge role."""
    if getattr(spec.family, "roles", ()):
        return JudgedFileTask(spec, source)
    return FileTask(spec, source)


def _hashes(paths: Sequence[Path]) -> dict[str, str]:
    return {str(p): file_sha256(p) for p in dict.fromkeys(paths)}


def load_yaml_task(entry: Entry) -> Any:
    """The task of a YAML entry, resolved (a ``ConfigError`` naming file:line:key)."""
    if entry.inline is not None:
        located = Located(dict(entry.inline), entry.file, {}, [entry.file])
    else:
        located = read_yaml(entry.file, root=entry.root)
    spec = resolve(located, root=entry.root)
    source = {
        "file": str(entry.file),
        "files": _hashes([*located.files, *functions_of(located)]),
        "definition": definition(located),
    }
    return file_task(spec, source)


def load_python(path: Path) -> list[Any]:
    """The tasks a Python task file declares: ``SPEC``, ``TASK``, or its task classes (each built
    with no arguments), each with its source."""
    path = path.resolve()
    try:
        module = _module_at(path)
    except ConfigError:
        raise
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ConfigError(
            f"{path}: importing the task file failed ({type(exc).__name__}: {exc}); fix it",
            path=str(path),
        ) from exc
    source = {"file": str(path), "files": _hashes([path])}
    found: list[Any] = []
    spec = getattr(module, "SPEC", None)
    task = getattr(module, "TASK", None)
    if task is not None:
        found.append(task)
    elif isinstance(spec, Spec):
        found.append(file_task(spec, source))
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and value.__module__ == module.__name__
            and callable(getattr(value, "load", None))
            and (
                callable(getattr(value, "solve", None))
                or callable(getattr(value, "requests", None))
            )
            and not getattr(value, "__abstractmethods__", None)
            and isinstance(getattr(value, "name", None), str)
        ):
            found.append(value())
    if not found:
        raise ConfigError(
            f"{path}: a Python task file declares SPEC (a Spec), TASK, or a task class with a "
            "name, load and solve; it has none",
            path=str(path),
        )
    for item in found:
        if getattr(item, "source", None) is None:
            with contextlib.suppress(AttributeError):  # a task that takes no new attribute
                item.source = source
    return found


def _python_names(path: Path) -> list[str] | None:
    """The task names a Python file declares, read from its syntax tree (None: not a task
    file; ``[]``: a task file whose names are known only once it is imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    names: list[str] = []
    declares = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("SPEC", "TASK") for t in node.targets
        ):
            declares = True
            if isinstance(node.value, ast.Call):
                for kw in node.value.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        names.append(str(kw.value.value))
        elif isinstance(node, ast.ClassDef) and _task_class(node):
            declares = True
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "name" for t in item.targets)
                    and isinstance(item.value, ast.Constant)
                ):
                    names.append(str(item.value.value))
    return names if declares else None


def _task_class(node: ast.ClassDef) -> bool:
    """A class that says it is a task (a task base) or has a task's methods (duck-typed)."""
    if any(
        (isinstance(b, ast.Name) and b.id in _TASK_BASES)
        or (isinstance(b, ast.Attribute) and b.attr in _TASK_BASES)
        for b in node.bases
    ):
        return True
    methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    return "load" in methods and bool(methods & {"solve", "requests"})


@dataclass
class Catalogue:
    """What the include path holds: tasks by name, groups and tags, and the files that could not
    be read (each with its error)."""

    roots: tuple[Path, ...] = ()
    entries: dict[str, Entry] = field(default_factory=dict)
    groups: dict[str, list[Any]] = field(default_factory=dict)
    """Group and tag names -> their members (task or group names)."""
    problems: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def add(self, entry: Entry) -> None:
        if entry.name in self.entries and self.entries[entry.name].file != entry.file:
            first = self.entries[entry.name].file
            self.duplicates.append(f"{entry.name}: {first} and {entry.file} (the first is used)")
            return
        self.entries.setdefault(entry.name, entry)

    def members(self, name: str, _seen: tuple[str, ...] = ()) -> list[str]:
        """A group's or tag's tasks, nested groups expanded, in order."""
        out: list[str] = []
        for member in self.groups.get(name, []):
            if member in self.groups and member not in _seen and member not in self.entries:
                found = self.members(member, (*_seen, name))
            else:
                found = [member]
            out += [m for m in found if m not in out]
        return out


def _yaml_entries(catalogue: Catalogue, path: Path, root: Path) -> None:
    try:
        values = peek(path)
    except ConfigError as exc:
        catalogue.problems.append(exc.message)
        return
    task, group, tags = values.get("task"), values.get("group"), values.get("tag")
    if isinstance(task, str):
        catalogue.add(Entry(task, path, root, "yaml"))
        if isinstance(group, str):  # lm-eval's older form: a task's group is a tag
            tags = [group, *(tags if isinstance(tags, list) else [tags] if tags else [])]
        for tag in tags if isinstance(tags, list) else [tags] if isinstance(tags, str) else []:
            catalogue.groups.setdefault(str(tag), []).append(task)
    elif isinstance(group, str) and isinstance(task, list):
        members: list[str] = []
        for item in task:
            if isinstance(item, str):
                members.append(item)
            elif isinstance(item, Mapping) and isinstance(item.get("task"), str):
                inner = item["task"]
                members.append(inner)
                if (len(item) > 1 and "dataset_path" in item) or "include" in item:
                    catalogue.add(Entry(inner, path, root, "yaml", inline=_inline(item, path)))
        catalogue.groups.setdefault(group, [])
        catalogue.groups[group] += members


def _inline(item: Mapping[str, Any], path: Path) -> dict[str, Any]:
    if "include" not in item:
        return dict(item)
    base = read_yaml(path.parent / str(item["include"]))
    return {**base.values, **{k: v for k, v in item.items() if k != "include"}}


def scan(roots: Sequence[Path]) -> Catalogue:
    """The task files under ``roots``, listed (nothing imported)."""
    catalogue = Catalogue(roots=tuple(r.resolve() for r in roots))
    for root in catalogue.roots:
        if not root.is_dir():
            raise ConfigError(
                f"--include-path {str(root)!r} is not a folder; name a folder holding task files",
                path="include_path",
                received=str(root),
            )
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
            for name in sorted(files):
                path = Path(folder) / name
                if name.endswith(_YAML):
                    _yaml_entries(catalogue, path, root)
                elif name.endswith(".py"):
                    names = _python_names(path)
                    if names is None:
                        continue
                    for task_name in names or [path.stem]:
                        catalogue.add(Entry(task_name, path, root, "python"))
    return catalogue


class Registry(Mapping[str, Task]):
    """The stock tasks and the include path's, by name, each resolved on first use."""

    def __init__(self, stock: Mapping[str, Task], catalogue: Catalogue) -> None:
        self.stock = stock
        self.catalogue = catalogue
        self._resolved: dict[str, Task] = {}
        self.shadowed = [n for n in catalogue.entries if n in stock]

    def __iter__(self) -> Iterator[str]:
        yield from self.stock
        yield from (n for n in self.catalogue.entries if n not in self.stock)

    def __len__(self) -> int:
        return len(self.stock) + sum(1 for n in self.catalogue.entries if n not in self.stock)

    def __contains__(self, name: object) -> bool:
        return name in self.stock or name in self.catalogue.entries

    def __getitem__(self, name: str) -> Task:
        if name in self.stock:
            return self.stock[name]
        if name in self._resolved:
            return self._resolved[name]
        entry = self.catalogue.entries.get(name)
        if entry is None:
            raise KeyError(name)
        if entry.kind == "yaml":
            task = load_yaml_task(entry)
        else:
            tasks = {t.name: t for t in load_python(entry.file)}
            if name not in tasks:
                raise ConfigError(
                    f"{entry.file}: declares {', '.join(tasks)}, not {name!r}", path=str(entry.file)
                )
            for other, t in tasks.items():
                self._resolved.setdefault(other, t)
            task = tasks[name]
        self._resolved[name] = task
        found: Task = task
        return found

    def source_of(self, name: str) -> str:
        """Where a task comes from: ``stock`` or its file."""
        if name in self.stock:
            return "stock"
        return str(self.catalogue.entries[name].file)

    def expand(self, name: str) -> list[str]:
        """``name`` as the task names it stands for (a group or tag: its members)."""
        if name in self:
            return [name]
        if name in self.catalogue.groups:
            return self.catalogue.members(name)
        return [name]

    def add_file(self, path: Path) -> list[str]:
        """A task file named directly (``--task FILE``): its tasks, added; their names."""
        path = path.expanduser().resolve()
        names: list[str] = []
        if path.suffix in _YAML:
            values = peek(path)
            if not isinstance(values.get("task"), str):
                sub = Catalogue(roots=(path.parent,))
                _yaml_entries(sub, path, path.parent)
                for entry in sub.entries.values():
                    self.catalogue.entries[entry.name] = entry
                self.catalogue.groups.update(sub.groups)
                group = values.get("group")
                if isinstance(group, str):
                    return self.expand(group)
                raise ConfigError(
                    f"{path}: names no task (task: NAME) or group (group: NAME with task: [...])",
                    path=str(path),
                )
            entry = Entry(values["task"], path, path.parent, "yaml")
            names.append(entry.name)
        else:
            tasks = load_python(path)
            for task in tasks:
                self._resolved[task.name] = task
                self.catalogue.entries[task.name] = Entry(task.name, path, path.parent, "python")
            return [t.name for t in tasks]
        if entry.name in self.stock:
            raise ConfigError(
                f"{path}: task {entry.name!r} has a stock task's name; rename it (task: ...)",
                path=str(path),
            )
        self.catalogue.entries[entry.name] = entry
        self._resolved.pop(entry.name, None)
        return names

    def add_task(self, task: Task) -> str:
        """A task object given directly (``sieval.evaluate``), added; its name."""
        self._resolved[task.name] = task
        if task.name not in self:
            file = Path(getattr(task, "source_file", None) or "<object>")
            self.catalogue.entries[task.name] = Entry(task.name, file, file.parent, "object")
        return task.name

    def unknown(self, name: str) -> ConfigError:
        """The error for a name that is no task, group or tag."""
        known = [*self, *self.catalogue.groups]
        problems = self.catalogue.problems
        more = f" {len(problems)} task file(s) could not be read: {problems[0]}" if problems else ""
        return ConfigError(
            f"unknown task {name!r}.{did_you_mean(name, known)} See 'sieval tasks' (with the "
            f"same --include-path) for the list.{more}",
            path="tasks",
            received=name,
        )


def registry(include_paths: Sequence[Path] = ()) -> Registry:
    """The stock tasks and those of ``include_paths`` (and ``$SIEVAL_INCLUDE_PATH``)."""
    from .registry import TASKS

    roots = list(
        dict.fromkeys(Path(p).expanduser().resolve() for p in [*include_paths, *env_include_path()])
    )
    return Registry(TASKS, scan(roots))
