"""``sieval serve``, run for real in a subprocess: it listens, answers, and stops on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.cli.serve import is_loopback

# What the ``sieval`` console script runs, with this interpreter (PATH may hold another one).
SIEVAL = [
    sys.executable,
    "-c",
    "import sys; sys.argv[0] = 'sieval'; from sieval.cli.main import main; main()",
]
ECHO_SCORING = {
    "model": "sieval-reference",
    "prompt": "The sun is a star",
    "echo": True,
    "logprobs": 1,
    "max_tokens": 0,
    "temperature": 0,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _default_sigint() -> None:
    # A shell's background job starts with SIGINT ignored, and an ignored signal survives exec:
    # give the server the default disposition so Python turns Ctrl-C into KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*SIEVAL, "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        preexec_fn=_default_sigint,
    )


def http(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    for key, value in (headers or {}).items():
        req.add_header(key, value)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_healthy(proc: subprocess.Popen[str], url: str, deadline_s: float = 30.0) -> str:
    """Poll ``/health`` until it answers 200; return the banner line the server printed."""
    end = time.monotonic() + deadline_s
    while True:
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"sieval serve exited with {proc.returncode} before listening: {err}")
        try:
            if http(url + "/health")[0] == 200:
                break
        except OSError:
            pass
        if time.monotonic() > end:
            pytest.fail(f"sieval serve did not answer {url}/health within {deadline_s} s")
        time.sleep(0.05)
    assert proc.stdout is not None
    return proc.stdout.readline()


def ctrl_c(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    return proc.returncode, out, err


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """Servers started by a test; any still running when it ends (a failure) are killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_serves_version_and_echo_scoring_then_exits_0_on_ctrl_c(procs: list) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs.append(proc := start("--port", str(port)))
    banner = wait_healthy(proc, url)
    assert url in banner and "Ctrl-C" in banner

    status, raw = http(url + "/version")
    assert status == 200
    assert json.loads(raw) == {"version": "sieval-reference (vllm 0.32.0 wire)"}

    status, raw = http(url + "/v1/completions", ECHO_SCORING)
    assert status == 200, raw
    reply = json.loads(raw)
    choice = reply["choices"][0]
    assert choice["text"] == ECHO_SCORING["prompt"]
    tokens, logprobs = choice["logprobs"]["tokens"], choice["logprobs"]["token_logprobs"]
    assert len(tokens) == len(logprobs) == reply["usage"]["prompt_tokens"] > 1
    assert logprobs[0] is None and all(isinstance(x, float) and x <= 0 for x in logprobs[1:])

    code, out, err = ctrl_c(proc)
    assert code == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_fault_applies_to_every_request_until_times_runs_out(procs: list) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs.append(proc := start("--port", str(port), "--fault", "503; times=1"))
    assert "503; times=1" in wait_healthy(proc, url)

    status, raw = http(url + "/v1/completions", ECHO_SCORING)
    assert status == 503
    assert json.loads(raw)["error"]["message"] == "sieval reference: injected 503"
    assert http(url + "/v1/completions", ECHO_SCORING)[0] == 200
    assert ctrl_c(proc)[0] == 0


def test_api_key_comes_from_the_named_env_var(procs: list) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    key = "sk-serve-test-key"
    procs.append(
        proc := start(
            "--port", str(port), "--api-key-env", "SIEVAL_SERVE_KEY", env={"SIEVAL_SERVE_KEY": key}
        )
    )
    banner = wait_healthy(proc, url)
    assert key not in banner

    assert http(url + "/v1/completions", ECHO_SCORING)[0] == 401
    auth = {"Authorization": f"Bearer {key}"}
    assert http(url + "/v1/completions", ECHO_SCORING, auth)[0] == 200
    code, out, err = ctrl_c(proc)
    assert code == 0 and key not in out + err


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.com"])
def test_non_loopback_host_is_refused_with_exit_2(host: str) -> None:
    proc = subprocess.run(
        [*SIEVAL, "serve", "--host", host, "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert f"refusing to bind --host '{host}'" in proc.stderr
    assert "--allow-remote" in proc.stderr


def test_a_taken_port_is_exit_2_with_a_message() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [*SIEVAL, "serve", "--port", str(port)], capture_output=True, text=True, timeout=30
        )
    assert proc.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr


runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--api-key-env", "SIEVAL_SERVE_UNSET_XYZ"], {}, "'SIEVAL_SERVE_UNSET_XYZ'"),
        (["--api-key-env", "SIEVAL_SERVE_EMPTY"], {"SIEVAL_SERVE_EMPTY": ""}, "not set or empty"),
        (["--fault", "bogus"], {}, "unknown fault mode 'bogus'"),
        (["--fault", "503; times"], {}, "is not KEY=VALUE"),
        (["--replay", "/nonexistent/sieval-replay"], {}, "does not exist"),
        (["--host", "10.0.0.1"], {}, "--allow-remote"),
    ],
)
def test_bad_input_is_exit_2_before_binding(args: list[str], env: dict[str, str], needle: str):
    os.environ.pop("SIEVAL_SERVE_UNSET_XYZ", None)
    result = runner.invoke(app, ["serve", "--port", "0", *args], env=env)
    assert result.exit_code == 2
    assert needle in result.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_each_request_is_logged_on_one_line_unless_quiet(procs: list) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs.append(proc := start("--port", str(port)))
    wait_healthy(proc, url)
    assert http(url + "/v1/completions", ECHO_SCORING)[0] == 200
    assert http(url + "/v1/nope")[0] == 404
    code, _, err = ctrl_c(proc)
    assert code == 0
    lines = [line for line in err.splitlines() if " /v1/" in line]
    assert len(lines) == 2, err
    scored, missing = (line.split() for line in lines)
    # time, client, method, path, status, milliseconds
    assert scored[1:5] == ["127.0.0.1", "POST", "/v1/completions", "200"] and scored[-1] == "ms"
    assert missing[2:5] == ["GET", "/v1/nope", "404"]
    assert sum(" /health " in line for line in err.splitlines()) >= 1  # the readiness polls too

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs.append(proc := start("--port", str(port), "--quiet"))
    wait_healthy(proc, url)
    assert http(url + "/v1/completions", ECHO_SCORING)[0] == 200
    code, _, err = ctrl_c(proc)
    assert code == 0 and "/v1/completions" not in err and "/health" not in err
