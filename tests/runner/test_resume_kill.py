"""Kill a run with SIGKILL mid-way, resume it, and compare with an uninterrupted run."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from sieval.runner import read_records

from .fakes import serve, write_data
from .workers import finish, start

WORKER = Path(__file__).parent / "resume_worker.py"
N = 60


async def _worker(*args: str) -> asyncio.subprocess.Process:
    return await start(WORKER, *args)


async def _finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    return await finish(proc)


async def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_data(data, [f"w{i:02d}{'x' * (i % 2)}" for i in range(N)])
    out = tmp_path / "results"
    async with serve(delay_s=0.02) as url:
        proc = await _worker(url, str(data), str(out), "killed")
        records = out / "killed" / "m" / "fake_qa" / "records.jsonl"
        for _ in range(1000):
            await asyncio.sleep(0.01)
            if records.exists() and records.read_text().count("\n") >= 10:
                break
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        assert proc.returncode == -signal.SIGKILL
        partial = read_records(records)
        assert 10 <= len(partial.records) < N, "the kill must land mid-run"
        assert not (out / "killed" / "report.json").exists()

        code, log = await _finish(
            await _worker(url, str(data), str(out), "unused", "--resume", str(out / "killed"))
        )
        assert code == 0, log
        code, log = await _finish(await _worker(url, str(data), str(out), "straight"))
        assert code == 0, log

    lines = [json.loads(line) for line in records.read_text().splitlines()]
    ids = [line["sample_id"] for line in lines]
    assert len(ids) == len(set(ids)) == N  # no duplicate, none missing
    straight = read_records(out / "straight" / "m" / "fake_qa" / "records.jsonl").records
    resumed = read_records(records).records
    assert set(straight) == set(resumed)
    assert {k: r.metrics for k, r in straight.items()} == {k: r.metrics for k, r in resumed.items()}
    report_a = json.loads((out / "killed" / "report.json").read_text())["results"][0]
    report_b = json.loads((out / "straight" / "report.json").read_text())["results"][0]
    assert report_a["metrics"] == report_b["metrics"] and report_a["metrics"]["acc"] == 0.5
    assert (
        report_a["samples"]
        == report_b["samples"]
        == {
            "total": N,
            "scored": N,
            "failed": 0,
            "missing": 0,
        }
    )
    # the resumed run sent only what the killed one had not recorded
    resumed_report = json.loads((out / "killed" / "report.json").read_text())
    assert resumed_report["timings"]["samples_run"] == N - len(partial.records)
