"""Data files too big to read, and data paths that are not files (``sieval/data/files.py``).

A 10 GB sparse JSON Lines file, a 3 GiB zip member and a 300 MB one-line row once ended in a
``MemoryError``; a named pipe was "not found". Each is now a ``ConfigError`` (exit 2) naming the
file, the limit and the setting that raises it, before the file is read. The limits are lowered
here (``SIEVAL_DATA_MAX_BYTES``, ``SIEVAL_DATA_MAX_ROW_BYTES``) so the files stay small.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sieval.data.files import MAX_BYTES_ENV, MAX_ROW_BYTES_ENV, max_bytes
from sieval.data.registry import get_source
from sieval.errors import ConfigError

from .test_formats import HUMANEVAL, SCIQ, SCIQ_MEMBER, boolq, jsonl, mmlu_pro_row, write, zipped


def rows(dataset: str, data_dir: Path, split: str) -> list[object]:
    return get_source(dataset).rows(data_dir, split)


def refused(dataset: str, data_dir: Path, split: str, where: str, *said: str) -> str:
    with pytest.raises(ConfigError) as info:
        rows(dataset, data_dir, split)
    message = info.value.message
    assert info.value.path == where, message
    assert message.startswith(f"{where}: "), message
    for part in said:
        assert part in message, message
    return message


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)


def test_a_file_over_the_limit_is_not_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = write(tmp_path / "boolq/val.jsonl", jsonl(*[boolq(idx=i) for i in range(40)]))
    assert len(rows("boolq", tmp_path, "validation")) == 40
    monkeypatch.setenv(MAX_BYTES_ENV, "1KiB")
    refused(
        "boolq", tmp_path, "validation", str(path),
        f"the file is 2.9 KiB ({path.stat().st_size:,} bytes), over the limit of 1.0 KiB "
        f"(1,024 bytes) ({MAX_BYTES_ENV})", f"export {MAX_BYTES_ENV}=SIZE",
    )  # fmt: skip
    monkeypatch.setenv(MAX_BYTES_ENV, "1MB")  # the setting raises it
    assert len(rows("boolq", tmp_path, "validation")) == 40


def test_a_sparse_10_gb_file_is_refused_at_the_default_limit(tmp_path: Path) -> None:
    """The default needs no setting: the file's size is read, never its bytes."""
    path = tmp_path / "boolq/val.jsonl"
    path.parent.mkdir()
    with open(path, "wb") as file:
        file.truncate(10 * 10**9)
    refused("boolq", tmp_path, "validation", str(path), "9.3 GiB", "512.0 MiB")


def test_a_gzip_that_inflates_past_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = jsonl(HUMANEVAL) + " " * 50_000 + "\n"
    path = write(tmp_path / "humaneval/HumanEval.jsonl.gz", gzip.compress(text.encode()))
    assert path.stat().st_size < 2_000
    monkeypatch.setenv(MAX_BYTES_ENV, "20000")
    refused(
        "humaneval", tmp_path, "test", str(path),
        "the text it inflates to is more than 19.5 KiB (20,000 bytes)", MAX_BYTES_ENV,
    )  # fmt: skip


def test_a_bz2_that_inflates_past_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = ("L: A. b\n0\ne\nf\ng\nh\n" * 4000).encode()
    path = write(tmp_path / "hellaswag/hellaswag_val_full.txt.bz2", bz2.compress(text))
    assert len(rows("hellaswag", tmp_path, "validation")) == 4000
    monkeypatch.setenv(MAX_BYTES_ENV, str(len(text) - 1))
    refused("hellaswag", tmp_path, "validation", str(path), "the text it inflates to", "over")


def test_a_zip_member_over_the_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    member = json.dumps([SCIQ] * 200).encode()
    path = zipped(tmp_path / "sciq/SciQ.zip", {SCIQ_MEMBER: member})
    assert path.stat().st_size < len(member) // 10  # the zip is small, its member is not
    monkeypatch.setenv(MAX_BYTES_ENV, str(len(member) - 1))
    refused(
        "sciq", tmp_path, "validation", f"{path}!{SCIQ_MEMBER}",
        f"the member is 23.4 KiB ({len(member):,} bytes)", MAX_BYTES_ENV,
    )  # fmt: skip


def test_a_parquet_file_whose_data_inflates_past_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    records = [mmlu_pro_row(i, "law", question="q" * 2000 + str(i)) for i in range(50)]
    path = tmp_path / "mmlu_pro/test-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(records), path, compression="zstd")
    monkeypatch.setenv(MAX_BYTES_ENV, str(path.stat().st_size * 2))
    refused("mmlu_pro", tmp_path, "test", str(path), "its uncompressed data is", MAX_BYTES_ENV)


def test_a_row_over_the_limit_names_its_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = write(
        tmp_path / "boolq/val.jsonl", jsonl(boolq(), boolq(idx=1, passage="T -- " + "é" * 400))
    )
    monkeypatch.setenv(MAX_ROW_BYTES_ENV, "500")
    refused(
        "boolq", tmp_path, "validation", f"{path}:2",
        "the row is 2.4 KiB (2,468 bytes), over the limit of 500 bytes", MAX_ROW_BYTES_ENV,
    )  # fmt: skip


def test_a_row_of_a_json_array_over_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    big = {**SCIQ, "support": "s" * 1000}
    path = zipped(tmp_path / "sciq/SciQ.zip", {SCIQ_MEMBER: json.dumps([SCIQ, big]).encode()})
    monkeypatch.setenv(MAX_ROW_BYTES_ENV, "500")
    refused("sciq", tmp_path, "validation", f"{path}!{SCIQ_MEMBER}#row 1", "the row is")


def test_a_line_of_a_plain_text_file_over_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """PIQA's labels file: a line is quoted in the error of a bad label, so a huge one is
    refused by its size first."""
    write(tmp_path / "piqa/valid.jsonl", jsonl({"goal": "g", "sol1": "a", "sol2": "b"}))
    labels = write(tmp_path / "piqa/valid-labels.lst", "0" * 2000 + "\n")
    monkeypatch.setenv(MAX_ROW_BYTES_ENV, "1000")
    said = "the row is 2.0 KiB (2,000 bytes)"
    message = refused("piqa", tmp_path, "validation", f"{labels}:1", said)
    assert "0" * 100 not in message


@pytest.mark.parametrize("value", ["lots", "-5", "0", "12 parsecs"])
def test_a_limit_that_is_not_a_size(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(MAX_BYTES_ENV, value)
    with pytest.raises(ConfigError, match=f"{MAX_BYTES_ENV}={value!r} is not a size"):
        max_bytes()


@pytest.mark.parametrize(
    ("value", "size"),
    [("2GiB", 2 * 2**30), ("800MB", 800 * 10**6), ("64K", 64_000), ("123", 123)],
)
def test_a_limit_with_a_unit(monkeypatch: pytest.MonkeyPatch, value: str, size: int) -> None:
    monkeypatch.setenv(MAX_BYTES_ENV, value)
    assert max_bytes() == size


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_said_as_what_it_is(no_hub: None, tmp_path: Path) -> None:
    """Once "boolq data not found": a pipe is no file, and reading one may never end."""
    path = tmp_path / "boolq/val.jsonl"
    path.parent.mkdir()
    os.mkfifo(path)
    said = "it is a named pipe (FIFO), not a regular file"
    refused("boolq", tmp_path, "validation", str(path), said)


def test_a_directory_where_a_file_should_be(no_hub: None, tmp_path: Path) -> None:
    path = tmp_path / "lambada_openai/lambada_test.jsonl"
    path.mkdir(parents=True)
    refused("lambada_openai", tmp_path, "test", str(path), "it is a directory, not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_data_directory_that_is_a_pipe(no_hub: None, tmp_path: Path) -> None:
    pipe = tmp_path / "data"
    os.mkfifo(pipe)
    refused("boolq", pipe, "validation", str(pipe), "it is a named pipe (FIFO), not a directory")
