"""A proxy that rewrites the reference server's logprobs: every sample fails, none is scored.

The two lies of issue 19 (items 1 and 2): every logprob flipped positive (ARC acc_norm moved
0.2 -> 0.3 with exit 0), and a top-k that contradicts the sampled token (MMLU acc moved).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from runs import options

from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.results.document import SampleCounts
from sieval.runner import arun_eval

Lie = Callable[[Any], None]


def _positive(node: Any) -> None:
    """Every logprob made positive, wherever it is (a value, a map of them, a list of them)."""
    if isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, float):
                node[i] = abs(v)
            else:
                _positive(v)
    elif isinstance(node, dict):
        for key, v in node.items():
            if isinstance(v, float) and key in ("logprob", "logProbability"):
                node[key] = abs(v)
            elif key == "token_logprobs" and isinstance(v, list):
                node[key] = [abs(x) if isinstance(x, float) else x for x in v]
            elif key == "top_logprobs" and isinstance(v, list) and v and isinstance(v[0], dict):
                for m in v:
                    if m and all(isinstance(x, float) for x in m.values()):
                        m.update({t: abs(x) for t, x in m.items()})
                    else:
                        _positive(m)
            else:
                _positive(v)


def _contradict(reply: Any) -> None:
    """Chat: each sampled token's own entry in its top-k lowered by 3 nats."""
    for choice in reply.get("choices", []):
        for entry in (choice.get("logprobs") or {}).get("content") or []:
            for alt in entry["top_logprobs"]:
                if alt["token"] == entry["token"]:
                    alt["logprob"] -= 3.0


@asynccontextmanager
async def lying(upstream: str, lie: Lie) -> AsyncIterator[str]:
    """A proxy on a free port that forwards every request and rewrites each JSON reply."""

    async def forward(request: web.Request) -> web.Response:
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                request.method,
                upstream + request.path_qs,
                data=await request.read(),
                headers={"Content-Type": request.content_type},
            ) as reply,
        ):
            body = await reply.read()
            if reply.content_type == "application/json" and request.method == "POST":
                data = json.loads(body)
                lie(data)
                body = json.dumps(data).encode()
            return web.Response(status=reply.status, body=body, content_type=reply.content_type)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    ("lie", "kind", "task"),
    [
        (_positive, "", "{name: arc_easy_kshot_ppl, n: 3, num_fewshot: 1}"),
        (_positive, ", dialect: vllm_native", "{name: arc_easy_kshot_ppl, n: 3, num_fewshot: 1}"),
        (
            _contradict,
            ", kind: chat",
            "{name: mmlu_kshot_clp, n: 3, num_fewshot: 0, options: {top_k: 5}}",
        ),
    ],
    ids=["positive-completions", "positive-vllm_native", "top-k-contradiction-chat"],
)
async def test_a_lying_proxy_fails_every_sample(
    tmp_path: Path, lie: Lie, kind: str, task: str
) -> None:
    async with ReferenceServer(port=0) as server, lying(server.url, lie) as url:
        config = parse_config(
            f"""
models:
  - {{name: ref, endpoint: "{url}", model: {server.model_name}, timeout_s: 5{kind}}}
tasks:
  - {task}
"""
        )
        result = await arun_eval(config, options(out=tmp_path))
    entry = result.report.results[0]
    assert entry.samples == SampleCounts(total=3, scored=0, failed=3, missing=0)
    assert entry.failures == {"ContractViolation": 3}
    assert result.exit_code == 1
    name = entry.task
    records = (result.run_dir / "ref" / name / "records.jsonl").read_text().splitlines()
    for line in records:
        error = json.loads(line)["error"]
        assert "a log-probability is at most 0" in error["message"] or (
            "contradict the sampled token" in error["message"]
        )
