"""Hints that are right (issue 41): each names the one fix that works, before a run directory
exists. A server of the wrong wire is named as such (the route missing, not the model); a prompt
too long for the context is what ``--dry-run`` refuses, with the task's own form; a dead port gets
one hint; a scheme-less URL, a missing ``--model``, a flag ``--resume`` would ignore and a chat
task on a completion wire each say what to type; the library example runs on a fresh clone.

The servers that lack a route are small aiohttp apps (an error branch: no real server is needed
to answer 404); the route probe itself is checked against vLLM 0.32 in ``tests/live/``."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.reference.server import start_in_thread

ROOT = Path(__file__).parents[2]


def sieval(*args: str, width: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    return result.exit_code, " ".join(result.output.split())  # as one line: wrapping aside


async def _listing(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": "tiny-model"}]})


async def _bad_body(request: web.Request) -> web.Response:
    return web.json_response({"error": {"message": "messages: Field required"}}, status=400)


@pytest.fixture
def chat_only() -> Iterator[str]:
    """A server that lists its model and answers only the chat route (LiteLLM's and many
    hosted gateways' shape): every other POST is a 404. On a thread of its own, as the CLI
    runs its own event loop."""
    loop = asyncio.new_event_loop()
    server = web.Application()
    server.router.add_get("/v1/models", _listing)
    server.router.add_post("/v1/chat/completions", _bad_body)
    runner = web.AppRunner(server)

    async def start() -> int:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return int(runner.addresses[0][1])

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    port = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def test_a_server_of_another_wire_is_named_before_a_run_directory(
    chat_only: str, tmp_path: Path
) -> None:
    code, said = sieval(
        "eval", "--endpoint", chat_only, "--model", "tiny-model", "--task", "arc_easy",
        "--limit", "1", "--data-dir", str(DATA), "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 2, said
    assert "answered GET /v1/models but not POST /v1/completions (HTTP 404" in said
    assert "it may not speak openai_completions" in said
    assert "it answers the routes of openai_chat: try --kind chat (openai_chat)" in said
    assert "the scoring tasks, PPL and CLP, need a completion wire" in said
    assert list(tmp_path.iterdir()) == []  # no run directory


def test_a_google_route_that_is_missing_is_not_called_a_missing_model(
    chat_only: str, tmp_path: Path
) -> None:
    code, said = sieval(
        "eval", "--endpoint", chat_only, "--model", "tiny-model", "--dialect", "google_genai",
        "--task", "gsm8k_0shot_gen", "--limit", "1", "--data-dir", str(DATA),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 2, said
    assert "has no route POST /v1beta/models/tiny-model:generateContent" in said
    assert "the route is missing, not the model" in said and "does not serve model" not in said
    assert "try --kind chat (openai_chat)" in said
    assert list(tmp_path.iterdir()) == []


def test_dry_run_refuses_a_prompt_longer_than_the_context(tmp_path: Path) -> None:
    """What the run's context check would refuse, ``--dry-run`` says and exits 2 on; with two
    tasks the fix is the overflowing task's own form, with a number of shots that fits."""
    handle = start_in_thread(port=0, max_model_len=300)
    try:
        code, said = sieval(
            "eval", "--endpoint", handle.url, "--model", "sieval-reference",
            "--task", "arc_easy_kshot_ppl:num_fewshot=5,arc_easy", "--limit", "2",
            "--data-dir", str(DATA), "--out", str(tmp_path), "--dry-run",
        )  # fmt: skip
        alone, alone_said = sieval(
            "eval", "--endpoint", handle.url, "--model", "sieval-reference",
            "--task", "arc_easy_kshot_ppl", "--num-fewshot", "5", "--limit", "2",
            "--data-dir", str(DATA), "--out", str(tmp_path),
        )  # fmt: skip
    finally:
        handle.stop()
    assert code == 2, said
    found = re.search(
        r"would refuse: sieval-reference/arc_easy_kshot_ppl: the longest prompt \(\S+, "
        r"([\d,]+) tokens\) does not fit the server's context of 300 tokens; lower the shots "
        r"with --task arc_easy_kshot_ppl:num_fewshot=(\d)",
        said,
    )
    assert found and int(found.group(1).replace(",", "")) > 300 and int(found.group(2)) < 5
    assert "sieval-reference/arc_easy:" not in said  # the 0-shot task fits
    assert "dry run: no model request was sent" in said and list(tmp_path.iterdir()) == []
    # the run itself: the same check, one task: the one-line form's flag, and no ''s
    assert alone == 2 and "task arc_easy_kshot_ppl's longest prompt" in alone_said
    assert "''s" not in alone_said and re.search(r"--num-fewshot \d ", alone_said)


def test_a_dead_port_gets_one_hint() -> None:
    code, said = sieval(
        "eval", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--task", "arc_easy",
        "--data-dir", str(DATA),
    )  # fmt: skip
    assert code == 2
    assert said.count("check that the server") == 1 and "retries" not in said
    assert "could not connect" in said


@pytest.mark.parametrize(
    ("given", "meant"),
    [("localhost:8000", "http://localhost:8000"), ("10.0.0.5:8000/v1", "http://10.0.0.5:8000/v1")],
)
def test_a_url_without_its_scheme_is_completed(given: str, meant: str) -> None:
    code, said = sieval("eval", "--endpoint", given, "--model", "m", "--task", "arc_easy")
    assert code == 2 and f"did you mean --endpoint {meant}?" in said
    _, word = sieval("eval", "--endpoint", "gemma", "--model", "m", "--task", "arc_easy")
    assert "did you mean" not in word and "write it as http://HOST:PORT" in word


def test_a_missing_model_lists_what_the_server_serves() -> None:
    handle = start_in_thread(port=0)
    try:
        code, said = sieval("eval", "--endpoint", handle.url, "--task", "arc_easy")
    finally:
        handle.stop()
    assert code == 2
    assert said.endswith(
        f"needs exactly one --model ID; {handle.url} serves sieval-reference: add --model "
        "sieval-reference"
    )


def test_resume_says_which_flag_it_ignores(tmp_path: Path) -> None:
    """``--resume`` keeps a run's directory and samples: ``--out`` and a ``--limit`` that changes
    no task's ``n`` are said to change nothing (a ``--limit`` that does is refused by the
    identity check, as before)."""
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy", "--limit", "2",
        "--data-dir", str(DATA), "--out", str(tmp_path / "runs"), "--no-preflight",
    )  # fmt: skip
    assert code == 0, said
    (run,) = (tmp_path / "runs").iterdir()
    code, said = sieval(
        "eval", "--resume", str(run), "--limit", "5", "--out", str(tmp_path / "elsewhere"),
        "--data-dir", str(DATA), "--no-preflight",
    )  # fmt: skip
    assert code == 0, said
    assert "--limit 5 does not add samples to a resumed run" in said and "(arc_easy 2)" in said
    assert f"note: --out is ignored: --resume completes {run} in its own directory" in said
    assert not (tmp_path / "elsewhere").exists()
    code, said = sieval("eval", "--resume", str(run), "--limit", "1", "--data-dir", str(DATA))
    assert code == 2 and "config.n: 2 -> 1" in said and "does not add samples" not in said


def test_a_chat_task_on_a_completion_wire_names_the_kind() -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "math500", "--limit", "1",
        "--data-dir", str(DATA),
    )  # fmt: skip
    assert code == 2 and "run it on a chat wire with --kind chat (openai_chat;" in said
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--kind", "chat", "--task", "arc_easy", "--limit", "1",
        "--data-dir", str(DATA),
    )  # fmt: skip
    assert code == 2 and "run it on a completion wire with --kind completion" in said


def test_the_library_example_runs_on_a_fresh_clone(tmp_path: Path) -> None:
    """docs/library.md's model-call example, as written: the embedded server, no port of the
    test suite's."""
    text = (ROOT / "docs" / "library.md").read_text().split("## One model call", 1)[1]
    example = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    assert "18321" not in example
    script = tmp_path / "example.py"
    script.write_text(example)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "'model': 'sieval-reference'" in done.stdout and "consumed" in done.stdout
