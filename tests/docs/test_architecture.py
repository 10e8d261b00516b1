"""docs/architecture.md's layer block names every package of sieval/ once, and imports point down.

The block (```layers) is one layer a line, top first; packages on one line are peers. A package
may import only packages on lines below its own, at module level or inside a function alike.

Type-only imports (under ``if TYPE_CHECKING:``) count too: they are not executed, but they are
a dependency all the same (a signature that names an upper layer's type cannot be read, checked
or moved without it), and allowing them would let the circles the layers forbid return unseen.
Every import statement of the file is read, wherever it stands (``ast.walk``)."""

from __future__ import annotations

import ast
import functools
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from tests.docs.markdown import ROOT

PACKAGE = ROOT / "sieval"


def layers(text: str) -> list[list[str]]:
    """The layer block's lines, top first, each a list of dotted package names."""
    match = re.search(r"^```layers\n(.*?)^```", text, re.M | re.S)
    assert match is not None, "docs/architecture.md has no ```layers block"
    return [line.split() for line in match.group(1).splitlines() if line.strip()]


def units() -> set[str]:
    """Every package and top-level module of sieval/, dotted (sieval/__init__.py excluded)."""
    found = {f"sieval.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    found |= {f"sieval.{p.stem}" for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    return found


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "sieval" and len(parts) > 1 else None


def imports(path: Path, root: Path = ROOT) -> Iterator[tuple[int, str]]:
    """Each module a file imports (relative imports resolved), with its line."""
    package = path.relative_to(root).with_suffix("").parts[:-1]
    return iter(_imports(path.read_text(), package))


@functools.cache
def _imports(text: str, package: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """``imports`` of a file's text (parsed once per text: the tests read the tree thrice)."""
    return tuple(_walk(text, package))


def _walk(text: str, package: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield node.lineno, module
            for alias in node.names:  # from sieval import model
                yield node.lineno, f"{module}.{alias.name}"


def test_the_layer_block_names_every_package_once() -> None:
    named = [
        unit for line in layers((ROOT / "docs" / "architecture.md").read_text()) for unit in line
    ]
    assert len(named) == len(set(named)), "a package is named twice"
    assert set(named) == units(), (
        f"missing from docs/architecture.md: {sorted(units() - set(named))}; "
        f"named there but not in sieval/: {sorted(set(named) - units())}"
    )


def upward(block: list[list[str]], root: Path = ROOT) -> list[str]:
    """Every import of ``root``'s ``sieval/`` that does not point down the layers:
    'file:line: a imports b'."""
    level = {unit: depth for depth, line in enumerate(block) for unit in line}
    wrong = []
    for path in sorted((root / "sieval").rglob("*.py")):
        parts = path.relative_to(root).parts
        if len(parts) == 2 and parts[1] == "__init__.py":
            continue  # the public API re-exports from every layer
        source = unit_of(".".join(path.relative_to(root).with_suffix("").parts))
        for line, module in imports(path, root):
            target = unit_of(module)
            if source is None or target is None or target == source:
                continue
            if target not in level:
                wrong.append(f"{path.relative_to(root)}:{line}: {module} is in no layer")
                continue
            if level[target] <= level[source]:
                wrong.append(f"{path.relative_to(root)}:{line}: {source} imports {target}")
    return sorted(set(wrong))


KNOTS: set[str] = set()
"""Upward imports allowed for now, each a knot to untie (``"sieval.x imports sieval.y"``): the
test fails on any other upward import, and on a knot once it is gone from the code. The three
the runner's split left (issue 35) are untied: none is left."""


def test_imports_point_down_the_layers() -> None:
    wrong = upward(layers((ROOT / "docs" / "architecture.md").read_text()))
    untied = [knot for knot in KNOTS if not any(w.endswith(knot) for w in wrong)]
    assert not untied, f"untied, so drop them from KNOTS: {untied}"
    wrong = [w for w in wrong if not any(w.endswith(knot) for knot in KNOTS)]
    assert not wrong, "\n".join(wrong)


def test_an_upward_import_is_found() -> None:
    """The check is not vacuous: with the runner drawn below the tasks, the runner's imports of
    the tasks point up, and so do the peers' when drawn on one line."""
    block = layers((ROOT / "docs" / "architecture.md").read_text())
    swapped = [line for line in block if line != ["sieval.tasks"]]
    swapped.insert(swapped.index(["sieval.runner"]), ["sieval.tasks"])
    assert any("sieval.runner imports sieval.tasks" in w for w in upward(swapped))
    merged = [line for line in block if line not in (["sieval.tasks"], ["sieval.runner"])]
    merged.insert(0, ["sieval.runner", "sieval.tasks"])
    assert any("sieval.runner imports sieval.tasks" in w for w in upward(merged))


PLANTED = """\
from typing import TYPE_CHECKING

from ..errors import SievalError

if TYPE_CHECKING:
    from ..runner.engine import RunResult


def later() -> None:
    from sieval.cli import app
"""


def test_a_planted_upward_import_fails(tmp_path: Path) -> None:
    """A copy of the tree with one module planted in ``sieval/tasks/`` that imports the runner
    for a type only and the CLI inside a function: both are upward imports; the same copy
    without the plant has none but the knots."""
    shutil.copytree(PACKAGE, tmp_path / "sieval", ignore=shutil.ignore_patterns("__pycache__"))
    block = layers((ROOT / "docs" / "architecture.md").read_text())
    before = upward(block, tmp_path)
    (tmp_path / "sieval" / "tasks" / "planted.py").write_text(PLANTED)
    found = sorted(set(upward(block, tmp_path)) - set(before))
    assert found == [
        "sieval/tasks/planted.py:10: sieval.tasks imports sieval.cli",
        "sieval/tasks/planted.py:6: sieval.tasks imports sieval.runner",
    ]
