"""Live: the real vLLM 0.32.0 (Gemma 3 270M) listed as one replica beside two reference servers
answering to its model id (one with a fault that changes every number): the serving fingerprints
differ, and the run is refused before its first sample."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval

pytestmark = pytest.mark.live


async def test_vllm_and_two_reference_servers_are_refused(vllm_url: str, tmp_path: Path) -> None:
    """The live vLLM and two reference servers answering to its model id (one with a fault
    that changes every number): three fingerprints that differ, refused before any sample."""
    async with contextlib.AsyncExitStack() as stack:
        urls = [vllm_url]
        for fault in (None, "fingerprint-changing"):
            server = await stack.enter_async_context(
                ReferenceServer(port=0, model_name="gemma-3-270m", faults=fault)
            )
            urls.append(server.url)
        cfg = parse_config(
            f"models: [{{name: g, endpoint: [{', '.join(repr(u) for u in urls)}], "
            "model: gemma-3-270m}]\ntasks: [{name: arc_easy, n: 2}]"
        )
        with pytest.raises(ConfigError) as refused:
            await arun_eval(cfg, options(out=tmp_path / "runs", preflight=True))
    message = refused.value.message
    assert f"{vllm_url} -> {urls[1]}: engine: vllm" in message
    assert f"{vllm_url} -> {urls[2]}: engine: vllm" in message
    assert not (tmp_path / "runs").exists()
