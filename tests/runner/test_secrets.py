"""An API key given through api_key_env never lands in records, report, logs or the wire log."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from runs import options

from sieval.plan.config import parse_config
from sieval.runner import PlainProgress, arun_eval

from .fakes import FakeTask, serve, write_data

KEY = "sk-test-SECRET-0123456789abcdef"


async def test_api_key_never_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SIEVAL_TEST_KEY", KEY)
    data = tmp_path / "data"
    write_data(data, ["aa", "reject", "ccc"])  # the 400 reply echoes the auth header back
    seen: list[dict[str, Any]] = []
    async with serve(key=KEY, seen=seen) as url:
        config = parse_config(
            "models:\n"
            f"  - {{name: m, endpoint: '{url}', model: fake-model, api_key_env: SIEVAL_TEST_KEY}}\n"
            "tasks: [{name: fake_qa}]"
        )
        result = await arun_eval(
            config,
            options(out=tmp_path / "results", data_dir=data, wire_log=True, preflight=True),
            tasks={"fake_qa": FakeTask()},
            progress=PlainProgress(interval_s=0.0),
        )
    # the key did reach the server, so the checks below are meaningful
    assert any(s["auth"] == f"Bearer {KEY}" for s in seen if s["path"] == "/v1/completions")
    assert result.failed == 1
    wire = result.run_dir / "m" / "wire.jsonl"
    assert wire.is_file() and wire.stat().st_size > 0
    files = [p for p in result.run_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"records.jsonl", "report.json", "run.json", "wire.jsonl"}
    for path in files:
        assert KEY not in path.read_text(), path
    assert "bad prompt reject" in (result.run_dir / "m" / "fake_qa" / "records.jsonl").read_text()
    out, err = capsys.readouterr()
    assert KEY not in out + err + caplog.text
    assert KEY not in repr(result) and "SIEVAL_TEST_KEY" not in str(result.report.run)


async def test_a_password_in_the_endpoint_url_is_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    password = "pw-SECRET-9876543210"
    data = tmp_path / "data"
    write_data(data, ["aa", "bb"])
    async with serve() as url:
        with_password = url.replace("http://", f"http://user:{password}@")
        config = parse_config(
            f"models:\n  - {{name: m, endpoint: '{with_password}', model: fake-model}}\n"
            "tasks: [{name: fake_qa}]"
        )
        result = await arun_eval(
            config,
            options(out=tmp_path / "results", data_dir=data, wire_log=True, preflight=True),
            tasks={"fake_qa": FakeTask()},
            progress=PlainProgress(interval_s=0.0),
        )
    assert result.exit_code == 0
    files = [p for p in result.run_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"run.json", "report.json", "records.jsonl"}
    for path in files:
        assert password not in path.read_text(), path
    assert "user:[REDACTED]@" in (result.run_dir / "run.json").read_text()
    out, err = capsys.readouterr()
    assert password not in out + err + repr(result)


@pytest.mark.parametrize(
    ("host", "userinfo", "secret", "shown"),
    [
        ("127.0.0.1", "user:pw-SECRET-1234@", "pw-SECRET-1234", "user:[REDACTED]@"),
        ("127.0.0.1", "tok-SECRET-5678@", "tok-SECRET-5678", "//[REDACTED]@"),  # token only
        ("127.0.0.1", "user:p@ss-SECRET@", "p@ss-SECRET", "user:[REDACTED]@"),  # a raw '@'
        ("127.0.0.1", "user:p%40ss-SECRET@", "ss-SECRET", "user:[REDACTED]@"),  # encoded '@'
        ("::1", "user:v6-SECRET-pw@", "v6-SECRET-pw", "user:[REDACTED]@[::1]:"),
        ("::1", "v6-SECRET-token@", "v6-SECRET-token", "//[REDACTED]@[::1]:"),
    ],
)
async def test_every_userinfo_form_is_redacted(
    host: str,
    userinfo: str,
    secret: str,
    shown: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    data = tmp_path / "data"
    write_data(data, ["aa", "bb"])
    seen: list[dict[str, Any]] = []
    async with serve(host=host, seen=seen) as url:
        endpoint = url.replace("http://", f"http://{userinfo}")
        config = parse_config(
            f"models:\n  - {{name: m, endpoint: '{endpoint}', model: fake-model}}\n"
            "tasks: [{name: fake_qa}]"
        )
        result = await arun_eval(
            config,
            options(out=tmp_path / "results", data_dir=data, wire_log=True, preflight=True),
            tasks={"fake_qa": FakeTask()},
            progress=PlainProgress(interval_s=0.0),
        )
    assert result.exit_code == 0
    assert any(s["path"] == "/v1/completions" for s in seen)  # the server really was reached
    files = [p for p in result.run_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"run.json", "report.json", "records.jsonl", "wire.jsonl"}
    for path in files:
        text = path.read_text()
        assert secret not in text and "SECRET" not in text, path
    assert shown in (result.run_dir / "run.json").read_text()
    assert shown in (result.run_dir / "report.json").read_text()
    out, err = capsys.readouterr()
    assert "SECRET" not in out + err + caplog.text + repr(result)
