"""sieval probe: every claim of every probed dialect checked against the reference server."""

from __future__ import annotations

import pytest

from sieval.audit.probe import cases_for, probed_dialects, run_probe
from sieval.dialects.registry import get_dialect, registry
from sieval.errors import ConfigError
from sieval.reference import ReferenceServer


def test_every_active_dialect_has_probe_cases() -> None:
    active = sorted(i for i, r in registry().items() if r.dialect is not None)
    assert probed_dialects() == active


@pytest.mark.parametrize("dialect", probed_dialects())
async def test_every_claim_holds_on_the_reference_server(dialect: str, tmp_path) -> None:
    async with ReferenceServer(port=0) as server:
        facts, results = await run_probe(
            dialect, server.url, server.model_name, wire_log=tmp_path / "wire.jsonl"
        )
    if get_dialect(dialect).endpoint.version is not None:
        assert facts["version"] == {"version": "sieval-reference (vllm 0.32.0 wire)"}
    assert [r.case for r in results] == [c.name for c in cases_for(dialect)]
    failed = [(r.case, r.outcome, r.detail) for r in results if not r.passed]
    assert failed == []
    assert {"ok", "Refused", "ServerRejected"} <= {r.outcome for r in results}
    assert (tmp_path / "wire.jsonl").read_text().count("\n") >= 8


async def test_probe_refuses_an_unknown_dialect_and_an_unreachable_server() -> None:
    with pytest.raises(ConfigError, match="no probe cases"):
        await run_probe("no_such_dialect", "http://127.0.0.1:1", "m")
    with pytest.raises(ConfigError, match="cannot reach"):
        await run_probe("vllm_native", "http://127.0.0.1:1", "m")
