"""Reading a task YAML as lm-evaluation-harness 0.4.13 reads it (``lm_eval/tasks/_yaml_loader.py``),
with the place of every key kept for the errors.

- ``!function module.name`` names a function of ``module.py`` in the YAML's own folder (then an
  importable module), imported only when the task is resolved (``Function.load``), never when
  the YAML is listed;
- ``include: FILE`` (or a list) merges the included files first, the including file's keys
  winning; the path is relative to the including file; a cycle is an error;
- every key's place is ``FILE:LINE``: ``Located.where("metric_list[0].metric")``.

Hostile files fail here, with nothing imported and nothing sent: a file over ``MAX_BYTES``,
one whose aliases expand past ``MAX_NODES`` nodes, a YAML error (its line and column), a
top level that is not a mapping, an include that leaves the include root.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["MAX_BYTES", "MAX_NODES", "Function", "Located", "inside", "peek", "read_yaml"]

MAX_BYTES = 4 << 20
"""The largest task file read (lm-eval 0.4.13's largest stock YAML is under 200 KB)."""
MAX_NODES = 200_000
"""The most YAML nodes a task file may expand to (aliases counted each time they are used)."""

_BASE: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Function:
    """A ``!function module.name`` of a task YAML, not imported yet."""

    qualname: str
    folder: Path
    where: str

    def __str__(self) -> str:
        return f"!function {self.qualname}"

    def load(self) -> Any:
        """The function, from ``module.py`` beside the YAML, else an importable module; any
        failure (a missing module, a module that raises on import, no such name) is a
        ``ConfigError`` naming the YAML's line."""
        module_name, _, name = self.qualname.rpartition(".")
        if not module_name or not name:
            raise ConfigError(
                f"{self.where}: !function {self.qualname!r} must be MODULE.NAME (a function of "
                "MODULE.py beside the YAML)",
                path=self.where,
            )
        local = (self.folder / f"{module_name.replace('.', '/')}.py").resolve()
        try:
            module = _module_at(local) if local.is_file() else importlib.import_module(module_name)
        except ConfigError:
            raise
        except BaseException as exc:  # the user's module raised while it was imported
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise ConfigError(
                f"{self.where}: !function {self.qualname}: importing "
                f"{local if local.is_file() else module_name} failed ({type(exc).__name__}: "
                f"{exc}); fix the module, or put {module_name}.py beside the YAML",
                path=self.where,
            ) from exc
        found = getattr(module, name, None)
        if found is None:
            raise ConfigError(
                f"{self.where}: !function {self.qualname}: {module_name} has no {name!r}; name "
                "a function the module defines",
                path=self.where,
            )
        return found


def _module_at(path: Path) -> Any:
    """The module of ``path``, imported once (lm-eval names its own task modules
    ``lm_eval.tasks.<folder>.<name>``; any other file by its path, so two folders' ``utils``
    never meet)."""
    text = str(path)
    marker = "/lm_eval/tasks/"
    if marker in text:
        name = "lm_eval.tasks." + text.split(marker, 1)[1].removesuffix(".py").replace("/", ".")
    else:
        name = "sieval_task_file." + text.removesuffix(".py").strip("/").replace("/", ".")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported as a module", path=text)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@dataclass
class Located:
    """A task YAML's keys (includes merged) and where each was written."""

    values: dict[str, Any]
    file: Path
    """The file the task was named in (the last of its includes)."""
    lines: dict[str, str] = field(default_factory=dict)
    """``key path -> FILE:LINE`` (``metric_list[0].metric``)."""
    files: list[Path] = field(default_factory=list)
    """Every file read: the task's own and its includes (their hashes enter the run identity)."""

    def where(self, key: str) -> str:
        """The place of ``key`` (or of its closest parent), else the file."""
        probe = key
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            cut = max(probe.rfind("."), probe.rfind("["))
            probe = probe[:cut] if cut > 0 else ""
        return str(self.file)


def _loader(folder: Path, text: str, where: str) -> Any:
    class Loader(_BASE):  # type: ignore[misc]
        pass

    def function(loader: Any, node: Any) -> Function:
        at = f"{where}:{node.start_mark.line + 1}"
        return Function(str(loader.construct_scalar(node)), folder, at)

    Loader.add_constructor("!function", function)
    return Loader(text)


def _nodes(node: Any, budget: list[int]) -> None:
    """Count ``node``'s expansion, refusing past ``MAX_NODES`` (an alias bomb)."""
    stack = [node]
    while stack:
        current = stack.pop()
        budget[0] += 1
        if budget[0] > MAX_NODES:
            raise OverflowError
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack += (key, value)
        elif isinstance(current, yaml.SequenceNode):
            stack += current.value


def _lines(node: Any, where: str, prefix: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            path = f"{prefix}.{key.value}" if prefix else str(key.value)
            yield path, f"{where}:{key.start_mark.line + 1}"
            if prefix.count(".") + prefix.count("[") < 3:
                yield from _lines(value, where, path)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            path = f"{prefix}[{i}]"
            yield path, f"{where}:{item.start_mark.line + 1}"
            if prefix.count(".") + prefix.count("[") < 3:
                yield from _lines(item, where, path)


def _size(path: Path) -> None:
    where = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ConfigError(
            f"{where}: cannot read the task file ({exc.strerror})", path=where
        ) from exc
    if size > MAX_BYTES:
        raise ConfigError(
            f"{where}: the task file is {size:,} bytes, over sieval's limit of {MAX_BYTES:,}; "
            "keep rows in data files (dataset_kwargs.data_files), not in the YAML",
            path=where,
        )


def peek(path: Path) -> dict[str, Any]:
    """The file's own keys, read fast for a listing (no includes, nothing imported, no places);
    a file that cannot be read is a ``ConfigError`` as in ``read_yaml``."""
    _size(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable UTF-8 file ({exc})", path=str(path)) from exc
    loader = _loader(path.parent, text, str(path))
    try:
        value = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        raise _invalid(str(path), exc) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})", path=str(path)) from None
    finally:
        loader.dispose()
    return value if isinstance(value, dict) else {}


def _invalid(where: str, exc: yaml.MarkedYAMLError) -> ConfigError:
    """The error of a file that is not YAML, at its line and column."""
    mark = exc.problem_mark or exc.context_mark
    at = f"{where}:{mark.line + 1}" if mark is not None else where
    col = f", column {mark.column + 1}" if mark is not None else ""
    return ConfigError(
        f"{at}: not valid YAML ({exc.problem or exc.context}{col}); fix the file there", path=at
    )


def _one(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    where = str(path)
    _size(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: not a readable UTF-8 file ({exc})", path=where) from exc
    loader = _loader(path.parent, text, where)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ConfigError(f"{where}: the task file is empty; write its keys", path=where)
        _nodes(node, [0])
        value = loader.construct_document(node)
    except OverflowError:
        raise ConfigError(
            f"{where}: the task file expands to more than {MAX_NODES:,} YAML nodes (aliases "
            "repeat their nodes); write it without nested aliases",
            path=where,
        ) from None
    except yaml.MarkedYAMLError as exc:
        raise _invalid(where, exc) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML ({exc})", path=where) from None
    finally:
        loader.dispose()
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: a task file is a mapping of keys (task:, dataset_path:, ...), not a "
            f"{type(value).__name__}",
            path=where,
        )
    return value, dict(_lines(node, where))


def inside(path: Path, root: Path | None, what: str, where: str) -> Path:
    """``path`` resolved; refused when ``root`` is given and it lies outside it."""
    resolved = path.resolve()
    if root is not None and not resolved.is_relative_to(root.resolve()):
        raise ConfigError(
            f"{where}: {what} {str(path)!r} leaves {root} (the folder given to --include-path); "
            "keep the task's files inside it, or give its folder as another --include-path",
            path=where,
            received=str(path),
        )
    return resolved


def read_yaml(path: Path, *, root: Path | None = None, _seen: tuple[Path, ...] = ()) -> Located:
    """The task YAML at ``path`` with its includes merged (their keys first, its own win), each
    key's place kept. ``root``: includes must stay inside it."""
    path = path.resolve()
    if path in _seen:
        chain = " -> ".join(str(p) for p in (*_seen, path))
        raise ConfigError(f"{path}: include cycle ({chain}); remove one include", path=str(path))
    values, lines = _one(path)
    if "include" not in values:
        return Located(values, path, lines, [path])
    includes = values.pop("include")
    merged: dict[str, Any] = {}
    merged_lines: dict[str, str] = {}
    files: list[Path] = []
    for item in includes if isinstance(includes, list) else [includes]:
        where = lines.get("include", str(path))
        if not isinstance(item, str):
            raise ConfigError(
                f"{where}: include must name a file (or a list of files), got {item!r}",
                path=where,
            )
        target = inside(path.parent / item, root, "include", f"{where}: include")
        if not target.is_file():
            raise ConfigError(
                f"{where}: include {item!r}: no such file ({target}); fix the path (relative to "
                f"{path.parent})",
                path=where,
            )
        base = read_yaml(target, root=root, _seen=(*_seen, path))
        base.values.pop("task_list", None)
        merged.update(base.values)
        merged_lines.update(base.lines)
        files += base.files
    for key in values:  # the file's own keys win, with their own places
        merged_lines = {k: v for k, v in merged_lines.items() if not _under(k, key)}
    merged.update(values)
    merged_lines.update({k: v for k, v in lines.items() if k != "include"})
    return Located(merged, path, merged_lines, [*files, path])


def _under(path: str, key: str) -> bool:
    return path == key or path.startswith((f"{key}.", f"{key}["))
