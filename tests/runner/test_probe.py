"""sieval probe: every vllm_native claim checked against a server speaking vLLM's wire."""

from __future__ import annotations

import pytest

from sieval.errors import ConfigError
from sieval.reference import ReferenceServer
from sieval.runner.probe import CASES, run_probe


async def test_every_vllm_native_claim_holds_on_the_reference_server(tmp_path) -> None:
    async with ReferenceServer(port=0) as server:
        facts, results = await run_probe(
            "vllm_native", server.url, server.model_name, wire_log=tmp_path / "wire.jsonl"
        )
    assert facts["version"] == {"version": "sieval-reference (vllm 0.32.0 wire)"}
    assert [r.case for r in results] == [c.name for c in CASES["vllm_native"]]
    failed = [(r.case, r.outcome, r.detail) for r in results if not r.passed]
    assert failed == []
    outcomes = {r.outcome for r in results}
    assert outcomes == {"ok", "Refused", "ServerRejected", "ContractViolation"}
    assert (tmp_path / "wire.jsonl").read_text().count("\n") >= 10


async def test_probe_refuses_an_unknown_dialect_and_an_unreachable_server() -> None:
    with pytest.raises(ConfigError, match="no probe cases"):
        await run_probe("anthropic_messages", "http://127.0.0.1:1", "m")
    with pytest.raises(ConfigError, match="cannot reach"):
        await run_probe("vllm_native", "http://127.0.0.1:1", "m")
