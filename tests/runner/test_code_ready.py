"""A code task's sandbox is chosen and tried before the run's first request: a machine where none
can run refuses the run (naming the fixes) having sent nothing; ``--allow-unsafe-code`` runs it
unsandboxed and says so at the start, at the end and in the report; the mode is recorded with
the run and each program's outcome with its sample."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import RunOptions, arun_eval
from sieval.tasks import _code
from sieval.transport import HttpTransport
from sieval.transport.types import HttpReply, HttpRequest

DATA = Path(os.environ.get("SIEVAL_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))


class _Counting:
    """A real HTTP transport that counts what it sends."""

    def __init__(self) -> None:
        self.inner = HttpTransport()
        self.sent = 0

    async def send(self, request: HttpRequest) -> HttpReply:
        self.sent += 1
        return await self.inner.send(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture(autouse=True)
def fresh_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_code, "_SANDBOX", [])


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A machine with no bubblewrap, podman or docker on its PATH."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


async def _run(
    tmp_path: Path, counting: _Counting | None = None, **options: Any
) -> tuple[Any, int, list[str]]:
    counting = counting or _Counting()
    said: list[str] = []
    async with ReferenceServer() as server:
        cfg = parse_config(
            f"models: [{{endpoint: '{server.url}', model: sieval-reference}}]\n"
            "tasks: [{name: humaneval, n: 2}]\n"
        )
        try:
            result = await arun_eval(
                cfg,
                RunOptions(out=tmp_path / "out", data_dir=DATA, on_stage=said.append, **options),
                transport_factory=lambda _: counting,
            )
        finally:
            await counting.aclose()
    return result, counting.sent, said


async def test_no_sandbox_refuses_the_run_before_any_request(
    tmp_path: Path, no_sandbox: None
) -> None:
    counting = _Counting()
    with pytest.raises(ConfigError) as raised:
        await _run(tmp_path, counting)
    message = raised.value.message
    assert "no sandbox can run" in message
    for fix in ("apt-get install bubblewrap", "podman", "--allow-unsafe-code"):
        assert fix in message
    assert counting.sent == 0
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


async def test_the_refusal_sent_nothing(tmp_path: Path, no_sandbox: None) -> None:
    counting = _Counting()
    async with ReferenceServer() as server:
        cfg = parse_config(
            f"models: [{{endpoint: '{server.url}', model: sieval-reference}}]\n"
            "tasks: [{name: mbpp_sanitized, n: 2}]\n"
        )
        with pytest.raises(ConfigError, match="no sandbox can run"):
            await arun_eval(
                cfg,
                RunOptions(out=tmp_path / "out", data_dir=DATA),
                transport_factory=lambda _: counting,
            )
        await counting.aclose()
    assert counting.sent == 0


async def test_the_unsafe_mode_runs_only_when_allowed_and_says_so_loudly(
    tmp_path: Path, no_sandbox: None
) -> None:
    result, sent, said = await _run(tmp_path, allow_unsafe_code=True)
    assert sent > 0
    assert f"warning: {_code.UNSAFE_WARNING}" in said  # before the first request
    assert _code.UNSAFE_WARNING in result.warnings  # at the end
    assert result.report.warnings.count(_code.UNSAFE_WARNING) == 1  # in report.json
    box = result.report.ready["humaneval"]["sandbox"]
    assert (box["mode"], box["unsafe"]) == ("unsafe", True)
    for line in (
        (result.run_dir / "sieval-reference" / "humaneval" / "records.jsonl")
        .read_bytes()
        .splitlines()
    ):
        channels = msgspec.json.decode(line)["channels"]
        if "execution" in channels:
            assert channels["execution"]["mode"] == "unsafe"


async def test_a_run_names_its_sandbox(tmp_path: Path) -> None:
    result, _, said = await _run(tmp_path)
    box = result.report.ready["humaneval"]["sandbox"]
    assert box["mode"] in ("bwrap-root", "bwrap-userns") and box["unsafe"] is False
    assert any(
        line.startswith(f"code tasks: programs run in the {box['mode']} sandbox") for line in said
    )
    assert not any("UNSANDBOXED" in w for w in result.warnings)


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def _executions(run_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    path = run_dir / "sieval-reference" / "humaneval" / "records.jsonl"
    lines = [msgspec.json.decode(line) for line in path.read_bytes().splitlines()]
    return [
        (r["sample_id"], r["channels"]["execution"]) for r in lines if "execution" in r["channels"]
    ]


async def test_each_programs_outcome_shows_in_samples_and_the_html_report(tmp_path: Path) -> None:
    result, _, _ = await _run(tmp_path)
    ((sample_id, execution), *_) = _executions(result.run_dir)
    shown = _cli("samples", str(result.run_dir), "--id", sample_id)
    assert f"program: {execution['status']} — {execution['reason']}" in shown
    assert f"({execution['mode']}, " in shown and "program's stderr (its end):" in shown
    report = _cli("report", str(result.run_dir))
    assert f"code: humaneval ran each program in the {execution['mode']} sandbox" in report
    page = tmp_path / "report.html"
    _cli("report", str(result.run_dir), "--html", str(page))
    html = page.read_text()
    assert 'class="note sandbox"' in html and 'id="unsafe-code"' not in html
    shown_in_page = {s["id"]: s["execution"] for s in _page_samples(html)}
    assert shown_in_page[sample_id]["reason"] == execution["reason"]
    assert shown_in_page[sample_id]["status"] == execution["status"]


async def test_the_unsafe_mode_is_loud_in_the_report_and_html(
    tmp_path: Path, no_sandbox: None
) -> None:
    result, _, _ = await _run(tmp_path, allow_unsafe_code=True)
    assert "MODEL CODE RAN UNSANDBOXED (humaneval, --allow-unsafe-code)" in _cli(
        "report", str(result.run_dir)
    )
    page = tmp_path / "report.html"
    _cli("report", str(result.run_dir), "--html", str(page))
    assert 'id="unsafe-code"' in page.read_text()


def _page_samples(html: str) -> list[dict[str, Any]]:
    """The samples the HTML report's script shows (gzip'd, base64'd JSON in the page)."""
    packed = re.search(r'id="sample-data"[^>]*>([^<]*)</script>', html)
    assert packed is not None
    found: list[dict[str, Any]] = json.loads(gzip.decompress(base64.b64decode(packed.group(1))))[
        "samples"
    ]
    return found
