"""Rows of a data file, each with the place it came from, and the errors that name that place.

Every loader reads through here, so a bad file fails one way: a ``ConfigError`` whose ``path`` is
``FILE:LINE`` (for a hub split, ``hub REPO (NAME, SPLIT) row I``) and whose message says what is
wrong there. A file (or hub split) without a single row is ``no samples in FILE``, never a run
over zero samples. Row shapes are msgspec Structs that declare only the fields a loader reads;
consistency between fields (an answer among the labels, say) is each loader's check, raised
through ``bad_row``.
"""

from __future__ import annotations

import bz2
import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from ..errors import ConfigError

__all__ = [
    "bad_row",
    "csv_rows",
    "hub_where",
    "jsonl_rows",
    "no_samples",
    "read_bz2_text",
    "typed_rows",
]

T = TypeVar("T")

_FIX = "fix or remove that row, or restore the data from its source"


def bad_row(where: str, problem: str) -> ConfigError:
    """The error for one row: ``WHERE: PROBLEM; <how to fix>``."""
    return ConfigError(f"{where}: {problem}; {_FIX}", path=where)


def no_samples(where: str) -> ConfigError:
    """The error for a file or hub split without a single row."""
    return ConfigError(
        f"no samples in {where}: it holds no rows; restore it from its source", path=where
    )


def hub_where(hub_path: str, hub_name: str | None, split: str) -> str:
    """How errors name a hub split: ``hub REPO (NAME, SPLIT)``."""
    return f"hub {hub_path} ({hub_name}, {split})" if hub_name else f"hub {hub_path} ({split})"


def _decode_utf8(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise bad_row(f"{path}:{line}", f"not valid UTF-8 ({exc.reason})") from exc


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror})", path=str(path)) from exc
    return _decode_utf8(path, data)


def read_bz2_text(path: Path) -> str:
    """The UTF-8 text of a bzip2 file."""
    try:
        data = bz2.decompress(path.read_bytes())
    except (OSError, EOFError, ValueError) as exc:
        raise ConfigError(
            f"{path}: not a readable bzip2 file ({exc}); restore it from its source",
            path=str(path),
        ) from exc
    return _decode_utf8(path, data)


def _checked(rows: list[tuple[str, T]], where: str) -> list[tuple[str, T]]:
    if not rows:
        raise no_samples(where)
    return rows


def jsonl_rows(path: Path, decoder: msgspec.json.Decoder[T]) -> list[tuple[str, T]]:
    """Every non-blank line of a JSON Lines file decoded by ``decoder``, with its ``FILE:LINE``."""
    rows: list[tuple[str, T]] = []
    for number, line in enumerate(_read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            rows.append((where, decoder.decode(line)))
        except msgspec.ValidationError as exc:
            raise bad_row(where, f"unexpected row ({exc})") from exc
        except msgspec.DecodeError as exc:
            raise bad_row(where, f"not valid JSON ({exc})") from exc
    return _checked(rows, str(path))


def csv_rows(path: Path) -> list[tuple[str, list[str]]]:
    """Every record of a headerless CSV file (strict quoting), with the ``FILE:LINE`` it starts
    on; blank lines are skipped."""
    reader = csv.reader(io.StringIO(_read_text(path), newline=""), strict=True)
    rows: list[tuple[str, list[str]]] = []
    while True:
        where = f"{path}:{reader.line_num + 1}"
        try:
            record = next(reader, None)
        except csv.Error as exc:
            raise bad_row(where, f"not valid CSV ({exc})") from exc
        if record is None:
            return _checked(rows, str(path))
        if record:
            rows.append((where, record))


def typed_rows(
    rows: Iterable[dict[str, Any]], row_type: type[T], where: str
) -> list[tuple[str, T]]:
    """Hub rows converted to ``row_type``, each named ``WHERE row I``."""
    out: list[tuple[str, T]] = []
    for i, row in enumerate(rows):
        at = f"{where} row {i}"
        try:
            out.append((at, msgspec.convert(row, row_type)))
        except msgspec.ValidationError as exc:
            raise bad_row(at, f"unexpected row ({exc})") from exc
    return _checked(out, where)
