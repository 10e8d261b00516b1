"""SIGKILL a run between two turns of a conversation, resume it: the turns it had finished are
replayed from the call journal, not sent again (the wire log shows it), and the records equal an
uninterrupted run's."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

from sieval.runner import read_records
from sieval.store.records import Shared, expand_requests, journal_path, shared_path

from .conversations import HANG, MARK
from .fakes import write_data
from .workers import finish, start

WORKER = Path(__file__).parent / "conversation_worker.py"
WORDS = ["red", "green", "blue", "black"]
KILLED_AT = "s2"
"""The sample whose second turn the kill comes before (one sample at a time: concurrency 1)."""

SAME = ("body", "ledger", "usage", "status", "finish", "turn", "role", "messages", "output")
"""What a request record holds that two runs must agree on (timings differ run to run)."""


def _user_texts(wire: Path) -> list[str]:
    """The last user message of every request the wire log holds, in order."""
    out = []
    for line in wire.read_text().splitlines():
        body = json.loads(line).get("request_body")
        users = [m for m in (body or {}).get("messages", []) if m.get("role") == "user"]
        if users:
            out.append(" ".join(p["text"] for p in users[-1]["content"]))
    return out


def _comparable(path: Path) -> dict[str, Any]:
    """A unit's records as two runs must agree on them: each body whole (expanded)."""
    shared = Shared.load(shared_path(path))
    return {
        sid: {
            "status": r.status,
            "metrics": r.metrics,
            "channels": r.channels,
            "requests": {
                k: {f: getattr(q, f) for f in SAME}
                for k, q in expand_requests(r.requests, shared).items()
            },
        }
        for sid, r in read_records(path).records.items()
    }


async def test_sigkill_between_turns_then_resume(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_data(data, WORDS)
    out = tmp_path / "out"
    mark = tmp_path / "mark"
    os.environ[HANG], os.environ[MARK] = KILLED_AT, str(mark)
    try:
        proc = await start(WORKER, str(data), str(out), "killed")
    finally:
        del os.environ[HANG], os.environ[MARK]
    for _ in range(3000):  # until the worker says turn 1 of s2 is answered (at most ~60 s)
        if mark.exists() or proc.returncode is not None:
            break
        await asyncio.sleep(0.02)
    assert mark.read_text() == KILLED_AT
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    assert proc.returncode == -signal.SIGKILL

    run = out / "killed"
    records = run / "m" / "two_turns" / "records.jsonl"
    before = read_records(records).records
    assert sorted(before) == ["s0", "s1"]  # s2 was mid-conversation, s3 not started
    journaled = [json.loads(line) for line in journal_path(records).read_text().splitlines()]
    assert [(j["sample"], j["key"]) for j in journaled][-1] == ("s2", "turn1")
    wire = run / "m" / "wire.jsonl"
    sent = _user_texts(wire)
    assert sent[-1] == "say blue"  # s2's first turn was the last request before the kill

    code, log = await finish(await start(WORKER, str(data), str(out), "x", "--resume", str(run)))
    assert code == 0, log
    resent = _user_texts(wire)[len(sent) :]
    assert resent == ["again blue", "say black", "again black"]  # s2's turn 1 was not sent again

    code, log = await finish(await start(WORKER, str(data), str(out), "straight"))
    assert code == 0, log
    straight = _comparable(out / "straight" / "m" / "two_turns" / "records.jsonl")
    assert _comparable(records) == straight
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [line["sample_id"] for line in lines] == ["s0", "s1", "s2", "s3"]  # once each
