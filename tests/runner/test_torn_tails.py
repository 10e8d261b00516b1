"""Every append-only file of a run survives a torn last line: records.jsonl, shared.jsonl, a
shard's, and the wire log. Each is torn at every byte offset of its last line (``repair_tail``
and ``RecordWriter``, as a resume opens them), then at a few offsets through a real resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.results.view import build_view
from sieval.runner import arun_eval, read_records
from sieval.store.files import repair_tail
from sieval.store.records import (
    SCHEMA_VERSION,
    Record,
    RecordWriter,
    RequestRecord,
    Shared,
    expand_requests,
)
from sieval.transport.wirelog import WireLog

from .fakes import FakeTask, serve, write_data


def _record(i: int) -> Record:
    """Odd samples have another body shape and ledger: each adds two shared lines."""
    body: dict[str, Any] = {"prompt": f"Q: {'x' * 80} {i}", "max_tokens": 4}
    ledger = [{"leaf": "sampling.max_tokens", "outcome": "consumed", "path": "max_tokens"}]
    if i % 2:
        body["seed"] = i
        ledger = [*ledger, {"leaf": "sampling.seed", "outcome": "consumed", "path": "seed"}]
    return Record(
        schema_version=SCHEMA_VERSION,
        sample_id=f"s{i}",
        status="ok",
        model="m",
        task="t",
        requests={"r0": RequestRecord(body=body, ledger=ledger, status=200)},
        metrics={"acc": float(i % 2)},
    )


def _write(path: Path, records: list[Record]) -> None:
    writer = RecordWriter(path, fsync_interval_s=0.0)
    for record in records:
        writer.write(record)
    writer.close()


def _whole(path: Path) -> dict[str, Any]:
    """Each sample's requests as sent (bodies and ledgers expanded), as a reader sees them."""
    shared = Shared.load(path.with_name("shared.jsonl"))
    return {
        sid: msgspec.to_builtins(expand_requests(r.requests, shared))
        for sid, r in read_records(path).records.items()
    }


def test_repair_tail_at_every_offset(tmp_path: Path) -> None:
    lines = [json.dumps({"n": i, "text": "é" * i}).encode() + b"\n" for i in range(3)]
    whole = b"".join(lines)
    start = len(whole) - len(lines[-1])
    path = tmp_path / "f.jsonl"
    for cut in range(start, len(whole) + 1):
        path.write_bytes(whole[:cut])
        dropped = repair_tail(path)
        data = path.read_bytes()
        if cut >= len(whole) - 1:  # the whole last line, with or without its newline
            assert data == whole and dropped == 0
        else:
            assert data == whole[:start] and dropped == cut - start
        assert all(json.loads(line) for line in data.splitlines())
    assert repair_tail(tmp_path / "absent.jsonl") == 0
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert repair_tail(tmp_path / "empty.jsonl") == 0


RECORDS = [_record(i) for i in range(4)]


@pytest.fixture
def expected(tmp_path: Path) -> dict[str, Any]:
    """What an uninterrupted unit of ``RECORDS`` reads back."""
    straight = tmp_path / "straight" / "records.jsonl"
    _write(straight, RECORDS)
    return _whole(straight)


def _crashed(tmp_path: Path, cut: int, records: bytes, shared: bytes) -> Path:
    path = tmp_path / f"cut{cut}" / "records.jsonl"
    path.parent.mkdir()
    path.write_bytes(records)
    path.with_name("shared.jsonl").write_bytes(shared)
    return path


def test_records_torn_at_every_offset_then_appended(
    tmp_path: Path, expected: dict[str, Any]
) -> None:
    records = RECORDS
    base = tmp_path / "base" / "records.jsonl"
    _write(base, records[:2])
    full = base.read_bytes()
    last = full[: len(full) - 1].rfind(b"\n") + 1
    shared = base.with_name("shared.jsonl").read_bytes()
    for cut in range(last, len(full)):
        path = _crashed(tmp_path, cut, full[:cut], shared)  # a crash while s1's line was written
        # a resume reopens the file and writes the samples not recorded (s1 again when torn)
        writer = RecordWriter(path, fsync_interval_s=0.0)
        assert writer.repaired == (0 if cut == len(full) - 1 else cut - last)
        for record in records[1:]:
            writer.write(record)
        writer.close()
        assert _whole(path) == expected, cut


def test_shared_torn_at_every_offset_then_appended(
    tmp_path: Path, expected: dict[str, Any]
) -> None:
    """A crash while s1's two shared lines were written: no record names them yet (a shared
    line is flushed before its record), so a resume cuts them and writes them again."""
    records = RECORDS
    base = tmp_path / "base" / "records.jsonl"
    _write(base, records[:1])
    before = base.with_name("shared.jsonl").read_bytes()
    _write(base, records[1:2])
    after = base.with_name("shared.jsonl").read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 2
    kept = base.read_bytes().splitlines(keepends=True)[0]  # s0's record only
    for cut in range(len(before), len(after)):
        path = _crashed(tmp_path, cut, kept, after[:cut])
        writer = RecordWriter(path, fsync_interval_s=0.0)
        for record in records[1:]:
            writer.write(record)
        writer.close()
        assert _whole(path) == expected, cut
        for line in path.with_name("shared.jsonl").read_bytes().splitlines():
            json.loads(line)  # no line glued to a torn one


def _entry(i: int) -> dict[str, Any]:
    return {
        "exchange_id": f"x{i}",
        "attempt": 1,
        "method": "POST",
        "url": "http://h/v1/completions",
        "request_headers": {},
        "request_body": b'{"prompt": "Q"}',
        "secrets": (),
        "status": 200,
        "reply_body": b'{"ok": true}',
    }


def test_wire_log_torn_at_every_offset_then_appended(tmp_path: Path) -> None:
    base = tmp_path / "base.jsonl"
    log = WireLog(base)
    for i in range(2):
        log.record(**_entry(i))
    log.close()
    full = base.read_bytes()
    last = full[: len(full) - 1].rfind(b"\n") + 1
    for cut in range(last, len(full)):
        path = tmp_path / f"wire{cut}.jsonl"
        path.write_bytes(full[:cut])
        repair_tail(path)  # what the engine does before a resumed run appends to it
        log = WireLog(path)
        log.record(**_entry(9))
        log.close()
        ids = [json.loads(line)["exchange_id"] for line in path.read_bytes().splitlines()]
        assert ids == (["x0", "x1", "x9"] if cut == len(full) - 1 else ["x0", "x9"]), cut


def test_a_reference_to_a_lost_shared_entry_is_a_clear_error(tmp_path: Path) -> None:
    """A run damaged before this repair existed: the record names a body the file lost."""
    path = tmp_path / "u" / "records.jsonl"
    _write(path, [_record(0)])
    shared = path.with_name("shared.jsonl")
    shared.write_bytes(b"".join(shared.read_bytes().splitlines(keepends=True)[:1]))  # L0 only
    with pytest.raises(ConfigError, match=r"shared.jsonl has no body 'B0'"):
        _whole(path)


# -- through a real resume ----------------------------------------------------------------------

WORDS = ["aa", "bbb", "cc", "dddd", "ee", "ffff"]
CONFIG = """
models:
  - {{name: m, endpoint: "{url}", model: fake-model, concurrency_limit: 2}}
tasks:
  - name: fake_qa
"""


def _bodies(run_dir: Path) -> dict[str, Any]:
    view = build_view(run_dir)
    return {s["id"]: [(r["body"], r["ledger"]) for r in s["requests"]] for s in view["samples"]}


async def _run(tmp_path: Path, url: str, **kw: Any) -> Any:
    return await arun_eval(
        parse_config(CONFIG.format(url=url)),
        options(data_dir=tmp_path / "data", out=tmp_path / "out", **kw),
        tasks={"fake_qa": FakeTask()},
    )


@pytest.mark.parametrize("which", ["records.jsonl", "shared.jsonl", "wire.jsonl"])
async def test_resume_after_a_torn_tail_equals_an_uninterrupted_run(
    tmp_path: Path, which: str
) -> None:
    write_data(tmp_path / "data", WORDS)
    async with serve() as url:
        await _torn_then_resumed(tmp_path, url, which)


async def _torn_then_resumed(tmp_path: Path, url: str, which: str) -> None:
    straight = await _run(tmp_path, url, run_name="straight", wire_log=True)
    expected = _bodies(straight.run_dir)
    unit = straight.run_dir / "m" / "fake_qa"
    for n, fraction in enumerate((0.0, 0.5, 0.99)):
        run = await _run(tmp_path, url, run_name=f"torn{which}{n}", wire_log=True)
        records = run.run_dir / "m" / "fake_qa" / "records.jsonl"
        target = {
            "records.jsonl": records,
            "shared.jsonl": records.with_name("shared.jsonl"),
            "wire.jsonl": run.run_dir / "m" / "wire.jsonl",
        }[which]
        lines = target.read_bytes().splitlines(keepends=True)
        cut = len(lines[-1]) - 1 if fraction == 0.99 else int(len(lines[-1]) * fraction) + 1
        if which == "shared.jsonl":  # its last line was being written: no record names it yet
            records.write_bytes(b"")
        else:  # the last record is rerun, so the resume appends to the wire log as well
            records.write_bytes(b"".join(records.read_bytes().splitlines(keepends=True)[:-1]))
        target.write_bytes(b"".join(lines[:-1]) + lines[-1][:cut])
        resumed = await _run(tmp_path, url, resume=run.run_dir, wire_log=True)
        assert resumed.exit_code == 0
        assert _bodies(run.run_dir) == expected
        assert (
            read_records(records).records.keys()
            == read_records(unit / "records.jsonl").records.keys()
        )
        for line in (run.run_dir / "m" / "wire.jsonl").read_bytes().splitlines():
            json.loads(line)


async def test_a_shard_resumes_after_torn_tails(tmp_path: Path) -> None:
    from sieval.cluster.shards import finalize, freeze, run_shard

    write_data(tmp_path / "data", WORDS)
    async with serve() as url:
        config = parse_config(CONFIG.format(url=url))
        run_dir = tmp_path / "planned"
        opts = options(data_dir=tmp_path / "data")
        await freeze(config, run_dir, 2, opts, tasks={"fake_qa": FakeTask()})
        for k in (0, 1):
            await run_shard(run_dir, k, 2, opts, tasks={"fake_qa": FakeTask()})
        single = await arun_eval(
            config,
            options(data_dir=tmp_path / "data", out=tmp_path, run_name="single"),
            tasks={"fake_qa": FakeTask()},
        )
        for k, torn in ((0, "records.jsonl"), (1, "shared.jsonl")):
            unit = run_dir / "m" / "fake_qa" / "shards" / str(k)
            if torn == "shared.jsonl":  # its last line was being written: no record names it
                (unit / "records.jsonl").write_bytes(b"")
            lines = (unit / torn).read_bytes().splitlines(keepends=True)
            (unit / torn).write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
            await run_shard(run_dir, k, 2, opts, tasks={"fake_qa": FakeTask()})
    done = finalize(run_dir, tasks={"fake_qa": FakeTask()})
    assert done.failed == 0
    assert _bodies(run_dir) == _bodies(single.run_dir)


async def test_finalize_counts_and_says_a_record_the_plan_does_not_have(tmp_path: Path) -> None:
    """A shard's record of a sample outside the plan was once dropped from the merge silently."""
    from sieval.cluster.shards import finalize, freeze, run_shard

    write_data(tmp_path / "data", WORDS)
    async with serve() as url:
        config = parse_config(CONFIG.format(url=url))
        run_dir = tmp_path / "planned"
        opts = options(data_dir=tmp_path / "data")
        await freeze(config, run_dir, 2, opts, tasks={"fake_qa": FakeTask()})
        for k in (0, 1):
            await run_shard(run_dir, k, 2, opts, tasks={"fake_qa": FakeTask()})
    records = run_dir / "m" / "fake_qa" / "shards" / "1" / "records.jsonl"
    lines = records.read_bytes().splitlines(keepends=True)
    for name in ("ghost-1", "ghost-2"):
        stray = json.loads(lines[-1])
        stray["sample_id"] = name
        lines.append(json.dumps(stray).encode() + b"\n")
    records.write_bytes(b"".join(lines))
    done = finalize(run_dir, tasks={"fake_qa": FakeTask()})
    said = (
        "m/fake_qa: shard 1 holds 2 record(s) of samples the plan does not have (e.g. "
        "'ghost-1'); they are left out of the merged records and the report"
    )
    assert done.left_out == [said]
    assert said in done.report.warnings
    assert done.report.results[0].samples.total == len(WORDS)
    merged = read_records(run_dir / "m" / "fake_qa" / "records.jsonl").records
    assert "ghost-1" not in merged and len(merged) == len(WORDS)
