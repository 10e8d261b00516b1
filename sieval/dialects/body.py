"""Wire body paths and the body built from them.

A path names a place in a JSON body: dotted keys, with list indices where the wire has lists
(``generationConfig.temperature``, ``messages[2].content[0].image_url``). Encoders never touch
a body: they return writes (path, value), and ``Body`` merges them. Writes into different keys of
one object merge, equal writes agree, and two different values for one path are a ``Conflict``
naming both writers, so the body never depends on the order the writes arrive in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Body", "Conflict", "has_path", "parse_path", "top_key"]

Segment = str | int

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")


class _Hole:
    """A list slot no write has filled yet (a dialect bug if one survives)."""

    def __repr__(self) -> str:
        return "<hole>"


HOLE = _Hole()


@functools.lru_cache(maxsize=4096)
def parse_path(path: str) -> tuple[Segment, ...]:
    """``"messages[2].content[0]"`` -> ``("messages", 2, "content", 0)``."""
    out: list[Segment] = []
    for part in path.split("."):
        match = _SEGMENT.fullmatch(part)
        if match is None:
            raise ValueError(f"not a body path: {path!r}")
        out.append(match.group(1))
        out.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def top_key(path: str) -> str:
    """The top-level body key a path writes under (``"messages"`` for ``messages[0].role``)."""
    head = parse_path(path)[0]
    assert isinstance(head, str)
    return head


def has_path(body: Mapping[str, Any], path: str) -> bool:
    """True when ``path`` exists in ``body`` (mappings by key, lists by index)."""
    segments = parse_path(path)
    if len(segments) == 1:
        return path in body
    node: Any = body
    for segment in segments:
        if isinstance(segment, int):
            if not isinstance(node, list) or segment >= len(node) or node[segment] is HOLE:
                return False
        elif not isinstance(node, Mapping) or segment not in node:
            return False
        node = node[segment]
    return True


class Conflict(NamedTuple):
    path: str
    """Where the two writes disagree."""
    other: str
    """The writer whose value got there first."""
    existing: Any
    new: Any


class Body:
    """A wire body assembled from writes; ``data`` is the body, safe to encode once complete."""

    __slots__ = ("_lists", "_owned", "_writers", "data")

    def __init__(self, base: dict[str, Any] | None = None) -> None:
        self.data: dict[str, Any] = base if base is not None else {}
        self._owned: set[int] = {id(self.data)}
        self._writers: dict[str, str] = {}
        self._lists: dict[int, tuple[list[Any], tuple[Segment, ...]]] = {}
        """The lists writes index into, by id, with their path: the only places holes live."""

    def write(self, path: str, value: Any, writer: str) -> Conflict | None:
        """Merge ``value`` at ``path``; a disagreement is returned, and nothing is written."""
        segments = parse_path(path)
        if len(segments) == 1 and path not in self.data:  # the common case: a new top-level key
            self.data[path] = value
            self._writers.setdefault(path, writer)
            return None
        node: Any = self.data
        for depth, segment in enumerate(segments[:-1]):
            child = _get(node, segment)
            want_list = isinstance(segments[depth + 1], int)
            if child is HOLE:
                child = [] if want_list else {}
                self._owned.add(id(child))
                _put(node, segment, child)
            elif isinstance(child, list if want_list else dict):
                child = self._own(node, segment, child)
            else:
                return self._conflict(segments[: depth + 1], child, value)
            if want_list:
                self._lists[id(child)] = (child, segments[: depth + 1])
            node = child
        conflict = self._merge(node, segments[-1], value, segments)
        if conflict is None:
            self._writers.setdefault(path, writer)
        return conflict

    def holes(self) -> list[str]:
        """Paths of list slots that no write filled (lists must come out contiguous)."""
        return [
            _show((*at, i))
            for items, at in self._lists.values()
            for i, item in enumerate(items)
            if item is HOLE
        ]

    def _own(self, parent: Any, segment: Segment, child: Any) -> Any:
        """``child`` as a container this body may modify (a written value is copied first)."""
        if id(child) in self._owned:
            return child
        copy = dict(child) if isinstance(child, dict) else list(child)
        self._owned.add(id(copy))
        _put(parent, segment, copy)
        return copy

    def _merge(
        self, node: Any, segment: Segment, value: Any, at: tuple[Segment, ...]
    ) -> Conflict | None:
        existing = _get(node, segment)
        if existing is HOLE:
            _put(node, segment, value)
            return None
        if isinstance(existing, dict) and isinstance(value, dict):
            existing = self._own(node, segment, existing)
            for key, item in value.items():
                conflict = self._merge(existing, key, item, (*at, key))
                if conflict is not None:
                    return conflict
            return None
        if existing == value and type(existing) is type(value):
            return None
        return self._conflict(at, existing, value)

    def _conflict(self, at: tuple[Segment, ...], existing: Any, new: Any) -> Conflict:
        path = _show(at)
        other = next(
            (
                writer
                for written, writer in self._writers.items()
                if path == written
                or path.startswith((written + ".", written + "["))
                or written.startswith((path + ".", path + "["))
            ),
            "?",
        )
        return Conflict(path=path, other=other, existing=existing, new=new)


def _get(node: Any, segment: Segment) -> Any:
    if isinstance(segment, int):
        if not isinstance(node, list):
            raise TypeError("an index into a value that is not a list")
        return node[segment] if segment < len(node) else HOLE
    return node.get(segment, HOLE)


def _put(node: Any, segment: Segment, value: Any) -> None:
    if isinstance(segment, int):
        while len(node) <= segment:
            node.append(HOLE)
    node[segment] = value


def _show(segments: tuple[Segment, ...]) -> str:
    out = ""
    for segment in segments:
        out += f"[{segment}]" if isinstance(segment, int) else (f".{segment}" if out else segment)
    return out
