"""Live: sglang_native's claims against the real SGLang 0.5.23 (``scripts/live-sglang.sh``).

The server's URL comes from ``SIEVAL_SGLANG_URL``. SGLang's serving stack is real; its kernel
package is replaced by an import-only stand-in that logs every call and raises, so each test here
also checks that the stand-in was called 0 times.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import ModuleType

import msgspec
import pytest
from conftest import load_fixture
from dialects.test_sglang_native import CASES, load_api_types

from sieval.audit.probe import run_probe
from sieval.dialects.table import lower
from sieval.model import Model

pytestmark = pytest.mark.live

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "live-sglang.sh"
MODEL = "gemma-3-270m"


@pytest.fixture(scope="session")
def sglang_url() -> str:
    """The live SGLang's base URL from SIEVAL_SGLANG_URL.

    ``scripts/live-sglang.sh setup && scripts/live-sglang.sh start`` runs one; then set
    ``SIEVAL_SGLANG_URL=$(scripts/live-sglang.sh url)``. Without it the live tests fail, unless
    SIEVAL_SKIP_LIVE=1 asks explicitly to skip them.
    """
    url = os.environ.get("SIEVAL_SGLANG_URL")
    if url:
        return url.rstrip("/")
    if os.environ.get("SIEVAL_SKIP_LIVE") == "1":
        pytest.skip("live SGLang tests skipped on request (SIEVAL_SKIP_LIVE=1)")
    pytest.fail(
        "live tests need a running SGLang: run scripts/test with SIEVAL_SGLANG_URL set, or start "
        "one with scripts/live-sglang.sh setup && scripts/live-sglang.sh start and set "
        "SIEVAL_SGLANG_URL=$(scripts/live-sglang.sh url), or set SIEVAL_SKIP_LIVE=1 to skip them "
        "explicitly"
    )


@pytest.fixture(scope="session")
def api_types() -> ModuleType:
    return load_api_types()


def standin_calls() -> int:
    """How often SGLang called the sgl_kernel stand-in (``scripts/live-sglang.sh calls``)."""
    done = subprocess.run([str(SCRIPT), "calls"], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


async def test_every_probe_case_holds_on_sglang(sglang_url: str) -> None:
    facts, results = await run_probe("sglang_native", sglang_url, MODEL)
    assert "version" not in facts  # SGLang has no /version; its version is /server_info's
    assert [m["id"] for m in facts["models"]["data"]] == [MODEL]
    failed = [(r.case, r.outcome, r.detail) for r in results if not r.passed]
    assert failed == []
    assert standin_calls() == 0


@pytest.mark.parametrize("name", ["score_top3", "candidates_letters", "gen_top2"])
async def test_live_replies_equal_the_recordings(
    sglang_url: str, api_types: ModuleType, name: str
) -> None:
    fixture = load_fixture("sglang_native", name, "0.5.23")
    async with Model(dialect="sglang_native", base_url=sglang_url, model_id=MODEL) as model:
        call = await model.call(CASES[name])
        status, raw = await model.fetch("/generate", lower(model.dialect, CASES[name], MODEL).body)
    assert call.body == fixture["request"] and status == 200
    api_types.GenerateResponse.from_json_value(raw)  # the live reply passes SGLang's contract
    got, recorded = call.result(), fixture["reply"]["meta_info"]
    if name == "score_top3":
        want = [e[0] for e in recorded["input_token_logprobs"]]
        assert [t.logprob is None for t in got.input_tokens] == [w is None for w in want]
        for t, w in zip(got.input_tokens[1:], want[1:], strict=True):
            assert abs(t.logprob - w) < 1e-4  # greedy prefill: only cache-level drift
    else:
        tokens = got.choices[0].tokens
        assert [t.token_id for t in tokens] == fixture["reply"]["output_ids"]
        if name == "candidates_letters":
            want = [e[0] for e in recorded["output_token_ids_logprobs"][0]]
            assert [
                abs(e.logprob - w) < 1e-4 for e, w in zip(tokens[0].candidates, want, strict=True)
            ] == [True] * 4
    assert standin_calls() == 0


async def test_the_served_model_id_and_the_bos(sglang_url: str) -> None:
    async with Model(dialect="sglang_native", base_url=sglang_url, model_id=MODEL) as model:
        status, info = await model.fetch("/model_info")
        assert status == 200 and info["served_model_name"] == MODEL
        _, with_bos = await model.fetch(
            "/tokenize", {"model": MODEL, "prompt": "x", "add_special_tokens": True}
        )
        _, without = await model.fetch(
            "/tokenize", {"model": MODEL, "prompt": "x", "add_special_tokens": False}
        )
        assert with_bos["tokens"][1:] == without["tokens"] and with_bos["tokens"][0] == 2
        response = await model.run(CASES["score_top3"])
    assert response.input_tokens[0].token_id == 2  # the BOS the tokenizer adds is scored first
    assert json.loads(msgspec.json.encode(response.usage))["input_tokens"] == 14
    assert standin_calls() == 0
