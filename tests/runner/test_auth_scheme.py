"""A right key sent under the wrong scheme: the refusal says how it was sent and the other scheme
to try. The reference server's ``/v1/messages`` is Bearer-only as vLLM 0.32's is (a bare 401 to
an ``x-api-key``), so anthropic_messages' default scheme is refused with the right key."""

from __future__ import annotations

from pathlib import Path

import pytest
from runs import DATA, options
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.dialects.auth_hint import rejected_key
from sieval.dialects.registry import get_dialect
from sieval.errors import ConfigError, ServerRejected
from sieval.ir.request import ChatInput, Message, Request, Sampling, TextPart
from sieval.model import Model
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer, start_in_thread
from sieval.runner import arun_eval

KEY = "sk-right-key-4242"


def _config(url: str, auth: str = "default") -> str:
    return f"""
models:
  - {{name: ref, endpoint: "{url}", model: sieval-reference, dialect: anthropic_messages,
     api_key_env: SIEVAL_AUTH_TEST_KEY, auth: {auth}, timeout_s: 10}}
tasks:
  - {{name: mmlu_0shot_gen, n: 2}}
"""


async def test_the_pre_run_check_names_the_scheme_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIEVAL_AUTH_TEST_KEY", KEY)
    async with ReferenceServer(port=0, api_key=KEY) as server:
        with pytest.raises(ConfigError) as info:
            await arun_eval(
                parse_config(_config(server.url)), options(out=tmp_path, preflight=True)
            )
        message = str(info.value)
        assert "HTTP 401" in message
        assert "`x-api-key: <key>`" in message and "auth: bearer" in message
        assert KEY not in message
        assert not tmp_path.exists() or not any(tmp_path.iterdir())  # nothing written
        # and the fix it names works
        result = await arun_eval(
            parse_config(_config(server.url, auth="bearer")),
            options(out=tmp_path, preflight=True),
        )
    assert result.report.results[0].samples.scored == 2


async def test_a_refused_request_names_the_scheme_and_the_fix() -> None:
    """Without the pre-run checks (a library call) the sample's own 401 says the same."""
    request = Request(
        input=ChatInput(messages=(Message(role="user", content=(TextPart(text="hi"),)),)),
        sampling=Sampling(max_tokens=4),
    )
    async with ReferenceServer(port=0, api_key=KEY) as server:
        async with Model(
            dialect="anthropic_messages",
            base_url=server.url,
            model_id="sieval-reference",
            api_key=KEY,
        ) as model:
            call = await model.call(request)
        assert isinstance(call.error, ServerRejected) and call.error.status == 401
        assert "`x-api-key: <key>`" in call.error.message
        assert "auth: bearer" in call.error.message
        assert KEY not in call.error.message


def test_the_hint_for_each_scheme() -> None:
    anthropic = get_dialect("anthropic_messages").auth
    openai = get_dialect("openai_chat").auth
    bearer = anthropic.with_scheme("bearer")
    assert "try auth: bearer" in rejected_key(anthropic, anthropic, key_sent=True)
    # Bearer instead of the dialect's own scheme: back to the default
    assert "try auth: default (x-api-key)" in rejected_key(bearer, anthropic, key_sent=True)
    # Bearer is already the dialect's scheme: only the key can be wrong
    hint = rejected_key(openai, openai, key_sent=True)
    assert "try" not in hint and "check the key" in hint
    assert "api_key_env: VAR" in rejected_key(openai, openai, key_sent=False)


def test_the_one_line_form_names_the_flag(tmp_path: Path) -> None:
    server = start_in_thread(port=0, api_key=KEY)
    try:
        result = CliRunner().invoke(
            app,
            [
                "eval",
                "--endpoint",
                server.url,
                "--model",
                "sieval-reference",
                "--dialect",
                "anthropic_messages",
                "--api-key-env",
                "SIEVAL_AUTH_TEST_KEY",
                "--task",
                "mmlu_0shot_gen",
                "--limit",
                "1",
                "--out",
                str(tmp_path / "out"),
                "--data-dir",
                str(DATA),
            ],
            env={"COLUMNS": "300", "SIEVAL_AUTH_TEST_KEY": KEY},
        )
    finally:
        server.stop()
    assert result.exit_code == 2, result.output
    assert "try --auth bearer" in result.output
    assert not (tmp_path / "out").exists()
