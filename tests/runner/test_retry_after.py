"""A server's Retry-After is honoured up to the model's retry_after_max_s, and a longer one is
cut to it and said on the terminal."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.runner import PlainProgress, arun_eval

from .fakes import FakeTask, answer, write_data


@asynccontextmanager
async def _serve_429_once(seconds: str) -> AsyncIterator[str]:
    """The fake completions wire, whose first completion is a 429 asking for ``seconds``."""
    asked: list[bool] = []

    async def handle(request: web.Request) -> web.Response:
        body = await request.read() if request.can_read_body else None
        # the pre-flight's route probe (an empty body) is not a completion
        if request.path.endswith("/completions") and body != b"{}" and not asked:
            asked.append(True)
            return web.json_response(
                {"error": "slow"}, status=429, headers={"Retry-After": seconds}
            )
        status, data = answer(request.path, body)
        return web.json_response(data, status=status)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_an_hour_of_retry_after_waits_the_configured_cap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    write_data(data, ["aa"])
    async with _serve_429_once("3600") as url:
        config = parse_config(
            f"models: [{{name: m, endpoint: '{url}', model: fake-model, retry_after_max_s: 0.3}}]\n"
            "tasks: [{name: fake_qa}]"
        )
        t0 = time.monotonic()
        result = await arun_eval(
            config,
            # no pre-run checks: the first completion, the 429, is the sample's own
            options(out=tmp_path / "results", data_dir=data),
            tasks={"fake_qa": FakeTask()},
            progress=PlainProgress(interval_s=0.0),
        )
        waited = time.monotonic() - t0
    assert result.exit_code == 0 and result.failed == 0
    assert 0.3 <= waited < 5  # the cap, not the hour
    records = (result.run_dir / "m" / "fake_qa" / "records.jsonl").read_text()
    assert '"attempts":2' in records
    said = [r.getMessage() for r in caplog.records if "Retry-After" in r.getMessage()]
    assert len(said) == 1 and "3600 s" in said[0] and "cap of 0.3 s" in said[0]


@pytest.mark.parametrize("value", ["0", "-1", ".nan", ".inf"])
def test_retry_after_max_s_must_be_a_positive_finite_number(value: str) -> None:
    with pytest.raises(ConfigError, match="retry_after_max_s"):
        parse_config(
            f"models: [{{name: m, endpoint: 'http://h:1', model: x, retry_after_max_s: {value}}}]\n"
            "tasks: [{name: t}]"
        )


def test_the_cut_is_said_on_the_terminal() -> None:
    # no logging set up, as under the CLI: a warning still reaches stderr
    code = "import logging; logging.getLogger('sieval.transport').warning('x asked to wait 3600 s')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "asked to wait 3600 s" in done.stderr
