"""What a unit's records say was spent (``cost/spent.py``), read from every record line as
the writer compacts it (usage columns, a status shared by every request, older schemas)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from sieval.cost.spent import spent_in
from sieval.plan.config import Price
from sieval.store.records import Record, RecordWriter, RequestRecord


def record(sample: str, requests: dict[str, RequestRecord], status: str = "ok") -> Record:
    return Record(
        schema_version=5, sample_id=sample, status=status, model="m", task="t", requests=requests
    )


def answered(prompt: int, output: int | None = None) -> RequestRecord:
    usage = {"input_tokens": prompt} | ({} if output is None else {"output_tokens": output})
    return RequestRecord(body={"prompt": "x"}, usage=usage, status=200)


def test_every_line_every_request_and_only_what_the_server_reported(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    writer.write(record("a", {"r0": answered(10, 1), "r1": answered(12, 1)}))  # columns
    writer.write(record("b", {"r0": answered(7, 1), "r1": answered(7, 1)}))  # one value each
    writer.write(record("c", {"r0": answered(5)}))  # the output count missing
    failed = RequestRecord(body={"prompt": "y"}, error={"class": "TransportError"})
    writer.write(record("d", {"r0": failed}, status="failed"))  # never answered
    again = msgspec.structs.replace(answered(4, 2), timings={"total_s": 1.0, "attempts": 3})
    writer.write(record("d", {"r0": again}))  # run again on resume: paid twice
    writer.close()
    raw = [msgspec.json.decode(x) for x in path.read_bytes().splitlines()]
    assert raw[0]["requests_columns"]["usage.input_tokens"] == [10, 12]  # the shape read
    assert raw[1]["requests_columns"]["usage.input_tokens"] == 7
    assert raw[1]["requests_common"]["status"] == 200
    spent = spent_in(path)
    assert (spent.records, spent.requests, spent.answered) == (5, 7, 6)
    assert (spent.input_tokens, spent.output_tokens) == (10 + 12 + 7 + 7 + 5 + 4, 1 + 1 + 1 + 1 + 2)
    assert spent.without_usage == 1  # "c": what it reported is counted, the rest is not
    assert spent.retries == 2
    assert spent.cost(Price(input=2.0, output=4.0)) == (45 * 2 + 6 * 4) / 1e6
    assert spent.cost(None) is None


def test_records_older_than_the_status_field_count_by_their_usage(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    line = {
        "schema_version": 2,
        "sample_id": "a",
        "status": "ok",
        "model": "m",
        "task": "t",
        "requests": {"r0": {"usage": {"input_tokens": 3, "output_tokens": 1}}, "r1": {}},
    }
    path.write_bytes(msgspec.json.encode(line) + b"\n")
    spent = spent_in(path)
    assert (spent.requests, spent.answered, spent.input_tokens, spent.without_usage) == (2, 1, 3, 0)
    assert spent_in(tmp_path / "none.jsonl").records == 0
