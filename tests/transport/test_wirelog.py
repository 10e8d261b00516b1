"""The wire log: one parseable, redacted line per attempt, even under concurrent writers."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from sieval.transport import WireLog
from sieval.transport.wirelog import body_for_log


def test_bodies_as_json_or_text() -> None:
    assert body_for_log(None, ()) is None
    assert body_for_log(b'{"a": "s3cretvalue"}', ["s3cretvalue"]) == {"a": "[REDACTED]"}
    sse = b'data: {"x": 1}\n\ndata: [DONE]\n\n'
    assert body_for_log(sse, ()) == sse.decode()
    assert body_for_log(b"\xff oops s3cretvalue", ["s3cretvalue"]) == "\ufffd oops [REDACTED]"


def record(log: WireLog, n: int) -> None:
    log.record(
        exchange_id=f"ex{n}",
        attempt=1,
        method="POST",
        url="http://h/v1?key=k",
        request_headers={"Authorization": "Bearer tok"},
        request_body=b'{"n": %d}' % n,
        secrets=(),
        status=200,
        reply_headers={"content-type": "text/plain"},
        reply_body=b"hello",
        timings={"total_s": 0.1},
    )


def test_concurrent_writers_keep_lines_whole(tmp_path: Path) -> None:
    log = WireLog(tmp_path / "deep" / "wire.jsonl")

    def writer(i: int) -> None:
        for j in range(100):
            record(log, i * 1000 + j)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert len(lines) == 800
    assert {line["request_body"]["n"] for line in lines} == {
        i * 1000 + j for i in range(8) for j in range(100)
    }
    first = lines[0]
    assert first["url"] == "http://h/v1?key=[REDACTED]"
    assert first["request_headers"] == {"Authorization": "[REDACTED]"}
    assert first["reply_body"] == "hello" and first["time"] > 1.6e9


def test_close_then_write_appends(tmp_path: Path) -> None:
    log = WireLog(str(tmp_path / "wire.jsonl"))
    log.close()  # closing before any write is harmless
    record(log, 1)
    log.close()
    record(log, 2)  # reopens in append mode
    log.close()
    assert len(log.path.read_text().splitlines()) == 2


def test_a_body_too_deep_to_decode_is_logged_as_text() -> None:
    deep = b'{"k": "s3cretvalue", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    logged = body_for_log(deep, ["s3cretvalue"])
    assert isinstance(logged, str) and logged.startswith('{"k": "[REDACTED]"')
