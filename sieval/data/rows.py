"""Rows of a data file, each with the place it came from, and the errors that name that place.

Every loader reads through here, so a bad file fails one way: a ``ConfigError`` whose ``path`` is
``FILE:LINE`` (``FILE#row N`` in a JSON array, ``ZIP!MEMBER`` inside a zip; for a hub split,
``hub REPO (NAME, SPLIT) row I``) and whose message says what is wrong there. A file (or hub
split) without a single row is ``no samples in FILE``, never a run over zero samples. Row
shapes are msgspec Structs that declare only the fields a loader reads; consistency between fields
(an answer among the labels, say) is each loader's check, raised through ``bad_row``.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from ..errors import ConfigError
from .files import (
    MAX_BYTES_ENV,
    check_size,
    max_bytes,
    max_row_bytes,
    read_capped,
    row_size,
    row_too_big,
    too_big,
)
from .files import present as is_present
from .source import Row, Source, hub_rows

__all__ = [
    "as_fields",
    "bad_row",
    "converted",
    "csv_rows",
    "from_hub",
    "header_rows",
    "hub_where",
    "json_array_rows",
    "jsonl_rows",
    "lines",
    "local_files",
    "local_or_hub",
    "no_samples",
    "read_bz2_text",
    "read_gzip_text",
    "read_text",
    "typed_rows",
    "unique",
    "zip_member",
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


def read_text(path: Path) -> str:
    """The UTF-8 text of a file (within ``files.max_bytes()``)."""
    check_size(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror})", path=str(path)) from exc
    return _decode_utf8(path, data)


def read_bz2_text(path: Path) -> str:
    """The UTF-8 text of a bzip2 file (the file, and the text it inflates to, within
    ``files.max_bytes()``)."""
    check_size(path)
    limit = max_bytes()
    inflate = bz2.BZ2Decompressor()
    try:
        data = inflate.decompress(path.read_bytes(), max_length=limit + 1)
        if len(data) <= limit and not inflate.eof:
            data += inflate.decompress(b"", max_length=limit + 1 - len(data))
        if len(data) <= limit and not inflate.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")
    except (OSError, EOFError, ValueError) as exc:
        raise ConfigError(
            f"{path}: not a readable bzip2 file ({exc}); restore it from its source",
            path=str(path),
        ) from exc
    if len(data) > limit:
        raise too_big(str(path), "the text it inflates to", None, limit, MAX_BYTES_ENV)
    return _decode_utf8(path, data)


def read_gzip_text(path: Path) -> str:
    """The UTF-8 text of a gzip file (the file, and the text it inflates to, within
    ``files.max_bytes()``)."""
    check_size(path)
    try:
        with gzip.open(path, "rb") as fh:
            data = read_capped(fh, str(path), "the text it inflates to")
    except (OSError, EOFError, zlib.error) as exc:
        raise ConfigError(
            f"{path}: not a readable gzip file ({exc}); restore it from its source",
            path=str(path),
        ) from exc
    return _decode_utf8(path, data)


def zip_member(path: Path, member: str) -> bytes:
    """The bytes of one member of a zip, read in memory (nothing is extracted); the zip, and the
    member as its header says and as it inflates, within ``files.max_bytes()``."""
    where = f"{path}!{member}"
    damaged = (zipfile.BadZipFile, OSError, EOFError, zlib.error)
    check_size(path)
    try:
        archive = zipfile.ZipFile(path)
    except damaged as exc:
        raise ConfigError(
            f"{path}: not a readable zip file ({exc}); restore it from its source", path=str(path)
        ) from exc
    with archive:
        try:
            info = archive.getinfo(member)
            if info.file_size > max_bytes():
                raise too_big(where, "the member", info.file_size, max_bytes(), MAX_BYTES_ENV)
            with archive.open(info) as fh:
                return read_capped(fh, where, "the member")
        except KeyError:
            raise ConfigError(
                f"{where}: the zip has no member {member!r}; restore {path.name} from its source",
                path=where,
            ) from None
        except damaged as exc:
            raise ConfigError(
                f"{where}: the member cannot be read ({exc}); restore {path.name} from its source",
                path=where,
            ) from exc


def lines(text: str, path: Path) -> list[str]:
    """``text`` (read from ``path``) split at ``\\n``, each line a row within
    ``files.max_row_bytes()`` (a ``ConfigError`` naming ``FILE:LINE`` otherwise)."""
    found = text.split("\n")
    limit = max_row_bytes()
    for number, line in enumerate(found, 1):
        size = row_size(line, limit)
        if size is not None:
            raise row_too_big(f"{path}:{number}", size, limit)
    return found


def _checked(rows: list[tuple[str, T]], where: str) -> list[tuple[str, T]]:
    if not rows:
        raise no_samples(where)
    return rows


def jsonl_rows(
    path: Path, decoder: msgspec.json.Decoder[T], *, gzipped: bool = False
) -> list[tuple[str, T]]:
    """Every non-blank line of a JSON Lines file (``gzipped``: of a gzip file) decoded by
    ``decoder``, with its ``FILE:LINE`` (the line of the uncompressed text)."""
    rows: list[tuple[str, T]] = []
    text = read_gzip_text(path) if gzipped else read_text(path)
    for number, line in enumerate(lines(text, path), 1):
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


def json_array_rows(
    where: str, data: bytes, decoder: msgspec.json.Decoder[T]
) -> list[tuple[str, T]]:
    """Every element of a JSON array (a file's bytes, or a zip member's), each decoded by
    ``decoder`` and named ``WHERE#row N``."""
    try:
        raws = msgspec.json.decode(data, type=list[msgspec.Raw])
    except msgspec.ValidationError as exc:
        raise bad_row(where, f"expected a JSON array of rows ({exc})") from exc
    except msgspec.DecodeError as exc:
        raise bad_row(where, f"not valid JSON ({exc})") from exc
    rows: list[tuple[str, T]] = []
    limit = max_row_bytes()
    for i, raw in enumerate(raws):
        at = f"{where}#row {i}"
        size = row_size(bytes(raw), limit) if len(raw) > limit else None
        if size is not None:
            raise row_too_big(at, size, limit)
        try:
            rows.append((at, decoder.decode(raw)))
        except msgspec.ValidationError as exc:
            raise bad_row(at, f"unexpected row ({exc})") from exc
    return _checked(rows, where)


def csv_rows(path: Path, delimiter: str = ",") -> list[tuple[str, list[str]]]:
    """Every record of a CSV file (strict quoting), with the ``FILE:LINE`` it starts on; blank
    lines are skipped."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter=delimiter, strict=True)
    rows: list[tuple[str, list[str]]] = []
    limit = max_row_bytes()
    while True:
        where = f"{path}:{reader.line_num + 1}"
        try:
            record = next(reader, None)
        except csv.Error as exc:
            raise bad_row(where, f"not valid CSV ({exc})") from exc
        if record is None:
            return _checked(rows, str(path))
        size = row_size(delimiter.join(record), limit)
        if size is not None:
            raise row_too_big(where, size, limit)
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


def header_rows(
    path: Path, columns: Sequence[str], *, delimiter: str = ",", quoting: bool = True
) -> list[tuple[str, dict[str, str]]]:
    """The records of a delimited file whose first line names ``columns`` (in that order), each
    as ``{column: value}`` with its ``FILE:LINE``. ``quoting=False`` reads a file whose fields
    are never quoted (a ``"`` is text), one record a line."""
    if quoting:
        records = csv_rows(path, delimiter)
    else:
        found = lines(read_text(path), path)
        records = [(f"{path}:{i}", ln.split(delimiter)) for i, ln in enumerate(found, 1) if ln]
        _checked(records, str(path))
    (head_at, head), *body = records
    if head != list(columns):
        raise bad_row(head_at, f"expected the header {list(columns)}, got {head}")
    rows = []
    for where, record in body:
        if len(record) != len(columns):
            raise bad_row(where, f"expected {len(columns)} fields, got {len(record)}")
        rows.append((where, dict(zip(columns, record, strict=True))))
    return _checked(rows, str(path))


def converted(rows: Iterable[tuple[str, dict[str, Any]]], row_type: type[T]) -> list[tuple[str, T]]:
    """Rows read as plain dicts (Arrow, Parquet, CSV) checked against ``row_type``, each error
    naming the row's own place."""
    out: list[tuple[str, T]] = []
    for where, row in rows:
        try:
            out.append((where, msgspec.convert(row, row_type)))
        except msgspec.ValidationError as exc:
            raise bad_row(where, f"unexpected row ({exc})") from exc
    return out


def as_fields(rows: Iterable[tuple[str, Any]]) -> list[Row]:
    """Typed rows (msgspec Structs) as ``(where, {field: value})``, nested Structs as dicts
    (declare sequences as lists: that is what the hub gives)."""
    return [(where, msgspec.to_builtins(row)) for where, row in rows]


def local_files(paths: Sequence[Path]) -> bool:
    """True when every file of a split is there, False when none is (then the hub is tried);
    when only some are, a ``ConfigError`` naming the first missing one."""
    present = [is_present(p) for p in paths]
    if all(present):
        return True
    if not any(present):
        return False
    missing = paths[present.index(False)]
    raise ConfigError(
        f"{missing}: missing, while its split's other files are there; restore it from its source",
        path=str(missing),
    )


def from_hub(
    source: Source,
    split: str,
    looked: Sequence[Path],
    row_type: type[T],
    name: str | None = None,
) -> list[tuple[str, T]]:
    """The fallback: ``source.hub`` (config ``name``) via ``datasets``, each row checked against
    ``row_type``, or the ``ConfigError`` that says where we looked and how to supply the data."""
    rows = hub_rows(source.folder, source.hub, name, split, looked)
    return typed_rows(rows, row_type, hub_where(source.hub, name, split))


def local_or_hub(
    source: Source,
    split: str,
    paths: Sequence[Path],
    read: Callable[[], list[tuple[str, T]]],
    row_type: type[T],
    name: str | None = None,
) -> list[tuple[str, T]]:
    """``read()`` when the split's files are there, else the hub's rows as ``row_type``."""
    if local_files(paths):
        return read()
    return from_hub(source, split, paths, row_type, name)


def unique(rows: Iterable[tuple[str, Any]], field: str, *, show: bool = True) -> None:
    """A ``ConfigError`` at the first row whose ``field`` repeats an earlier row's (``show``:
    quote the value)."""
    seen: dict[Any, str] = {}
    for where, row in rows:
        value = row[field] if isinstance(row, dict) else getattr(row, field)
        if value in seen:
            shown = f" {value!r}" if show else ""
            raise bad_row(where, f"{field}{shown} is already used at {seen[value]}")
        seen[value] = where
