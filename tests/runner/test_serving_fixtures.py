"""The serving checks read real replies: the live vLLM 0.32 (bf16, prefix caching on) and SGLang
0.5.23 (float32, radix cache on) answers to the probes, recorded by
``scripts/record_serving_fixtures.py`` from ``sieval probe --checks --wire-log``. Each recorded
request is the probe's own body (rebuilt and compared here), each reply is lifted and checked
by the dialect as in a run, and the comparisons give what the live probe printed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sieval.dialects.table import lift
from sieval.ir.request import Sampling
from sieval.model import Model
from sieval.serving.finding import NEGLIGIBLE, matters
from sieval.serving.fingerprint import facts_from
from sieval.serving.observation import Observation, differ, merged, observation_of
from sieval.serving.probes import lowered, shape

FIXTURES = Path(__file__).parents[1] / "fixtures" / "serving"
SERVERS = {"vllm-0.32.0": "openai_completions", "sglang-0.5.23": "sglang_native"}
MODEL = "gemma-3-270m"


def exchanges(server: str, name: str) -> Any:
    path = FIXTURES / server / name
    if name.endswith(".gz"):
        with gzip.open(path, "rt") as file:
            return json.load(file)
    return json.loads(path.read_text())


def _text(body: dict[str, Any]) -> str:
    return str(body.get("prompt") or body.get("text"))


def _sampling(body: dict[str, Any]) -> tuple[Sampling, bool]:
    sp = body.get("sampling_params") or body
    tokens = sp.get("max_tokens", sp.get("max_new_tokens"))
    prompt = bool(body.get("echo")) or body.get("logprob_start_len", -1) >= 0
    return Sampling(temperature=0.0, max_tokens=tokens), prompt


def observed(server: str, pairs: list[dict[str, Any]]) -> list[Observation]:
    """Each recorded reply, through the probe that sent it: its body must be the probe's."""
    dialect = SERVERS[server]
    model = Model(dialect=dialect, base_url="http://unused", model_id=MODEL)
    out = []
    for pair in pairs:
        body = pair["request_body"]
        sampling, prompt = _sampling(body)
        probe = shape(model, _text(body), sampling, prompt=prompt)
        assert probe is not None
        sent = lowered(model, probe.request)
        assert sent.body == body  # the fixture is what the probe sends
        reply = msgspec.json.encode(pair["reply_body"])
        out.append(observation_of(lift(model.dialect, sent, 200, {}, reply)))
    return out


@pytest.mark.parametrize("server", SERVERS)
def test_the_fingerprint_reads_the_servers_own_words(server: str) -> None:
    facts = exchanges(server, "facts.json")
    found = facts_from(
        SERVERS[server], MODEL, facts.get("/version"), facts["/v1/models"],
        facts.get("/get_server_info"),
    )  # fmt: skip
    if server.startswith("vllm"):
        assert (found.engine, found.version, found.dtype) == ("vllm", "0.32.0", None)
        assert found.model["root"].endswith("gemma-3-270m-bf16")
        assert found.model["max_model_len"] == 4096
    else:
        assert (found.engine, found.version, found.dtype) == ("sglang", "0.5.23", "float32")
        assert found.model["attention_backend"] == "torch_native"
        assert found.model["disable_radix_cache"] is False
        assert found.model["sampling_defaults"] == "model"
        assert "random_seed" not in found.model  # volatile: never part of the fingerprint


@pytest.mark.parametrize("server", SERVERS)
def test_both_servers_repeat_a_request_sent_alone(server: str) -> None:
    first, second = observed(server, exchanges(server, "fingerprint.json"))
    diff = differ(first, second)
    assert diff.same and diff.compared > 50


def test_vllm_moves_a_cached_prompts_next_token_scores() -> None:
    """The second send reads vLLM's prefix cache (bf16): every next-token score moved."""
    first, second = observed("vllm-0.32.0", exchanges("vllm-0.32.0", "cache.json"))
    diff = differ(first, second)
    assert diff.moved == diff.compared == 46
    assert 0.1 < diff.max_abs < 0.2 and matters(diff)
    assert first.text == second.text  # the greedy text held, this time


def test_sglang_moves_a_cached_prompt_below_a_score_read_at_four_decimals() -> None:
    first, second = observed("sglang-0.5.23", exchanges("sglang-0.5.23", "cache.json"))
    diff = differ(first, second)
    assert diff.moved > 0 and diff.max_abs < NEGLIGIBLE and not matters(diff)


def test_vllm_moves_a_batched_prompts_log_likelihoods() -> None:
    """Four copies of a 550-token prompt hold more tokens than vLLM's CPU scheduler takes in a
    step (2048): the copy it split moved; the others repeat the alone request exactly."""
    batch = exchanges("vllm-0.32.0", "batch.json.gz")
    alone, *moved = observed("vllm-0.32.0", batch["kept"])
    assert batch["copies"] == 4 and len(moved) == 1
    diff = merged([differ(alone, copy) for copy in moved])
    assert diff.moved == 214 and diff.compared == 454
    assert 0.07 < diff.max_abs < 0.08 and matters(diff)


def test_sglang_float32_batches_invariantly_here() -> None:
    batch = exchanges("sglang-0.5.23", "batch.json.gz")
    alone, *copies = observed("sglang-0.5.23", batch["kept"])
    assert batch["copies"] == 4 and len(copies) == 1  # no copy moved: the first is kept
    assert differ(alone, copies[0]).same
