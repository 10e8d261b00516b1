"""Where benchmark files come from: a local data directory first, the Hugging Face hub second.

The data directory is the argument a task receives (the CLI fills it from ``--data-dir`` or
``SIEVAL_DATA_DIR``). Only when a dataset's files are absent there does a loader try the hub, via
the optional ``datasets`` package imported lazily; when that is impossible the loader raises a
``ConfigError`` naming where it looked and how to supply the data.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError, did_you_mean

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIRS",
    "Row",
    "Source",
    "checksums",
    "file_sha256",
    "find_data_dir",
    "hub_rows",
    "resolve_data_dir",
]

DATA_DIR_ENV = "SIEVAL_DATA_DIR"
"""Environment variable naming the data directory when ``--data-dir`` is not given."""


Row = tuple[str, dict[str, Any]]
"""One row of a dataset: where it was read and its fields (the hub dataset's names and types).

Where is ``FILE:LINE`` (JSON Lines, CSV, TSV, the first line of a multi-line record),
``FILE#row N`` (a JSON array, Arrow or Parquet file; N counts from 0, as ``dataset[N]`` does),
``ZIP!MEMBER#row N`` (a file inside a zip), or ``hub REPO (NAME, SPLIT) row N`` (the fallback)."""


class Source(msgspec.Struct, frozen=True, kw_only=True):
    """What one dataset module (``sieval/data/<folder>.py``) reads, declared as its ``SOURCE``.

    ``files`` and ``rows`` call the module's functions of those names, so a task needs only the
    source (``registry.get_source(name)``)."""

    folder: str
    """The folder under the data directory; also the module's name."""
    splits: tuple[str, ...]
    """The splits stored, named as the hub dataset names them (``validation``, not ``val``)."""
    hub: str
    """The Hugging Face dataset lm-evaluation-harness 0.4.13 reads (``dataset_path``): the
    fallback ``datasets.load_dataset(hub, hub_name, split=...)`` when the files are absent."""
    hub_name: str | None
    """Its config (``dataset_name``); for a dataset with subsets, what a subset maps to is said
    in the module."""
    format: str
    """The stored format and file, in one line."""
    fields: tuple[str, ...]
    """The names of every row's fields, in the hub dataset's order (MBPP's ``sanitized`` config
    has other fields: ``mbpp.SANITIZED_FIELDS``)."""
    subsets: tuple[str, ...] = ()
    """Named parts (BBH subtasks, MMLU subjects, MMLU-Pro categories, MBPP configs), chosen with
    ``subset=``; empty when the dataset has none."""
    subset_required: bool = False
    """True when ``subset=None`` (the whole dataset) has no meaning (BBH, MBPP)."""

    def check(self, data_dir: Path, split: str, subset: str | None) -> None:
        """A ``ConfigError`` for a split that is not stored or a subset that does not exist."""
        where = str(data_dir / self.folder)
        if split not in self.splits:
            raise ConfigError(
                f"{self.folder}: split {split!r} is not stored in {where} (stored: "
                f"{', '.join(self.splits)}).{_split_hint(split, self.splits)} Use a stored split",
                path=where,
                received=split,
            )
        if subset is None:
            if self.subset_required:
                raise ConfigError(
                    f"{self.folder}: choose a subset, one of its {len(self.subsets)}: "
                    f"{', '.join(self.subsets)}",
                    path=where,
                )
        elif not self.subsets:
            raise ConfigError(
                f"{self.folder} has no subsets (got {subset!r}); leave the subset unset",
                path=where,
                received=subset,
            )
        elif subset not in self.subsets:
            raise ConfigError(
                f"{self.folder} has no subset {subset!r}.{did_you_mean(subset, self.subsets)} "
                f"Subsets: {', '.join(self.subsets)}",
                path=where,
                received=subset,
            )

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
        """The files ``rows`` reads for this split (their checksums enter the run identity)."""
        paths: list[Path] = self._module().files(data_dir, split, subset)
        return paths

    def rows(self, data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
        """Every row of the split (or subset), in the dataset's own order."""
        rows: list[Row] = self._module().rows(data_dir, split, subset)
        return rows

    def _module(self) -> Any:
        return importlib.import_module(f"{__package__}.{self.folder}")


_SPLIT_ALIASES = {"val": "validation", "valid": "validation", "dev": "validation"}
"""Names the original releases use for a split the hub calls otherwise."""


def _split_hint(split: str, splits: Sequence[str]) -> str:
    alias = _SPLIT_ALIASES.get(split)
    if alias in splits:
        return f" Did you mean {alias!r}?"
    return did_you_mean(split, splits)


def resolve_data_dir(data_dir: str | Path | None = None) -> Path | None:
    """The data directory to read: the argument, else ``$SIEVAL_DATA_DIR``, else None."""
    if data_dir is not None:
        return Path(data_dir)
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else None


DEFAULT_DATA_DIRS = (Path("data"), Path("..") / "shared" / "data")
"""Where data is looked for (relative to the working directory) when nothing names a place."""


def find_data_dir(given: str | Path | None = None, configured: str | None = None) -> Path:
    """The data directory a run reads: ``given`` (``--data-dir``), else ``$SIEVAL_DATA_DIR``,
    else ``configured`` (a config's ``data_dir``), else ``data`` or the benchmark data beside a
    checkout (``../shared/data``), whichever exists (``data`` when neither: the error names it)."""
    found = resolve_data_dir(given)
    if found is not None:
        return found
    if configured:
        return Path(configured)
    return next((p for p in DEFAULT_DATA_DIRS if p.is_dir()), DEFAULT_DATA_DIRS[0])


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
