"""A task's own data files: JSON Lines, JSON, CSV, TSV, Parquet, Arrow and plain text, from any
folder; a Hugging Face hub id through the optional ``datasets`` package.

This is what lm-evaluation-harness's ``dataset_path: json|csv|parquet|arrow|text`` with
``dataset_kwargs.data_files`` reads through ``datasets.load_dataset``, read here without it:

- ``json``: a file holding one JSON array of objects (``FILE#row N``), an object whose ``field``
  (``dataset_kwargs.field``) is that array, or JSON Lines (``FILE:LINE``); ``jsonl`` is JSON
  Lines only;
- ``csv`` / ``tsv``: a header line naming the columns, then one record a line (``FILE:LINE``);
  each column's type is inferred as ``datasets`` (pandas) infers it: int when every value is an
  integer, float when every value is a number, else string; an empty cell is None;
- ``parquet`` / ``arrow``: every row and column (``FILE#row N``; an Arrow file may be an IPC
  stream, as ``datasets`` writes it, or an IPC file);
- ``text``: one row ``{"text": line}`` per line, as ``datasets``' text builder.

Paths are resolved by the task file's loader (relative to the task file's folder); a split's
files are read in order and their rows joined. Every file's checksum enters the run identity
(``files``). A malformed row is a ``ConfigError`` naming ``FILE:LINE`` (or ``FILE#row N``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ConfigError, did_you_mean
from .files import check_size
from .rows import bad_row, no_samples, read_text
from .source import Row, hub_rows

__all__ = ["FORMATS", "FileData", "HubData", "read_file"]

FORMATS = ("json", "jsonl", "csv", "tsv", "parquet", "arrow", "text")
"""The local formats (lm-eval's ``dataset_path`` builders, plus ``jsonl`` and ``tsv``)."""

_SUFFIXES = {
    ".jsonl": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".txt": "text",
}


def format_of(path: Path, declared: str) -> str:
    """The format a file is read as: the declared one (``json`` reads ``.jsonl`` too)."""
    if declared == "json" and path.suffix == ".jsonl":
        return "jsonl"
    return declared


def _json_rows(path: Path, field_name: str | None) -> list[Row]:
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("[") or (field_name is not None and stripped.startswith("{")):
        try:
            value = msgspec.json.decode(text)
        except msgspec.DecodeError as exc:
            if not stripped.startswith("["):  # JSON Lines after all
                return _jsonl_rows(path, text)
            raise bad_row(str(path), f"not valid JSON ({exc})") from exc
        if field_name is not None and isinstance(value, dict):
            if field_name not in value:
                raise bad_row(
                    str(path),
                    f"no field {field_name!r} (dataset_kwargs.field); it has "
                    f"{', '.join(map(str, value)) or 'no fields'}",
                )
            value = value[field_name]
        if not isinstance(value, list):
            raise bad_row(str(path), "expected a JSON array of objects")
        rows: list[Row] = []
        for i, item in enumerate(value):
            where = f"{path}#row {i}"
            if not isinstance(item, dict):
                raise bad_row(where, f"expected a JSON object, got {type(item).__name__}")
            rows.append((where, item))
        return rows
    return _jsonl_rows(path, text)


def _jsonl_rows(path: Path, text: str | None = None) -> list[Row]:
    text = read_text(path) if text is None else text
    rows: list[Row] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            raise bad_row(where, f"not valid JSON ({exc})") from exc
        if not isinstance(item, dict):
            raise bad_row(where, f"expected a JSON object, got {type(item).__name__}")
        rows.append((where, item))
    return rows


def _number(value: str) -> int | float | None:
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _column_type(values: Sequence[str]) -> type:
    """What pandas would make of a column: int, float, else str (empty cells ignored)."""
    present = [v for v in values if v != ""]
    if not present:
        return str
    numbers = [_number(v) for v in present]
    if any(n is None for n in numbers):
        return str
    if all(isinstance(n, int) for n in numbers) and len(present) == len(values):
        return int
    return float


def _delimited_rows(
    path: Path, delimiter: str, column_names: Sequence[str] | None = None
) -> list[Row]:
    reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter=delimiter, strict=True)
    records: list[tuple[str, list[str]]] = []
    while True:
        where = f"{path}:{reader.line_num + 1}"
        try:
            record = next(reader, None)
        except csv.Error as exc:
            label = "TSV" if delimiter == "\t" else "CSV"
            raise bad_row(where, f"not valid {label} ({exc})") from exc
        if record is None:
            break
        if record:
            records.append((where, record))
    if not records:
        raise no_samples(str(path))
    if column_names is not None:  # no header line: every record is a row
        head_at, header, body = f"{path}:1", list(column_names), records
    else:
        (head_at, header), *body = records
    if len(set(header)) != len(header) or any(not h for h in header):
        raise bad_row(head_at, f"the header must name each column once, got {header}")
    for where, record in body:
        if len(record) != len(header):
            raise bad_row(where, f"expected {len(header)} fields (the header's), got {len(record)}")
    columns = list(zip(*(r for _, r in body), strict=True)) if body else [()] * len(header)
    types = [_column_type(col) for col in columns]
    rows: list[Row] = []
    for where, record in body:
        fields: dict[str, Any] = {}
        for name, kind, value in zip(header, types, record, strict=True):
            if value == "":
                fields[name] = None if kind is not str else ""
            elif kind is str:
                fields[name] = value
            else:
                fields[name] = kind(float(value)) if kind is int and "." in value else kind(value)
        rows.append((where, fields))
    return rows


def _arrow_rows(path: Path, kind: str) -> list[Row]:
    from .arrow import _pyarrow

    check_size(path)
    pa = _pyarrow(str(path))
    try:
        if kind == "parquet":
            table = pa.parquet.read_table(path, use_threads=False)
        else:
            try:
                with pa.ipc.open_stream(pa.OSFile(str(path))) as reader:
                    table = reader.read_all()
            except pa.ArrowInvalid:
                with pa.ipc.open_file(pa.OSFile(str(path))) as file_reader:
                    table = file_reader.read_all()
    except (pa.ArrowException, OSError) as exc:
        name = "Parquet file" if kind == "parquet" else "Arrow file"
        raise ConfigError(
            f"{path}: not a readable {name} ({exc}); fix or replace it", path=str(path)
        ) from exc
    return [(f"{path}#row {i}", record) for i, record in enumerate(table.to_pylist())]


def _text_rows(path: Path) -> list[Row]:
    lines = read_text(path).splitlines()
    return [(f"{path}:{i}", {"text": line}) for i, line in enumerate(lines, 1)]


def read_file(
    path: Path,
    kind: str,
    *,
    field_name: str | None = None,
    column_names: Sequence[str] | None = None,
) -> list[Row]:
    """Every row of one file of format ``kind`` (``FORMATS``), in order."""
    if not path.is_file():
        raise ConfigError(
            f"{path}: no such data file; fix the path (relative to the task file's folder) in "
            "dataset_kwargs.data_files",
            path=str(path),
        )
    kind = format_of(path, kind)
    if kind == "json":
        rows = _json_rows(path, field_name)
    elif kind == "jsonl":
        rows = _jsonl_rows(path)
    elif kind in ("csv", "tsv"):
        rows = _delimited_rows(path, "," if kind == "csv" else "\t", column_names)
    elif kind in ("parquet", "arrow"):
        rows = _arrow_rows(path, kind)
    elif kind == "text":
        rows = _text_rows(path)
    else:
        raise ConfigError(
            f"{path}: unknown data format {kind!r}; use one of {', '.join(FORMATS)}",
            path=str(path),
        )
    if not rows:
        raise no_samples(str(path))
    return rows


@dataclass(frozen=True)
class FileData:
    """A task's rows from its own files: ``files[split]`` read as ``format``."""

    format: str
    paths: Mapping[str, tuple[Path, ...]]
    """The files of each split, absolute."""
    field_name: str | None = None
    """``dataset_kwargs.field``: the key of a JSON object that holds the rows."""
    folder: str = field(default="")
    """How ``sieval tasks`` names the data (the files' common folder)."""
    column_names: tuple[str, ...] | None = None
    """``dataset_kwargs.column_names``: a CSV/TSV without a header line, its columns named."""

    def __post_init__(self) -> None:
        if not self.folder:
            first = next(iter(self.paths.values()), ())
            object.__setattr__(self, "folder", str(first[0].parent) if first else "")

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self.paths)

    def _paths(self, split: str) -> tuple[Path, ...]:
        if split not in self.paths:
            raise ConfigError(
                f"the task's data has no split {split!r}.{did_you_mean(split, self.paths)} Its "
                f"splits (dataset_kwargs.data_files): {', '.join(self.paths)}",
                path="dataset_kwargs.data_files",
                received=split,
            )
        return self.paths[split]

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
        return list(self._paths(split))

    def rows(self, data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
        out: list[Row] = []
        for path in self._paths(split):
            out += read_file(
                path, self.format, field_name=self.field_name, column_names=self.column_names
            )
        return out


@dataclass(frozen=True)
class HubData:
    """Rows of a Hugging Face hub dataset (``dataset_path`` a hub id) through the optional
    ``datasets`` package, online; for a task whose data sieval does not store."""

    hub: str
    name: str | None
    splits: tuple[str, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def folder(self) -> str:
        return f"hub {self.hub}" + (f" ({self.name})" if self.name else "")

    def files(self, data_dir: Path, split: str, subset: str | None = None) -> list[Path]:
        return []

    def rows(self, data_dir: Path, split: str, subset: str | None = None) -> list[Row]:
        found = hub_rows(self.hub, self.hub, self.name, split, [])
        where = (
            f"hub {self.hub} ({self.name}, {split})" if self.name else f"hub {self.hub} ({split})"
        )
        if not found:
            raise no_samples(where)
        return [(f"{where} row {i}", row) for i, row in enumerate(found)]
