"""What an OSError on a run file means to the user, and the atomic write."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from sieval.errors import ConfigError
from sieval.plan.run_config import load_run_config
from sieval.store.files import StorageError, storage_error, write_atomic
from sieval.store.rundir import create_run_dir, run_directory


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EDQUOT, "the disk is full"),
        (errno.EISDIR, "it is a directory where sieval keeps a file"),
        (errno.ENOTDIR, "a part of that path is a file"),
        (errno.EROFS, "the filesystem is read-only"),
        (errno.EACCES, "permission denied"),
        (errno.EIO, "Input/output error"),
    ],
)
def test_each_os_error_says_what_to_do(code: int, needle: str) -> None:
    import os

    exc = storage_error(OSError(code, os.strerror(code)), Path("/r/x.jsonl"), doing="write")
    assert isinstance(exc, StorageError) and not isinstance(exc, ConfigError) and not exc.stopped
    assert exc.message.startswith("cannot write /r/x.jsonl: ") and needle in exc.message


def test_write_atomic_leaves_no_temporary(tmp_path: Path) -> None:
    write_atomic(tmp_path / "run.json", b"{}\n")
    write_atomic(tmp_path / "run.json", b'{"a": 1}\n')
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert (tmp_path / "run.json").read_bytes() == b'{"a": 1}\n'
    (tmp_path / "d").mkdir()
    with pytest.raises(StorageError, match="d: it is a directory"):
        write_atomic(tmp_path / "d", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "run.json"]


def test_run_directories(tmp_path: Path) -> None:
    create_run_dir(tmp_path / "r", fresh=True)
    with pytest.raises(ConfigError, match="already exists; use --resume"):
        create_run_dir(tmp_path / "r", fresh=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(StorageError, match="a part of that path is a file"):
        create_run_dir(tmp_path / "file" / "r", fresh=True)
    with pytest.raises(ConfigError, match="does not exist"):
        run_directory(tmp_path / "nope")
    with pytest.raises(ConfigError, match="is a file, not a run directory$"):
        run_directory(tmp_path / "file")  # no run.json beside it: no hint


def test_an_endpoint_password_comes_from_the_config_file(tmp_path: Path) -> None:
    from sieval.plan.config import EvalConfig, parse_config
    from sieval.plan.run_config import stored
    from sieval.store.rundir import write_run_json

    def config(url: str, name: str = "m") -> EvalConfig:
        return parse_config(
            f"models: [{{name: {name}, endpoint: '{url}', model: x}}]\ntasks: [{{name: t}}]"
        )

    secret = "http://u:pw@h:1"
    write_run_json(tmp_path, "sha256:0", {}, stored(config(secret)))
    assert "pw" not in (tmp_path / "run.json").read_text()
    with pytest.raises(ConfigError, match="holds a password, which run.json does not store"):
        load_run_config(tmp_path)
    assert "[REDACTED]" in load_run_config(tmp_path, contacts=False).models[0].endpoint
    given = load_run_config(tmp_path, endpoints=config(secret))
    assert given.models[0].endpoint == secret
    for other in (config("http://u:pw@h:2"), config(secret, name="n")):
        with pytest.raises(ConfigError, match="the config file has no model 'm' at"):
            load_run_config(tmp_path, endpoints=other)
