"""A running or interrupted run can be looked at: ``report`` (and ``--format``, ``--html``) and
``samples`` build its report from the records, marked partial with what is missing; ``report
--watch`` follows a run to its end; a resume says how far the run is, and resuming a complete run
reaches no server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import DATA, options
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.reference import start_in_thread
from sieval.results.snapshot import RUNNING, is_running

SIEVAL = [sys.executable, "-c", "import sys; from sieval.cli.main import main; main()"]
runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), env={"COLUMNS": "300"})


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*SIEVAL, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
        # as from a terminal: SIGINT must become KeyboardInterrupt (see test_first_hour.py)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for(check: Any, timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > end:
            pytest.fail("timed out")
        time.sleep(0.05)


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: Any) -> dict[str, Any]:
    """A one-line run of 30 ARC samples against a slow ``sieval serve``-like server, Ctrl-C'd
    after a few samples."""
    out = tmp_path_factory.mktemp("partial")
    handle = start_in_thread(port=0, faults="delay; seconds=0.15")
    # no pre-run checks: each of their probes would wait out the delay
    proc = start(
        "eval", "--endpoint", handle.url, "--model", "sieval-reference", "--task",
        "arc_easy_kshot_ppl", "--num-fewshot", "1", "--limit", "30", "--concurrency", "1",
        "--data-dir", str(DATA), "--out", str(out), "--no-preflight",
    )  # fmt: skip
    try:
        wait_for(lambda: any(lines(p) >= 4 for p in out.glob("*/*/*/records.jsonl")))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    (run_dir,) = out.iterdir()
    records = run_dir / "sieval-reference" / "arc_easy_kshot_ppl" / "records.jsonl"
    return {"run": run_dir, "err": err, "code": proc.returncode, "recorded": lines(records),
            "server": handle}  # fmt: skip


def test_ctrl_c_says_how_to_look_and_how_to_resume(interrupted: dict[str, Any]) -> None:
    run = interrupted["run"]
    assert interrupted["code"] == 130, interrupted["err"][-2000:]
    assert f"sieval report {run}" in interrupted["err"]
    assert f"sieval eval --resume {run}" in interrupted["err"]
    assert not (run / "report.json").exists() and not (run / RUNNING).exists()


def test_report_and_samples_show_the_partial_run(
    interrupted: dict[str, Any], tmp_path: Path
) -> None:
    run, recorded = interrupted["run"], interrupted["recorded"]
    shown = invoke("report", str(run))
    assert shown.exit_code == 0, shown.output
    assert (
        f"partial: the run stopped, {recorded} of 30 samples recorded, {30 - recorded} missing"
        in shown.output
    )
    assert f"sieval eval --resume {run}" in shown.output and "None" not in shown.output
    rows = json.loads(invoke("report", str(run), "--format", "json").output)
    assert {r["scored"] for r in rows} == {recorded} and {r["missing"] for r in rows} == {
        30 - recorded
    }
    samples = invoke("samples", str(run), "--limit", "0")
    assert (
        samples.exit_code == 0 and samples.output.count("sieval-reference / arc_easy") == recorded
    )
    assert "partial:" in samples.output
    page = tmp_path / "page.html"
    assert invoke("report", str(run), "--html", str(page)).exit_code == 0
    assert (
        'id="partial"' in page.read_text()
        and f"{recorded} of 30 samples recorded" in page.read_text()
    )


def test_resume_says_how_far_then_a_complete_run_needs_no_server(
    interrupted: dict[str, Any],
) -> None:
    run, recorded = interrupted["run"], interrupted["recorded"]
    resumed = invoke("eval", "--resume", str(run), "--data-dir", str(DATA), "--no-preflight")
    assert resumed.exit_code == 0, resumed.output
    assert f"resuming {run}: {recorded} recorded, {30 - recorded} to go" in resumed.output
    interrupted["server"].stop()  # nothing answers any more
    again = invoke("eval", "--resume", str(run), "--data-dir", str(DATA))
    assert again.exit_code == 0, again.output
    assert "is complete: all 30 samples are recorded and scored; nothing to run" in again.output
    assert "30/30" in again.output and "reaching" not in again.output
    report = json.loads((run / "report.json").read_text())
    assert report["results"][0]["samples"]["scored"] == 30 and "partial" not in report
    assert "partial" not in invoke("report", str(run)).output


def test_watch_follows_a_run_until_it_ends(tmp_path: Path) -> None:
    handle = start_in_thread(port=0, faults="delay; seconds=0.1")
    try:
        proc = start(
            "eval", "--endpoint", handle.url, "--model", "sieval-reference", "--task",
            "arc_easy_kshot_ppl", "--num-fewshot", "0", "--limit", "25", "--concurrency", "1",
            "--data-dir", str(DATA), "--out", str(tmp_path), "--no-preflight",
        )  # fmt: skip
        wait_for(lambda: list(tmp_path.glob("*/running.json")))
        (run,) = tmp_path.iterdir()
        assert is_running(run)
        watch = start("report", str(run), "--watch", "--data-dir", str(DATA))
        watched, _ = watch.communicate(timeout=120)
        proc.communicate(timeout=60)
    finally:
        handle.stop()
    assert watch.returncode == 0 and proc.returncode == 0
    assert not is_running(run)
    assert "25/25" in watched and "partial" not in watched.split("provenance")[-1]


def test_a_dead_writer_is_not_running(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / RUNNING).write_text(json.dumps({"pid": int(done.stdout), "host": os.uname()[1]}))
    assert not is_running(tmp_path)
    (tmp_path / RUNNING).write_text(json.dumps({"pid": os.getpid(), "host": os.uname()[1]}))
    assert is_running(tmp_path)
    (tmp_path / RUNNING).write_text("{")
    assert not is_running(tmp_path)


def test_a_missing_run_directory_is_said_to_be_missing(tmp_path: Path) -> None:
    for command in ("report", "samples"):
        result = invoke(command, str(tmp_path / "nope"))
        assert result.exit_code == 2 and "nope' does not exist" in result.output
    result = invoke("report", str(tmp_path))
    assert result.exit_code == 2 and "no report.json" in result.output


async def test_a_report_is_current_while_it_counts_what_the_records_hold(tmp_path: Path) -> None:
    from sieval.results.snapshot import snapshot
    from sieval.runner import arun_eval, parse_config

    config = parse_config(
        "models: [{endpoint: embedded, name: ref}]\ntasks: [{name: arc_easy_kshot_ppl, n: 3}]"
    )
    run = (await arun_eval(config, options(out=tmp_path, run_name="r"))).run_dir
    written = json.loads((run / "report.json").read_text())
    records = run / "ref" / "arc_easy_kshot_ppl" / "records.jsonl"
    later = (run / "report.json").stat().st_mtime + 60
    os.utime(records, (later, later))  # as a copy may leave it: newer, but the same records
    assert msgspec.to_builtins(snapshot(run, data_dir=DATA)) == written
    first = json.loads(records.read_text().splitlines()[0])
    again = {**first, "status": "failed", "metrics": {}, "error": {"class": "TransportError"}}
    with records.open("a") as out:  # a resume, interrupted after re-recording one sample
        out.write(json.dumps(again) + "\n")
    rebuilt = snapshot(run, data_dir=DATA)
    assert rebuilt.partial.recorded == 3 and rebuilt.partial.missing == 0
    assert rebuilt.results[0].samples.failed == 1
