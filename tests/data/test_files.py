"""A task's own data files: every format, and every malformed row named by its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sieval.data.file_data import FileData, read_file
from sieval.errors import ConfigError

ROWS = [{"q": "one", "a": 1}, {"q": "two, too", "a": 2}, {"q": "three", "a": 3}]


def _write(path: Path, kind: str, rows: list[dict[str, object]] = ROWS) -> Path:
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif kind == "json":
        path.write_text(json.dumps(rows))
    elif kind in ("csv", "tsv"):
        import csv

        with path.open("w", newline="") as fh:
            writer = csv.writer(fh, delimiter="," if kind == "csv" else "\t")
            writer.writerow(list(rows[0]))
            for r in rows:
                writer.writerow([r[k] for k in rows[0]])
    elif kind in ("parquet", "arrow"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows)
        if kind == "parquet":
            pq.write_table(table, path)
        else:
            with pa.ipc.new_stream(str(path), table.schema) as writer:
                writer.write_table(table)
    return path


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv", "tsv", "parquet", "arrow"])
def test_every_format_reads_the_same_rows_with_their_types(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path / f"rows.{kind}", kind)
    rows = read_file(path, kind)
    assert [fields for _, fields in rows] == ROWS  # ints stay ints (csv: inferred as pandas does)
    where = [w for w, _ in rows]
    if kind in ("jsonl", "csv", "tsv"):
        assert (
            where == [f"{path}:{i}" for i in (1, 2, 3)]
            if kind == "jsonl"
            else where == [f"{path}:{i}" for i in (2, 3, 4)]
        )
    else:
        assert where == [f"{path}#row {i}" for i in range(3)]


def test_an_arrow_ipc_file_reads_as_well_as_a_stream(tmp_path: Path) -> None:
    import pyarrow as pa

    path = tmp_path / "rows.arrow"
    table = pa.Table.from_pylist(ROWS)
    with pa.ipc.new_file(str(path), table.schema) as writer:
        writer.write_table(table)
    assert [f for _, f in read_file(path, "arrow")] == ROWS


def test_json_reads_lines_a_field_and_text_reads_lines(tmp_path: Path) -> None:
    lines = _write(tmp_path / "lines.json", "jsonl")
    assert [f for _, f in read_file(lines, "json")] == ROWS
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"examples": ROWS, "canary": "x"}))
    rows = read_file(nested, "json", field_name="examples")
    assert [f for _, f in rows] == ROWS and rows[1][0] == f"{nested}#row 1"
    text = tmp_path / "doc.txt"
    text.write_text("first line\nsecond line\n")
    assert [f for _, f in read_file(text, "text")] == [
        {"text": "first line"},
        {"text": "second line"},
    ]


def test_a_csv_column_with_a_word_stays_text_and_an_empty_cell_is_none(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text("q,a,b\nx,1,0.5\ny,two,\n")
    assert [f for _, f in read_file(path, "csv")] == [
        {"q": "x", "a": "1", "b": 0.5},
        {"q": "y", "a": "two", "b": None},
    ]


@pytest.mark.parametrize(
    ("kind", "text", "where", "says"),
    [
        ("jsonl", '{"q": 1}\n\n{"q": 2\n', ":3", "not valid JSON"),
        ("jsonl", '{"q": 1}\n[1, 2]\n', ":2", "expected a JSON object"),
        ("json", '[{"q": 1}, "text"]', "#row 1", "expected a JSON object"),
        ("json", '[{"q": 1},', "", "not valid JSON"),
        ("csv", "q,a\nx,1\ny,2,3\n", ":3", "expected 2 fields"),
        ("csv", 'q,a\nx,"open\n', ":2", "not valid CSV"),
        ("tsv", "q\ta\nx\t1\ty\n", ":2", "expected 2 fields"),
        ("csv", "q,q\nx,1\n", ":1", "name each column once"),
        ("parquet", "not parquet at all", "", "not a readable Parquet file"),
        ("arrow", "not arrow at all", "", "not a readable Arrow file"),
        ("jsonl", "\n\n", "", "no samples"),
    ],
)
def test_a_malformed_file_names_its_place(
    tmp_path: Path, kind: str, text: str, where: str, says: str
) -> None:
    path = tmp_path / f"bad.{kind}"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_file(path, kind)
    assert f"{path}{where}" in caught.value.message
    assert says in caught.value.message


def test_file_data_joins_a_splits_files_and_names_its_splits(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", "jsonl", ROWS[:2])
    b = _write(tmp_path / "b.jsonl", "jsonl", ROWS[2:])
    data = FileData("json", {"test": (a, b)})
    assert [f for _, f in data.rows(tmp_path, "test")] == ROWS
    assert data.files(tmp_path, "test") == [a, b] and data.splits == ("test",)
    with pytest.raises(ConfigError, match="no split 'tset'.*Did you mean 'test'"):
        data.rows(tmp_path, "tset")


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv", "tsv", "parquet", "arrow"])
def test_a_file_over_the_size_limit_is_refused_naming_the_setting(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / f"rows.{kind}", kind)
    monkeypatch.setenv("SIEVAL_DATA_MAX_BYTES", "16")
    with pytest.raises(ConfigError, match=r"SIEVAL_DATA_MAX_BYTES") as info:
        read_file(path, kind)
    assert str(path) in str(info.value)
