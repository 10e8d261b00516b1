"""What a model or a server wrote reaches the terminal inert: every escape kind, through each
command that prints it (eval's summary, report, samples with and without --body, compare)."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from sieval.cli import common
from sieval.cli.inert import inert, shown
from sieval.cli.main import app

sys.path.insert(0, str(Path(__file__).parents[1] / "runner"))
from fakes import FakeTask, write_data

EVIL = (
    "\x1b[2J"  # CSI: clears the screen
    "\x1b]0;pwned\x07"  # OSC: retitles the terminal
    ":smile:"  # a rich emoji code
    "[bold red]markup[/]"  # rich markup
    "\rover"  # carriage return: overwrites the line
    "\x9b31m"  # C1 CSI (one byte)
    "\u202eright-to-left"  # bidi override
    "\x00nul\x7fdel"
)
SHOWN = (
    "\\x1b[2J\\x1b]0;pwned\\x07:smile:[bold red]markup[/]\\rover\\x9b31m"
    "\\u202eright-to-left\\x00nul\\x7fdel"
)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_inert_shows_every_control_character_and_keeps_the_rest() -> None:
    assert inert(EVIL) == SHOWN
    assert inert("line 1\nline 2\tcol") == "line 1\nline 2\tcol"  # newline and tab stay
    assert inert("é ✓ 数学 \\frac{1}{2}") == "é ✓ 数学 \\frac{1}{2}"
    assert inert(None) == "None"
    console = Console(record=True, width=400, color_system=None)
    console.print(shown(EVIL))
    assert console.export_text().rstrip("\n") == SHOWN  # no markup read, no emoji put in


runner = CliRunner()


class _State:
    text = EVIL  # what the server generates after the word


@pytest.fixture
def server() -> Iterator[type[_State]]:
    """A completions server (stdlib, in a thread) whose text, errors and version are EVIL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, data: object) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "fake-model"}]})
            elif self.path.endswith("/version"):
                self._send(200, {"version": "9.9" + EVIL})
            else:
                self._send(200, {})

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            prompt = json.loads(self.rfile.read(size))["prompt"]
            word = prompt.removeprefix("Q: ")
            if "reject" in word:
                self._send(400, {"error": {"message": "bad " + EVIL, "code": 400}})
                return
            text = f" {word.upper()}" if _State.text == "" else f" {word}{_State.text}"
            self._send(
                200,
                {
                    "id": "c",
                    "object": "text_completion",
                    "model": "fake-model",
                    "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                },
            )

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _State.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    try:
        yield _State
    finally:
        httpd.shutdown()
        _State.text = EVIL


@pytest.fixture(autouse=True)
def fake_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "task_registry", lambda: {"fake_qa": FakeTask()})


def _inert_output(text: str) -> None:
    assert RAW.search(text) is None, repr(RAW.search(text))
    assert "😄" not in text


def _eval(tmp_path: Path, url: str, name: str) -> tuple[int, str, Path]:
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"models:\n  - {{name: m, endpoint: '{url}', model: fake-model}}\ntasks:\n"
        "  - name: fake_qa\n"
    )
    out = tmp_path / name
    result = runner.invoke(
        app,
        [
            "eval",
            str(config),
            "--data-dir",
            str(tmp_path / "data"),
            "--out",
            str(out),
            "--no-preflight",
        ],
        env={"COLUMNS": "1000"},
    )
    (run_dir,) = out.iterdir()
    return result.exit_code, result.output, run_dir


def test_every_command_shows_model_and_server_text_inert(
    tmp_path: Path, server: type[_State]
) -> None:
    write_data(tmp_path / "data", ["ab\x1b[2Jcd", "wxyz", "rejectme", "q\u202ez"])
    url = server.url  # type: ignore[attr-defined]
    code, output, run_a = _eval(tmp_path, url, "a")
    assert code == 1, output  # the rejected sample failed
    _inert_output(output)
    assert "bad " + SHOWN in output  # the server's error, in eval's summary
    server.text = ""  # the second run answers right: every sample flips
    _, _, run_b = _eval(tmp_path, url, "b")

    env = {"COLUMNS": "1000"}
    outputs = {
        "report": runner.invoke(app, ["report", str(run_a)], env=env),
        "samples": runner.invoke(app, ["samples", str(run_a), "--limit", "0"], env=env),
        "body": runner.invoke(app, ["samples", str(run_a), "--body", "--limit", "0"], env=env),
        "id": runner.invoke(app, ["samples", str(run_a), "--id", "s0", "--body"], env=env),
        "failed": runner.invoke(app, ["samples", str(run_a), "--failed"], env=env),
        "compare": runner.invoke(app, ["compare", str(run_a), str(run_b)], env=env),
    }
    for name, result in outputs.items():
        assert result.exit_code == 0, (name, result.output)
        _inert_output(result.output)
    assert "9.9" + SHOWN in outputs["report"].output  # the server's version
    assert "bad " + SHOWN in outputs["report"].output  # a failure example
    assert "generation: ab\\x1b[2Jcd" + SHOWN in outputs["samples"].output
    assert "Q: ab\\x1b[2Jcd" in outputs["id"].output  # the prompt as sent
    assert "q\\u202ez" in outputs["body"].output  # a body (JSON) with a bidi override
    assert "HTTP 400" in outputs["failed"].output and "bad " + SHOWN in outputs["failed"].output
    assert f"(picked ab\\x1b[2Jcd{SHOWN})" in outputs["compare"].output  # a flip's prediction


def test_an_error_line_is_inert() -> None:
    result = runner.invoke(app, ["report", "/nonexistent/\x1b]0;x\x07[bold]run"])
    assert result.exit_code == 2
    _inert_output(result.output)
    assert "\\x1b]0;x\\x07[bold]run" in result.output
