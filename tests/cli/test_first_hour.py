"""The first hour: the one-line form, --version, resume from the run directory alone (and a
subset), a file given as --out, Ctrl-C, --max-failures: what a new user meets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.reference import ReferenceServer, start_in_thread

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
runner = CliRunner()


@pytest.fixture
def server():
    handle = start_in_thread(port=0)
    yield handle
    handle.stop()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("sieval 0.")


def test_the_one_line_form_against_a_running_server(tmp_path: Path, server) -> None:
    args = ["eval", "--endpoint", server.url, "--model", "sieval-reference"]
    args += ["--task", "arc_easy_kshot_ppl,mmlu_kshot_clp", "--limit", "3"]
    result = runner.invoke(app, [*args, "--data-dir", str(DATA), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    assert [r["task"] for r in report["results"]] == ["arc_easy_kshot_ppl", "mmlu_kshot_clp"]
    assert {r["samples"]["scored"] for r in report["results"]} == {3}
    stored = json.loads((run_dir / "run.json").read_text())["config"]
    assert stored["models"][0]["endpoint"] == server.url


def test_the_one_line_form_on_the_embedded_server_over_chat(tmp_path: Path) -> None:
    args = ["eval", "--endpoint", "embedded", "--dialect", "openai_chat"]
    args += ["--task", "gsm8k_0shot_gen,mmlu_0shot_gen", "--limit", "2"]
    result = runner.invoke(app, [*args, "--data-dir", str(DATA), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    assert {r["samples"]["scored"] for r in report["results"]} == {2}
    model = json.loads((run_dir / "run.json").read_text())["config"]["models"][0]
    assert (model["model"], model["dialect"]) == ("sieval-reference", "openai_chat")


def test_a_refused_task_option_names_where_to_set_it(tmp_path: Path) -> None:
    args = ["eval", "--endpoint", "embedded", "--dialect", "openai_chat"]
    args += ["--task", "mmlu_kshot_clp", "--limit", "1", "--data-dir", str(DATA)]
    result = runner.invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "k <= 19" in result.output
    # a one-line run is told the flag; the same run from a config, the config key
    assert "--task-option top_k=N for mmlu_kshot_clp" in result.output
    config = tmp_path / "chat.yaml"
    config.write_text(
        "models: [{endpoint: embedded, dialect: openai_chat}]\ntasks: [{name: mmlu_kshot_clp}]\n"
    )
    result = runner.invoke(app, ["eval", str(config), "--limit", "1", "--data-dir", str(DATA)])
    assert result.exit_code == 2 and "options: {top_k: N} for mmlu_kshot_clp" in result.output
    assert "--task-option" not in result.output


def test_the_one_line_form_needs_its_parts() -> None:
    result = runner.invoke(app, ["eval", "--endpoint", "http://127.0.0.1:9", "--model", "m"])
    assert result.exit_code == 2 and "needs --task" in result.output
    result = runner.invoke(app, ["eval", "--endpoint", "http://127.0.0.1:9", "--task", "x"])
    assert result.exit_code == 2 and "exactly one --model" in result.output
    result = runner.invoke(app, ["eval"])
    assert result.exit_code == 2 and "try: sieval eval examples/quickstart.yaml" in result.output


def test_resume_from_the_run_directory_alone_and_a_subset(tmp_path: Path, server) -> None:
    base = ["eval", "--endpoint", server.url, "--model", "sieval-reference", "--limit", "2"]
    base += ["--task", "arc_easy_kshot_ppl,gsm8k_kshot_base_gen"]
    first = runner.invoke(app, [*base, "--data-dir", str(DATA), "--out", str(tmp_path)])
    assert first.exit_code == 0, first.output
    (run_dir,) = tmp_path.iterdir()
    records = run_dir / "sieval-reference" / "gsm8k_kshot_base_gen" / "records.jsonl"
    records.write_text("")  # as if the run had been interrupted before any gsm8k sample
    again = runner.invoke(
        app,
        [
            "eval",
            "--resume",
            str(run_dir),
            "--task",
            "gsm8k_kshot_base_gen",
            "--data-dir",
            str(DATA),
        ],
    )
    assert again.exit_code == 0, again.output
    report = json.loads((run_dir / "report.json").read_text())
    assert {r["task"]: r["samples"]["scored"] for r in report["results"]} == {
        "arc_easy_kshot_ppl": 2,
        "gsm8k_kshot_base_gen": 2,
    }
    assert report["timings"]["sessions"][-1]["samples_run"] == 2  # only the gsm8k samples ran
    changed = runner.invoke(
        app, [*base, "--resume", str(run_dir), "--data-dir", str(DATA), "--limit", "3"]
    )
    assert changed.exit_code == 2 and "config.n: 2 -> 3" in changed.output
    assert len(changed.output) < 2000  # a short diff, not a checksum list


def test_a_file_given_as_out_is_a_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "results.txt"
    target.write_text("x")
    result = runner.invoke(
        app,
        [
            "eval",
            "examples/quickstart.yaml",
            "--limit",
            "1",
            "--out",
            str(target),
            "--data-dir",
            str(DATA),
        ],
    )
    assert result.exit_code == 2 and "is a file; pass a directory" in result.output


def test_max_failures_stops_a_run_failing_wholesale(tmp_path: Path) -> None:
    server = ReferenceServer(faults="500")
    handle = start_in_thread(port=0, faults="500")
    try:
        args = ["eval", "--endpoint", handle.url, "--model", "sieval-reference"]
        args += ["--task", "arc_easy_kshot_ppl", "--limit", "40", "--max-failures", "3"]
        args += ["--no-preflight", "--data-dir", str(DATA), "--out", str(tmp_path)]
        config = tmp_path / "fast.yaml"
        config.write_text(
            f"models: [{{name: m, endpoint: '{handle.url}', model: sieval-reference, retries: 0, "
            "concurrency_limit: 1}]\ntasks: [{name: arc_easy_kshot_ppl, n: 40}]\n"
        )
        result = runner.invoke(
            app,
            [
                "eval",
                str(config),
                "--max-failures",
                "3",
                "--no-preflight",
                "--data-dir",
                str(DATA),
                "--out",
                str(tmp_path / "o"),
            ],
        )
    finally:
        handle.stop()
    del server, args
    assert result.exit_code == 1, result.output
    assert "stopped early (--max-failures): more than 3 samples failed" in result.output
    (run_dir,) = (tmp_path / "o").iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    failed = report["results"][0]["samples"]["failed"]
    assert 4 <= failed < 40 and report["stopped"].startswith("stopped early")


def test_ctrl_c_prints_the_run_directory_and_the_resume_command(tmp_path: Path) -> None:
    handle = start_in_thread(port=0, faults="delay; seconds=0.3")
    config = tmp_path / "slow.yaml"
    config.write_text(
        f"models: [{{name: m, endpoint: '{handle.url}', model: sieval-reference, "
        "concurrency_limit: 1}]\ntasks: [{name: arc_easy_kshot_ppl, n: 30}]\n"
    )
    cli = "import sys; from sieval.cli.main import main; sys.argv[0] = 'sieval'; main()"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            cli,
            "eval",
            str(config),
            "--no-preflight",
            "--data-dir",
            str(DATA),
            "--out",
            str(tmp_path / "o"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a suite started in the background (``cmd &`` without job control)
        # passes SIGINT on ignored, and Python then never turns it into KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(
            (tmp_path / "o").glob("*/m/*/records.jsonl")
        ):
            time.sleep(0.1)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        handle.stop()
    (run_dir,) = (tmp_path / "o").iterdir()
    assert proc.returncode == 130, err[-2000:]
    assert f"sieval eval --resume {run_dir}" in err
    assert "Traceback" not in err
