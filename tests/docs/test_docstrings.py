"""An attribute's docstring sits right under the attribute it describes: two strings in a row in
a class or module body mean one of them describes nothing (it lost its attribute, or sits under
the wrong one)."""

from __future__ import annotations

import ast
import itertools

from tests.docs.markdown import ROOT


def is_string(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def stray_strings(source: str) -> list[int]:
    """The lines of strings that follow another string in one body."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef):
            body = node.body
            found += [
                b.lineno for a, b in itertools.pairwise(body) if is_string(a) and is_string(b)
            ]
    return found


def test_no_docstring_follows_another() -> None:
    stray = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "sieval").rglob("*.py"))
        for line in stray_strings(path.read_text())
    ]
    assert not stray, "a string that documents nothing: " + ", ".join(stray)


def test_a_stray_string_is_found() -> None:
    source = 'class A:\n    x: int\n    """x."""\n    """y."""\n    y: int\n'
    assert stray_strings(source) == [4]
    assert stray_strings('class A:\n    x: int\n    """x."""\n    y: int\n    """y."""\n') == []
