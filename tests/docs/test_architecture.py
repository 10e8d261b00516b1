"""docs/architecture.md's layer block names every package of sieval/ once, and imports point down.

The block (```layers) is one layer a line, top first; packages on one line are peers. A package
may import only packages on lines below its own, at module level or inside a function alike."""

from __future__ import annotations

import ast
import re
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


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """Each module a file imports (relative imports resolved), with its line."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
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


def upward(block: list[list[str]]) -> list[str]:
    """Every import that does not point down the layers: 'file:line: a imports b'."""
    level = {unit: depth for depth, line in enumerate(block) for unit in line}
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if len(parts) == 2 and parts[1] == "__init__.py":
            continue  # the public API re-exports from every layer
        source = unit_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for line, module in imports(path):
            target = unit_of(module)
            if source is None or target is None or target == source:
                continue
            if target not in level:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {module} is in no layer")
                continue
            if level[target] <= level[source]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {source} imports {target}")
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
