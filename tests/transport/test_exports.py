"""The public surface of sieval.transport is exactly its sorted __all__."""

from __future__ import annotations

import pkgutil

import sieval.transport as transport


def test_all_is_sorted_and_importable() -> None:
    def isort_style(name: str) -> tuple[bool, bool, str]:  # constants, classes, functions
        return (not name.isupper(), not name[0].isupper(), name)

    assert transport.__all__ == sorted(transport.__all__, key=isort_style)
    for name in transport.__all__:
        assert getattr(transport, name) is not None
    public = {n for n in dir(transport) if not n.startswith("_")}
    modules = {m.name for m in pkgutil.iter_modules(transport.__path__)}  # imported or not
    assert public - modules - {"wirelog", "annotations"} == set(transport.__all__)
