"""Mistakes and broken disks end in one clear line, never a traceback: each through the real
command line, with its exit code and the file or field it names."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from typer.testing import CliRunner, Result

from sieval.cli import common
from sieval.cli.main import app
from sieval.store import records

sys.path.insert(0, str(Path(__file__).parents[1] / "runner"))
from fakes import FakeTask, write_data

runner = CliRunner()
WORDS = [f"w{i:03d}" for i in range(40)]


@pytest.fixture(autouse=True)
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "task_registry", lambda: {"fake_qa": FakeTask()})


def _clear(result: Result, code: int, *needles: str) -> str:
    """``result`` exited ``code`` with one error naming every needle, and no traceback."""
    output = result.output
    assert result.exit_code == code, output
    assert result.exception is None or isinstance(result.exception, SystemExit), output
    assert "Traceback" not in output
    for needle in needles:
        assert needle in output, (needle, output)
    return output


def _config(tmp_path: Path, name: str = "ref", endpoint: str = "embedded") -> Path:
    write_data(tmp_path / "data", WORDS)
    path = tmp_path / "eval.yaml"
    path.write_text(
        f"models:\n  - {{name: {json.dumps(name)}, endpoint: '{endpoint}'"
        + (", model: m" if endpoint != "embedded" else "")
        + "}\ntasks:\n  - name: fake_qa\n"
    )
    return path


def _eval(
    tmp_path: Path, *extra: str, config: Path | None = None, out: Path | None = None
) -> Result:
    config = config or _config(tmp_path)
    args = ["eval", str(config), "--data-dir", str(tmp_path / "data")]
    return runner.invoke(app, [*args, "--out", str(out or tmp_path / "out"), *extra])


def _run_dir(out: Path) -> Path:
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return run_dir


def _ids(run_dir: Path) -> list[str]:
    """The sample id of each whole line (a torn last one, left by a full disk, is not)."""
    path = run_dir / "ref" / "fake_qa" / "records.jsonl"
    return [json.loads(line)["sample_id"] for line in path.read_bytes().split(b"\n")[:-1]]


# -- configuration and arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "needles"),
    [
        ("run.json", ["models[0].name", "'run.json'", "a run's own file", "'name:'"]),
        ("x" * 300, ["models[0].name", "300 bytes long, more than 128", "'name:'"]),
        ("..", ["models[0].name", "names a directory above"]),
    ],
)
def test_a_label_that_cannot_be_a_directory(tmp_path: Path, name: str, needles: list[str]) -> None:
    _clear(_eval(tmp_path, config=_config(tmp_path, name=name)), 2, *needles)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("endpoint", "needle"),
    [("http://127.0.0.1:70000", "Port out of range 0-65535"), ("http://[::1", "Invalid IPv6 URL")],
)
def test_an_endpoint_url_that_does_not_parse(tmp_path: Path, endpoint: str, needle: str) -> None:
    _clear(_eval(tmp_path, config=_config(tmp_path, endpoint=endpoint)), 2, "endpoint", needle)
    one_line = ["eval", "--endpoint", endpoint, "--model", "m", "--task", "fake_qa"]
    _clear(runner.invoke(app, one_line), 2, "endpoint", needle)


def test_serve_refuses_a_port_above_65535() -> None:
    _clear(runner.invoke(app, ["serve", "--port", "70000"]), 2, "--port", "65535")


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_max_failures_must_be_positive_and_finite(tmp_path: Path, value: str) -> None:
    _clear(_eval(tmp_path, "--max-failures", value), 2, f"--max-failures {value!r}", "N >= 1")
    assert not (tmp_path / "out").exists()


def test_serve_replay_needs_recordings(tmp_path: Path) -> None:
    _clear(
        runner.invoke(app, ["serve", "--replay", str(tmp_path / "nope")]),
        2,
        f"replay folder {tmp_path / 'nope'} does not exist",
    )
    _clear(
        runner.invoke(app, ["serve", "--replay", str(tmp_path)]),
        2,
        f"replay folder {tmp_path} holds no recorded replies",
    )
    (tmp_path / "a.json").write_text("{not json")
    _clear(runner.invoke(app, ["serve", "--replay", str(tmp_path)]), 2, f"{tmp_path / 'a.json'}")


# -- a run directory read back ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(common, "task_registry", lambda: {"fake_qa": FakeTask()})
        assert _eval(tmp, "--limit", "4").exit_code == 0
    return _run_dir(tmp / "out")


def test_report_of_a_runs_file(finished: Path) -> None:
    result = runner.invoke(app, ["report", str(finished / "run.json")])
    _clear(result, 2, f"{finished / 'run.json'}' is a file", f"pass its directory: {finished}")
    result = runner.invoke(app, ["samples", str(finished / "report.json")])
    _clear(result, 2, "is a file, not a run directory")


def _copy(run_dir: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(run_dir, to)
    return to


def test_a_garbage_line_in_records_under_report_html(finished: Path, tmp_path: Path) -> None:
    run_dir = _copy(finished, tmp_path / "run")
    path = run_dir / "ref" / "fake_qa" / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "garbage {\n" + "".join(lines[1:]))
    result = runner.invoke(app, ["report", str(run_dir), "--html", str(tmp_path / "r.html")])
    _clear(result, 2, f"{path}:2: not a valid record", "remove that line")
    assert not (tmp_path / "r.html").exists()
    _clear(runner.invoke(app, ["samples", str(run_dir)]), 2, f"{path}:2")


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (
            lambda r: r.update(results={"ref": {}}),
            "Expected `array`, got `object` - at `$.results`",
        ),
        (lambda r: r.update(results=[1]), "at `$.results[0]`"),
        (lambda r: r["results"][0].pop("samples"), "`samples`"),
        (lambda r: r["results"][0].update(model=7), "at `$.results[0].model`"),
    ],
)
def test_a_report_json_that_is_not_shaped_like_a_report(
    finished: Path, tmp_path: Path, edit: Any, needle: str
) -> None:
    run_dir = _copy(finished, tmp_path / "run")
    report = json.loads((run_dir / "report.json").read_text())
    edit(report)
    (run_dir / "report.json").write_text(json.dumps(report))
    for command in (["report", str(run_dir)], ["samples", str(run_dir)]):
        _clear(
            runner.invoke(app, command),
            2,
            f"{run_dir / 'report.json'}: not a sieval report",
            needle,
        )


def test_records_jsonl_being_a_directory(finished: Path, tmp_path: Path) -> None:
    run_dir = _copy(finished, tmp_path / "run")
    path = run_dir / "ref" / "fake_qa" / "records.jsonl"
    path.unlink()
    path.mkdir()
    result = runner.invoke(
        app, ["eval", "--resume", str(run_dir), "--data-dir", str(finished.parents[1] / "data")]
    )
    _clear(result, 2, f"{path}: it is a directory where sieval keeps a file")
    _clear(runner.invoke(app, ["samples", str(run_dir)]), 2, f"{path}: it is a directory")


# -- disks that fail -------------------------------------------------------------------------------


class _FullDisk:
    """A file that takes ``room`` more bytes, then fails as a full disk does (a line cut)."""

    def __init__(self, file: IO[bytes], room: list[int]) -> None:
        self._file, self._room = file, room

    def write(self, data: bytes) -> int:
        if len(data) > self._room[0]:
            self._file.write(data[: self._room[0]])
            self._file.flush()
            self._room[0] = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room[0] -= len(data)
        return self._file.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def test_disk_full_while_recording_stops_resumably(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = [10_000]  # a few records, then a line cut in the middle
    opened = records.RecordWriter._open
    with monkeypatch.context() as disk:
        disk.setattr(
            records.RecordWriter, "_open", staticmethod(lambda path: _FullDisk(opened(path), room))
        )
        result = _eval(tmp_path)
    run_dir = _run_dir(tmp_path / "out")
    _clear(
        result,
        3,
        "cannot write",
        "the disk is full (No space left on device); free some space",
        "every sample recorded so far is kept",
        f"resume with: sieval eval --resume {run_dir}",
    )
    assert not (run_dir / "report.json").exists()
    kept = _ids(run_dir)
    assert 0 < len(kept) < len(WORDS)
    resumed = runner.invoke(
        app, ["eval", "--resume", str(run_dir), "--data-dir", str(tmp_path / "data")]
    )
    assert resumed.exit_code == 0, resumed.output
    ids = _ids(run_dir)
    assert len(ids) == len(set(ids)) == len(WORDS)


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[None]:
    """A tiny tmpfs at ``path`` (needs root with CAP_SYS_ADMIN; skipped, saying so, without)."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()})")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _remount(path: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(path)], check=True)


WORKER = Path(__file__).parents[1] / "runner" / "cli_worker.py"


def _worker(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "COLUMNS": "300"}
    return subprocess.run(
        [sys.executable, str(WORKER), *args], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.mark.xdist_group("mounts")  # mounts and remounts a tmpfs: one worker, in turn
def test_a_real_full_disk_then_a_read_only_one(tmp_path: Path) -> None:
    """ENOSPC and EROFS from a real filesystem: a 64 KiB tmpfs fills mid-run (exit 3), then,
    read-only, a resume is refused (exit 2); grown and writable, the resume completes."""
    mnt = tmp_path / "mnt"
    config = _config(tmp_path)
    words = [f"w{i:04d}" for i in range(400)]
    write_data(tmp_path / "data", words)
    with _tmpfs(mnt, "64k"):
        args = [str(config), "--data-dir", str(tmp_path / "data")]
        full = _worker("eval", *args, "--out", str(mnt / "out"))
        output = full.stdout + full.stderr
        assert full.returncode == 3, output
        assert "No space left on device" in output and "Traceback" not in output
        run_dir = _run_dir(mnt / "out")
        assert f"resume with: sieval eval --resume {run_dir}" in " ".join(output.split())
        _remount(mnt, "ro")
        refused = _worker("eval", "--resume", str(run_dir), *args[1:])
        output = refused.stdout + refused.stderr
        assert refused.returncode == 2, output
        assert "the filesystem is read-only" in output and str(run_dir) in output
        assert "Traceback" not in output
        fresh = _worker("eval", *args, "--out", str(mnt / "other"))
        output = " ".join((fresh.stdout + fresh.stderr).split())
        assert fresh.returncode == 2 and f"--out '{mnt / 'other'}' cannot be written" in output
        assert "read-only filesystem" in output
        _remount(mnt, "rw,size=16m")
        done = _worker("eval", "--resume", str(run_dir), *args[1:])
        assert done.returncode == 0, done.stdout + done.stderr
        ids = _ids(run_dir)
        assert len(ids) == len(set(ids)) == len(words)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permissions: the tmpfs test")
def test_a_run_directory_this_user_cannot_write(finished: Path, tmp_path: Path) -> None:
    """EACCES for a user who is not root (root's case is the read-only tmpfs above)."""
    run_dir = _copy(finished, tmp_path / "run")
    data = ["--data-dir", str(finished.parents[1] / "data")]
    for path in [run_dir, *run_dir.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        result = runner.invoke(app, ["eval", "--resume", str(run_dir), *data])
        _clear(result, 2, str(run_dir), "permission denied")
        result = _eval(tmp_path, out=run_dir / "inner")
        _clear(result, 2, f"--out '{run_dir / 'inner'}' cannot be written", "permission denied")
    finally:
        for path in [run_dir, *run_dir.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
