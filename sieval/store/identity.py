"""Run identity: ``sha256:`` over canonical JSON of everything that can change a score.

The inputs are, per model: endpoint (``embedded`` rather than its random port), model id,
dialect id and request defaults (never a key or the name of its variable); per task: its whole
``TaskConfig`` and the sha256 of each data file; plus the sieval version and the records'
``schema_version``. Concurrency, timeouts and the wire log do not enter it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ..data.source import file_sha256 as data_sha256

__all__ = [
    "canonical_json",
    "changed_inputs",
    "file_sha256",
    "fingerprint",
    "sieval_version",
]


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, ASCII, NaN refused."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def fingerprint(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("ascii")).hexdigest()


def file_sha256(path: Path) -> str:
    return "sha256:" + data_sha256(path)


def sieval_version() -> str:
    try:
        return metadata.version("sieval")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            _flat(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif prefix:
        out[prefix] = value


def changed_inputs(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One line per input path that differs: ``tasks.arc.config.n: 10 -> 20``."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    _flat(old, "", before)
    _flat(new, "", after)
    lines = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            lines.append(f"{key}: {_show(before[key])} -> (absent)")
        elif key not in before:
            lines.append(f"{key}: (absent) -> {_show(after[key])}")
        elif canonical_json(before[key]) != canonical_json(after[key]):
            lines.append(f"{key}: {_show(before[key])} -> {_show(after[key])}")
    return lines


def _show(value: Any) -> str:
    text = canonical_json(value)
    return text if len(text) <= 80 else text[:77] + "..."
