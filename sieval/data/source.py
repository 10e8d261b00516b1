"""Where benchmark files come from: a local data directory first, the Hugging Face hub second.

The data directory is the argument a task receives (the CLI fills it from ``--data-dir`` or
``SIEVAL_DATA_DIR``). Only when a dataset's files are absent there does a loader try the hub, via
the optional ``datasets`` package imported lazily; when that is impossible the loader raises a
``ConfigError`` naming where it looked and how to supply the data.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["DATA_DIR_ENV", "checksums", "file_sha256", "hub_rows", "resolve_data_dir"]

DATA_DIR_ENV = "SIEVAL_DATA_DIR"
"""Environment variable naming the data directory when ``--data-dir`` is not given."""


def resolve_data_dir(data_dir: str | Path | None = None) -> Path | None:
    """The data directory to read: the argument, else ``$SIEVAL_DATA_DIR``, else None."""
    if data_dir is not None:
        return Path(data_dir)
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else None


def file_sha256(path: Path) -> str:
    """The sha256 hex digest of one file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksums(paths: Iterable[Path]) -> dict[str, str]:
    """``{path: sha256}`` for every file read, keys sorted (an input of the run identity)."""
    return {str(p): file_sha256(p) for p in sorted(paths)}


def hub_rows(
    dataset: str, hub_path: str, hub_name: str | None, split: str, looked: Sequence[Path]
) -> list[dict[str, Any]]:
    """Rows of one hub split, or a ``ConfigError`` saying where we looked and how to fix it."""
    where = ", ".join(str(p) for p in looked)
    fix = (
        f"point --data-dir (or ${DATA_DIR_ENV}) at a directory holding {dataset}/, "
        f"or install the optional 'datasets' package and run online to fetch {hub_path}"
    )
    try:
        import datasets  # optional dependency, imported only when local files are absent
    except ImportError:
        raise ConfigError(
            f"{dataset} data not found (looked for {where}) and 'datasets' is not installed: {fix}",
            path=where,
        ) from None
    try:
        rows = datasets.load_dataset(hub_path, hub_name, split=split)
    except Exception as exc:  # the hub raises many unrelated types (offline, 404, auth)
        raise ConfigError(
            f"{dataset} data not found (looked for {where}) and the hub copy {hub_path} "
            f"({hub_name}, {split}) could not be loaded ({type(exc).__name__}: {exc}): {fix}",
            path=where,
        ) from exc
    return [dict(row) for row in rows]
