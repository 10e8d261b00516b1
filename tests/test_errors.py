"""The error taxonomy: the tree drawn at the top of sieval/errors.py is every error class sieval
defines, in its real place, and a run file that cannot be written is a branch of its own."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import sieval
from sieval import errors
from sieval.cli.common import EXIT_BAD_INPUT, EXIT_STORAGE, exit_code
from sieval.errors import ConfigError, SievalError, StorageError


def every_error_class() -> dict[str, type]:
    """Every SievalError subclass of every sieval module, by name."""
    for module in pkgutil.walk_packages(sieval.__path__, "sieval."):
        if module.name != "sieval.__main__":
            importlib.import_module(module.name)
    found: dict[str, type] = {}
    todo: list[type] = [SievalError]
    while todo:
        cls = todo.pop()
        found[cls.__name__] = cls
        todo += cls.__subclasses__()
    return found


def drawn_tree() -> dict[str, str | None]:
    """The outline in errors.py's docstring: each class and the class it hangs from (the column
    a name starts at is its depth)."""
    assert errors.__doc__ is not None
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in errors.__doc__.splitlines():
        match = re.match(r"^([ │├└─]*)([A-Z]\w+)  ", line)
        if match is None:
            continue
        column, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((column, name))
    return parents


def test_the_drawn_tree_is_the_real_one() -> None:
    real = every_error_class()
    drawn = drawn_tree()
    missing, extra = sorted(set(real) - set(drawn)), sorted(set(drawn) - set(real))
    assert not missing and not extra, f"not drawn: {missing}; drawn but not real: {extra}"
    for name, parent in drawn.items():
        bases = {b.__name__ for b in real[name].__bases__}
        assert parent is None or parent in bases, f"{name} is drawn under {parent}, not {bases}"


def test_a_class_drawn_with_its_module_is_defined_there() -> None:
    """A class drawn with ``(package/module.py)`` below it (one defined outside errors.py) is
    defined in that module: a split that moves it moves the drawing too."""
    assert errors.__doc__ is not None
    drawn = re.findall(r"([A-Z]\w+)  [^\n]*\n[ │]*\(([\w/]+\.py)\)", errors.__doc__)
    assert drawn, "no class is drawn with its module"
    real = every_error_class()
    for name, path in drawn:
        module = "sieval." + path.removesuffix(".py").replace("/", ".")
        assert real[name].__module__ == module, f"{name} is drawn in {path}"
    outside = {n for n, c in real.items() if c.__module__ != "sieval.errors"}
    assert outside == {name for name, _ in drawn}, "a class defined outside errors.py is drawn bare"


def test_storage_is_its_own_branch() -> None:
    assert StorageError.__bases__ == (SievalError,)
    assert not issubclass(StorageError, ConfigError)
    error = StorageError("cannot write x: the disk is full", path="x", stopped=True)
    assert error.error_class == "StorageError"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StorageError("cannot write x", path="x", stopped=True), EXIT_STORAGE),
        (StorageError("cannot create x", path="x"), EXIT_BAD_INPUT),
        (ConfigError("bad key"), EXIT_BAD_INPUT),
    ],
)
def test_the_exit_code_of_each_branch(error: SievalError, code: int) -> None:
    assert exit_code(error) == code


def test_an_object_with_a_stopped_attribute_is_not_a_storage_failure() -> None:
    class Stopped(ConfigError):
        stopped = True

    assert exit_code(Stopped("x")) == EXIT_BAD_INPUT
