"""Rows of Apache Arrow data: IPC streams (what ``datasets`` writes, ``save_to_disk`` and its cache)
and Parquet files, read with pyarrow.

pyarrow is imported inside these functions only, so ``import sieval`` and ``sieval tasks`` never
load it. A stream may be a file on disk or the bytes of a zip member (read in memory, nothing
extracted). Every row is named ``WHERE#row N`` (N from 0); a file pyarrow cannot read, or one
without the columns a loader expects, is a ``ConfigError`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .files import MAX_BYTES_ENV, check_size, max_bytes, too_big
from .rows import bad_row, no_samples, zip_member

__all__ = ["arrow_stream_rows", "parquet_rows", "zipped_stream_rows"]


def _pyarrow(where: str) -> Any:
    try:
        import pyarrow
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:  # pragma: no cover - a dependency of sieval; only a broken install
        raise ConfigError(
            f"{where}: reading Arrow and Parquet files needs pyarrow; pip install pyarrow",
            path=where,
        ) from None
    return pyarrow


def _rows(where: str, table: Any, columns: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise bad_row(
            where,
            f"no column {', '.join(repr(c) for c in missing)} (it has "
            f"{', '.join(table.column_names) or 'no columns'}; expected {', '.join(columns)})",
        )
    if table.num_rows == 0:
        raise no_samples(where)
    records = table.select(list(columns)).to_pylist()
    return [(f"{where}#row {i}", record) for i, record in enumerate(records)]


def _table(where: str, kind: str, read: Callable[[Any], Any]) -> Any:
    """``read(pyarrow)``, or the ``ConfigError`` saying ``where`` is no readable ``kind``."""
    pa = _pyarrow(where)
    try:
        return read(pa)
    except (pa.ArrowException, OSError) as exc:
        raise ConfigError(
            f"{where}: not a readable {kind} ({exc}); restore it from its source", path=where
        ) from exc


def _stream(pa: Any, data: bytes | Path) -> Any:
    source = pa.BufferReader(data) if isinstance(data, bytes) else pa.OSFile(str(data))
    with pa.ipc.open_stream(source) as reader:
        return reader.read_all()


def arrow_stream_rows(
    where: str, data: bytes | Path, columns: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Every row of an Arrow IPC stream (``data``: its bytes or its file), ``columns`` only."""
    if isinstance(data, Path):
        check_size(data)
    return _rows(where, _table(where, "Arrow stream", lambda pa: _stream(pa, data)), columns)


def zipped_stream_rows(
    path: Path, member: str, columns: Sequence[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Every row of an Arrow stream inside a zip, named ``ZIP!MEMBER#row N``."""
    return arrow_stream_rows(f"{path}!{member}", zip_member(path, member), columns)


def parquet_rows(path: Path, columns: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every row of a Parquet file, ``columns`` only (read on one thread: the files are small and
    the thread pool's start-up cost more than it saved on a 2-core machine)."""

    check_size(path)

    def read(pa: Any) -> Any:
        # the columns inflate to their uncompressed size, which the file's footer says
        meta = pa.parquet.ParquetFile(path).metadata
        inflated = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if inflated > max_bytes():
            raise too_big(str(path), "its uncompressed data", inflated, max_bytes(), MAX_BYTES_ENV)
        return pa.parquet.read_table(path, use_threads=False)

    return _rows(str(path), _table(str(path), "Parquet file", read), columns)
