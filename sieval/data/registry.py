"""The dataset table, discovered: every public module of ``sieval.data`` that defines ``SOURCE``.

A new dataset is one new module named after its data folder; nothing here changes. ``SOURCES``
maps folder names to sources, sorted. Discovery imports only the dataset modules themselves: a
reader's heavy dependency (pyarrow) is imported when rows are read, never here.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..errors import ConfigError, did_you_mean
from .source import Source

__all__ = ["SOURCES", "discover", "get_source"]


def discover(package: str = __package__ or "sieval.data") -> dict[str, Source]:
    """``{folder: source}`` from the ``SOURCE`` of every non-underscore module in ``package``."""
    found: dict[str, Source] = {}
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name.startswith("_") or info.name == "registry":
            continue
        source = getattr(importlib.import_module(f"{package}.{info.name}"), "SOURCE", None)
        if source is None:
            continue
        if source.folder != info.name:
            raise AssertionError(
                f"sieval/data/{info.name}.py declares folder {source.folder!r}: a dataset "
                "module is named after its folder"
            )
        found[source.folder] = source
    return dict(sorted(found.items()))


SOURCES: dict[str, Source] = discover()


def get_source(name: str) -> Source:
    """The dataset stored in folder ``name``; a ``ConfigError`` with the closest name for a typo."""
    if name in SOURCES:
        return SOURCES[name]
    raise ConfigError(
        f"unknown dataset {name!r}.{did_you_mean(name, SOURCES)} Known datasets: "
        f"{', '.join(SOURCES)}",
        path="data",
        received=name,
    )
