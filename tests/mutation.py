"""Fuzzing helpers the dialect tests share: JSON values, every path into a reply, setting one."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70) | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
"""Any small JSON value, of any type: what a broken server might put anywhere."""


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``node`` (the root ``()`` first; the first 3 elements of each list)."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            out += paths(value, (*prefix, i))
    return out


def set_at(node: Any, path: tuple[Any, ...], value: Any) -> None:
    """Replace what ``path`` (not the root) points at in ``node`` with ``value``."""
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
