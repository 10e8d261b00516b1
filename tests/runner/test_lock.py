"""One writer per run directory (and per shard), with real processes: a second writer is refused
naming the run and the holder's pid; SIGKILL leaves no stale lock; shards run side by side.

The fake server holds every completion while ``gate`` is clear, so a process stays mid-run for
as long as a test needs (no timing is assumed)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from sieval.store.files import StorageError
from sieval.store.lock import RunLocked, hold_run, hold_shard

from .fakes import serve, write_data
from .workers import CLI, finish, start

N = 40


async def _start(*args: str) -> asyncio.subprocess.Process:
    return await start(CLI, *args)


async def _until(check: Callable[[], bool], proc: asyncio.subprocess.Process | None = None) -> None:
    for _ in range(15000):
        if check():
            return
        if proc is not None and proc.returncode is not None:
            raise AssertionError(await finish(proc))
        await asyncio.sleep(0.02)
    raise AssertionError("gave up waiting")


def _holds(lock: Path, proc: asyncio.subprocess.Process) -> bool:
    """Whether ``proc`` holds ``lock`` (the holder writes its pid once the lock is taken)."""
    return lock.is_file() and lock.read_text().strip() == str(proc.pid)


def _config(tmp_path: Path, url: str) -> Path:
    write_data(tmp_path / "data", [f"w{i:02d}" for i in range(N)])
    path = tmp_path / "eval.yaml"
    path.write_text(
        f"models:\n  - {{name: m, endpoint: '{url}', model: fake-model, concurrency_limit: 2}}\n"
        "tasks:\n  - name: fake_qa\n"
    )
    return path


def _ids(records: Path) -> list[str]:
    if not records.exists():
        return []
    return [json.loads(line)["sample_id"] for line in records.read_text().splitlines()]


async def test_a_second_writer_is_refused_and_sigkill_leaves_no_stale_lock(tmp_path: Path) -> None:
    gate = asyncio.Event()
    gate.set()
    async with serve(gate=gate) as url:
        config = _config(tmp_path, url)
        out = tmp_path / "out"
        common = [str(config), "--data-dir", str(tmp_path / "data"), "--no-preflight"]
        first = await _start("eval", *common, "--out", str(out))
        await _until(lambda: out.exists() and any(out.glob("*/m/fake_qa/records.jsonl")), first)
        (run_dir,) = out.iterdir()
        records = run_dir / "m" / "fake_qa" / "records.jsonl"
        await _until(lambda: len(_ids(records)) >= 5, first)
        gate.clear()  # the first process stays mid-run
        assert _holds(run_dir / "run.lock", first)
        code, log = await finish(await _start("eval", *common, "--resume", str(run_dir)))
        assert code == 2, log
        assert f"{run_dir} is being written by another sieval process (pid {first.pid})" in log
        assert "Traceback" not in log

        first.send_signal(signal.SIGKILL)
        await first.wait()
        partial = len(_ids(records))
        assert 5 <= partial < N
        assert (run_dir / "run.lock").is_file()  # the file stays; nothing holds it
        # two resumes at once: one runs, the other is refused; no sample is recorded twice
        both = [await _start("eval", *common, "--resume", str(run_dir)) for _ in range(2)]
        await asyncio.wait(
            [asyncio.ensure_future(p.wait()) for p in both], return_when=asyncio.FIRST_COMPLETED
        )
        gate.set()
        results = [await finish(p) for p in both]
    assert sorted(code for code, _ in results) == [0, 2], results
    refused = next(log for code, log in results if code == 2)
    winner = next(p for p, (code, _) in zip(both, results, strict=True) if code == 0)
    assert f"is being written by another sieval process (pid {winner.pid})" in refused
    ids = _ids(records)
    assert len(ids) == len(set(ids)) == N


async def test_shards_run_side_by_side_but_one_process_per_shard(tmp_path: Path) -> None:
    gate = asyncio.Event()
    gate.set()  # open while the plan's checks run
    async with serve(gate=gate) as url:
        config = _config(tmp_path, url)
        run_dir = tmp_path / "planned"
        data = ["--data-dir", str(tmp_path / "data")]
        planned = await _start("plan", str(config), "--out", str(run_dir), "--shards", "2", *data)
        code, log = await finish(planned)
        assert code == 0, log
        gate.clear()
        zero = await _start("eval", "--run", str(run_dir), "--shard", "0/2")
        one = await _start("eval", "--run", str(run_dir), "--shard", "1/2")
        locks = run_dir / "shards"
        await _until(lambda: _holds(locks / "0.lock", zero), zero)
        await _until(lambda: _holds(locks / "1.lock", one), one)  # both hold the run at once
        again = await finish(await _start("eval", "--run", str(run_dir), "--shard", "0/2"))
        early = await finish(await _start("finalize", str(run_dir)))
        gate.set()
        code_zero, log_zero = await finish(zero)
        code_one, log_one = await finish(one)
    assert again[0] == 2, again
    assert f"shard 0 of {run_dir} is already running (pid {zero.pid})" in again[1]
    assert early[0] == 2 and f"shard 0 (pid {zero.pid}), shard 1 (pid {one.pid})" in early[1]
    assert "Traceback" not in again[1] + early[1]
    assert code_zero == 0 and code_one == 0, log_zero + log_one
    code, log = await finish(await _start("finalize", str(run_dir)))
    assert code == 0, log


# -- in one process: each open of a lock file is a writer of its own ------------------------------


def _refused(
    held: contextlib.AbstractContextManager[None], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        held.__enter__()


def test_the_locks_and_their_messages(tmp_path: Path) -> None:
    pid = os.getpid()
    with hold_run(tmp_path):
        _refused(hold_run(tmp_path), RunLocked, f"another sieval process \\(pid {pid}\\)")
        _refused(hold_shard(tmp_path, 0), RunLocked, f"another sieval process \\(pid {pid}\\)")
    with hold_shard(tmp_path, 0), hold_shard(tmp_path, 1):  # shards side by side
        _refused(hold_shard(tmp_path, 0), RunLocked, f"shard 0 of {tmp_path} is already running")
        shards = f"shard 0 \\(pid {pid}\\), shard 1 \\(pid {pid}\\)"
        _refused(hold_run(tmp_path), RunLocked, shards)
    with hold_run(tmp_path):  # released on exit: free again
        pass
    (tmp_path / "run.lock").unlink()
    (tmp_path / "run.lock").mkdir()
    _refused(hold_run(tmp_path), StorageError, "run.lock: it is a directory")
