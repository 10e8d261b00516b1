"""A planned run whose endpoint URL holds a password: run.json never stores it, so a shard reads
it from the config file the user passes again (``sieval eval CONFIG --run RUN --shard k/N``),
the message says exactly that, and the command it names works. Real processes, a real server."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from .fakes import serve, write_data
from .workers import CLI, finish, start


async def _cli(*args: str) -> tuple[int, str]:
    code, log = await finish(await start(CLI, *args))
    return code, " ".join(log.split())


def _config(path: Path, url: str) -> Path:
    path.write_text(
        f"models:\n  - {{name: m, endpoint: '{url}', model: fake-model}}\n"
        "tasks:\n  - name: fake_qa\n"
    )
    return path


async def test_a_shard_of_a_planned_run_with_a_password(tmp_path: Path) -> None:
    write_data(tmp_path / "data", [f"w{i}" for i in range(10)])
    seen: list[dict[str, Any]] = []
    async with serve(seen=seen) as url:
        secret_url = url.replace("http://", "http://u:s3cret@")
        config = _config(tmp_path / "eval.yaml", secret_url)
        run_dir = tmp_path / "planned"
        data = ["--data-dir", str(tmp_path / "data")]
        code, log = await _cli(
            "plan", str(config), "--out", str(run_dir), "--shards", "2", "--limit", "6", *data
        )
        assert code == 0, log
        assert "s3cret" not in (run_dir / "run.json").read_text()

        code, log = await _cli("eval", "--run", str(run_dir), "--shard", "0/2")
        assert code == 2 and "Traceback" not in log
        fix = f"sieval eval CONFIG --run {run_dir} --shard 0/2"
        assert "holds a password, which run.json does not store" in log and fix in log, log

        wrong = _config(tmp_path / "wrong.yaml", secret_url.replace("127.0.0.1", "localhost"))
        code, log = await _cli("eval", str(wrong), "--run", str(run_dir), "--shard", "0/2")
        assert code == 2 and "has no model 'm' at" in log, log

        code, log = await _cli("slurm", str(run_dir))  # the scripts would fail every shard
        assert code == 2 and f"sieval slurm {run_dir} --config CONFIG" in log, log
        code, log = await _cli("slurm", str(run_dir), "--config", str(config))
        assert code == 0, log
        script = (run_dir / "slurm" / "shards.sbatch").read_text()
        assert f"eval {config.resolve()} --run {run_dir.resolve()} --shard slurm" in script
        assert str(config.resolve()) in (run_dir / "k8s" / "shards.yaml").read_text()

        seen.clear()
        for k in (0, 1):  # the command the message named (the config lacks --limit: no matter)
            code, log = await _cli("eval", str(config), "--run", str(run_dir), "--shard", f"{k}/2")
            assert code == 0, log
        completions = [
            s for s in seen if s["path"].endswith("/completions") and not s["route_probe"]
        ]
        basic = "Basic " + base64.b64encode(b"u:s3cret").decode()
        assert len(completions) == 12 and all(s["auth"] == basic for s in completions)
    code, log = await _cli("finalize", str(run_dir))  # sends nothing: needs no password
    assert code == 0, log
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert b"s3cret" not in path.read_bytes(), path


async def test_a_resume_with_a_password_names_the_command_that_works(tmp_path: Path) -> None:
    write_data(tmp_path / "data", ["aa", "bb", "cc"])
    async with serve() as url:
        config = _config(tmp_path / "eval.yaml", url.replace("http://", "http://u:s3cret@"))
        code, log = await _cli(
            "eval", str(config), "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "o")
        )
        assert code == 0, log
        (run_dir,) = (tmp_path / "o").iterdir()
        data = ["--data-dir", str(tmp_path / "data")]
        code, log = await _cli("eval", "--resume", str(run_dir), *data)
        assert code == 2 and f"sieval eval CONFIG --resume {run_dir}" in log, log
        code, log = await _cli("eval", str(config), "--resume", str(run_dir), *data)
        assert code == 0, log
