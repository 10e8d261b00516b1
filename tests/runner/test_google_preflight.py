"""google_genai's pre-run checks: a wrong model id, a wrong key and a closed port stop the run
(exit 2) before a run directory exists.

Google's own routes where the server has them (``GET /v1beta/models/{model}``, the embedded
server implements them as Google does); otherwise a first request of 1 output token (LiteLLM
1.108.7's proxy serves neither route: its recorded replies under
``tests/fixtures/google_genai/litellm-1.108.7/`` are replayed here, and the live suite asks it).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from google import genai
from google.genai import types
from runs import DATA, options
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.dialects.registry import get_dialect
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval
from sieval.runner.preflight import preflight
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

FIXTURES = Path(__file__).parents[1] / "fixtures" / "google_genai" / "litellm-1.108.7"
GOOGLE = get_dialect("google_genai")
KEY = "test-key-not-a-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the embedded server answers Google's models routes as Google does -------------------------


async def test_the_model_route_answers_and_says_so() -> None:
    async with ReferenceServer(port=0) as server:
        found = await preflight(
            server.url, dialect=GOOGLE, api_key=None, model_id=server.model_name
        )
    assert found.checked_by == f"GET /v1beta/models/{server.model_name}"
    assert found.served_models == [server.model_name]


async def test_the_sdk_reads_the_models_routes() -> None:
    """google-genai 3.6.1 (the oracle) parses the listing and the model as Google's."""
    async with ReferenceServer(port=0, api_key=KEY) as server:
        client = genai.Client(
            api_key=KEY, http_options=types.HttpOptions(base_url=server.url, api_version="v1beta")
        )
        model = await client.aio.models.get(model=server.model_name)
        listed = [m.name async for m in await client.aio.models.list()]
        with pytest.raises(genai.errors.ClientError) as info:
            await client.aio.models.get(model="gemini-2.5-pro")
    assert model.name == f"models/{server.model_name}"
    assert model.input_token_limit == 4096 and model.supported_actions == ["generateContent"]
    assert listed == [f"models/{server.model_name}"]
    assert info.value.code == 404 and info.value.status == "NOT_FOUND"


@pytest.mark.parametrize("route", [":generateContent", ":streamGenerateContent?alt=sse"])
async def test_generation_answers_only_to_the_served_model(route: str) -> None:
    import aiohttp

    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    async with (
        ReferenceServer(port=0) as server,
        aiohttp.ClientSession() as session,
        session.post(f"{server.url}/v1beta/models/gemini-2.5-pro{route}", json=body) as reply,
    ):
        data = await reply.json()
    assert reply.status == 404
    assert data["error"]["status"] == "NOT_FOUND"
    assert data["error"]["message"].startswith(
        "models/gemini-2.5-pro is not found for API version v1beta"
    )


@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        ("model", "does not serve model 'gemini-2.5-pro'"),
        ("key", "refused the API key (HTTP 400 on /v1beta/models/sieval-reference"),
        ("port", "cannot reach"),
    ],
)
async def test_each_wrong_setting_stops_the_run_before_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, needle: str
) -> None:
    monkeypatch.setenv("SIEVAL_GOOGLE_TEST_KEY", "wrong" if fault == "key" else KEY)
    async with ReferenceServer(port=0, api_key=KEY) as server:
        url = f"http://127.0.0.1:{_free_port()}" if fault == "port" else server.url
        model = "gemini-2.5-pro" if fault == "model" else server.model_name
        config = parse_config(
            f"""
models:
  - {{name: g, endpoint: "{url}", model: {model}, dialect: google_genai,
     api_key_env: SIEVAL_GOOGLE_TEST_KEY, timeout_s: 5}}
tasks:
  - {{name: mmlu_0shot_gen, n: 2}}
"""
        )
        with pytest.raises(ConfigError) as info:
            await arun_eval(config, options(out=tmp_path / "out", preflight=True))
    assert needle in str(info.value)
    assert "wrong" not in str(info.value).replace("wrong setting", "")
    assert not (tmp_path / "out").exists()


def test_the_one_line_form_exits_2_for_a_model_the_embedded_server_lacks(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--endpoint",
            "embedded",
            "--model",
            "gemini-2.5-pro",
            "--dialect",
            "google_genai",
            "--task",
            "mmlu_0shot_gen",
            "--limit",
            "2",
            "--out",
            str(tmp_path / "out"),
            "--data-dir",
            str(DATA),
        ],
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 2, result.output
    assert "does not serve model 'gemini-2.5-pro'" in result.output
    assert "it serves sieval-reference" in result.output
    assert not (tmp_path / "out").exists()


# -- LiteLLM's proxy: no models route, so a first request (its recorded replies) ----------------


def _recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def _proxy(generate: str) -> FakeTransport:
    """LiteLLM 1.108.7 as recorded: a FastAPI 404 on both models routes, ``generate`` (a
    fixture's name) on ``generateContent``."""

    def handle(request: HttpRequest) -> HttpReply:
        path = urlsplit(request.url).path
        if request.method == "GET":
            recorded = _recorded("models" if path == "/v1beta/models" else "model_get")
        else:
            recorded = _recorded(generate)
        reply = recorded["reply"]
        if isinstance(reply, str):
            return HttpReply(
                status=recorded["status"],
                headers={"content-type": "text/plain"},
                body=reply.encode(),
            )
        return json_reply(reply, status=recorded["status"])

    return FakeTransport(handle)


async def test_litellm_is_checked_with_a_first_request() -> None:
    assert _recorded("model_get")["reply"] == {"detail": "Not Found"}
    found = await preflight(
        "http://litellm",
        dialect=GOOGLE,
        api_key=KEY,
        model_id="gemma-3-270m",
        transport=_proxy("first_request"),
    )
    assert found.checked_by.startswith("POST /v1beta/models/gemma-3-270m:generateContent")
    assert "1 output token" in found.checked_by
    assert found.served_models == []


@pytest.mark.parametrize(
    ("generate", "needle"),
    [
        ("first_request_unknown_model", "does not serve model 'gemma-3-270m'"),
        ("first_request_wrong_key", "refused the API key (HTTP 400 on the first request: No con"),
        ("error_no_key", "no key was sent"),
    ],
)
async def test_litellm_refusals_stop_the_run(generate: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        await preflight(
            "http://litellm",
            dialect=GOOGLE,
            api_key=None if generate == "error_no_key" else KEY,
            model_id="gemma-3-270m",
            transport=_proxy(generate),
        )
    assert needle in str(info.value)


async def test_a_key_the_proxy_echoes_is_never_shown() -> None:
    """A refusal that quotes the key (as some proxies' auth errors do) is redacted."""

    def echo(request: HttpRequest) -> HttpReply:
        if request.method == "GET":
            return json_reply({"detail": "Not Found"}, status=404)
        key = request.headers["x-goog-api-key"]
        return json_reply({"error": {"message": f"Invalid model name; key {key}"}}, status=400)

    with pytest.raises(ConfigError) as info:
        await preflight(
            "http://litellm",
            dialect=GOOGLE,
            api_key="sk-echoed-secret-77",
            model_id="m",
            transport=FakeTransport(echo),
        )
    assert "does not serve model 'm'" in str(info.value)
    assert "sk-echoed-secret-77" not in str(info.value)
