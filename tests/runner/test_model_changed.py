"""The model a server reports is pinned by its first reply: a proxy that switches models mid-run
fails the samples after the switch (named in the error and the report), never merges them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from runs import options

from sieval.plan.config import EvalConfig, parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval

SWITCH_AT = 3
"""Generation replies after this many name another model."""


class Proxy:
    """A proxy in front of an upstream server: its JSON replies to POSTs after the first
    ``switch_at`` report ``other-model`` in ``field`` (a load balancer that moved to another
    deployment); with ``fail_after`` set, POSTs after that many get a 500 instead."""

    def __init__(self, upstream: str, field: str, switch_at: int = SWITCH_AT) -> None:
        self.upstream, self.field, self.switch_at = upstream, field, switch_at
        self.fail_after: int | None = None
        self.posts = 0

    def reset(self, _run_dir: Path | None = None) -> None:
        """Count from here (``on_run_dir``: the pre-run checks' requests are not counted)."""
        self.posts = 0

    async def forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        if request.method == "POST":
            self.posts += 1
            if self.fail_after is not None and self.posts > self.fail_after:
                return web.json_response({"error": {"message": "down"}}, status=500)
        async with (
            ClientSession() as session,
            session.request(
                request.method, self.upstream + request.path_qs, data=body, headers=headers
            ) as reply,
        ):
            data, kind, status = await reply.read(), reply.content_type, reply.status
        ok = request.method == "POST" and kind == "application/json" and status == 200
        if ok and self.posts > self.switch_at:
            payload = json.loads(data)
            payload[self.field] = "other-model"
            data = json.dumps(payload).encode()
        return web.Response(body=data, status=status, content_type=kind)


@contextlib.asynccontextmanager
async def serving(proxy: Proxy) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy.forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def _config(url: str, model: str, dialect: str = "openai_chat") -> EvalConfig:
    return parse_config(
        f"""
concurrency: 1
models:
  - {{name: ref, endpoint: "{url}", model: {model}, dialect: {dialect},
     concurrency_limit: 1, timeout_s: 10, retries: 0}}
tasks:
  - {{name: mmlu_0shot_gen, n: 6}}
"""
    )


@pytest.mark.parametrize(
    ("dialect", "field"), [("openai_chat", "model"), ("google_genai", "modelVersion")]
)
async def test_a_model_switch_mid_run_fails_the_samples_after_it(
    tmp_path: Path, dialect: str, field: str
) -> None:
    async with ReferenceServer(port=0) as server:
        proxy = Proxy(server.url, field)
        async with serving(proxy) as url:
            result = await arun_eval(
                _config(url, server.model_name, dialect),
                options(out=tmp_path, on_run_dir=proxy.reset),
            )
    entry = result.report.results[0]
    assert entry.samples.scored == SWITCH_AT
    assert entry.failures == {"ContractViolation": 6 - SWITCH_AT}
    assert result.exit_code == 1
    message = entry.failure_examples[0].message
    for name in ("other-model", server.model_name, "changed mid-run"):
        assert name in message
    assert entry.provenance.reported_models == sorted([server.model_name, "other-model"])


async def test_a_resume_keeps_the_model_the_run_began_with(tmp_path: Path) -> None:
    """The pin survives a resume: the first session scores three samples (the server then goes
    down), the resumed session's replies name another model, and those samples fail."""
    async with ReferenceServer(port=0) as server:
        proxy = Proxy(server.url, "model", switch_at=10**6)
        proxy.fail_after = SWITCH_AT
        async with serving(proxy) as url:
            config = _config(url, server.model_name)
            first = await arun_eval(config, options(out=tmp_path, on_run_dir=proxy.reset))
            assert first.report.results[0].samples.scored == SWITCH_AT
            proxy.fail_after, proxy.switch_at = None, 0
            resumed = await arun_eval(config, options(out=tmp_path, resume=first.run_dir))
    entry = resumed.report.results[0]
    assert entry.samples.scored == SWITCH_AT
    assert entry.failures == {"ContractViolation": 6 - SWITCH_AT}
    assert "other-model" in entry.failure_examples[0].message


def test_the_terminal_says_the_model_changed() -> None:
    from sieval.cli.report import render_failures
    from sieval.results.document import (
        Report,
        RunInfo,
        SampleCounts,
        UnitProvenance,
        UnitResult,
    )

    report = Report(
        run=RunInfo(identity="sha256:0"),
        results=[
            UnitResult(
                model="ref",
                task="mmlu_0shot_gen",
                headline="acc",
                samples=SampleCounts(total=3, scored=0, failed=3, missing=0),
                failures={"ContractViolation": 3},
                provenance=UnitProvenance(
                    requested_model="sieval-reference",
                    reported_models=["other-model", "sieval-reference"],
                    dialect="openai_chat",
                ),
            )
        ],
    )
    (line,) = render_failures(report)
    assert "model changed mid-run" in line.plain
    assert "other-model, sieval-reference" in line.plain
