"""The whole numbers of a reply beside its usage are bounded too (``dialects/wire/numbers.py``): a
token id is never negative, nor a per-choice token count or an echoed budget. Each case below
was believed before (a negative id carried into the Response, a negative budget into a warning);
every one is now refused as a ``ContractViolation`` naming the JSON path.

Checked elsewhere, and so not here: logprobs above 0 (``Checker.logprobs``), offsets outside the
text (``channels.located``), choice indices (``Checker.ordered``), top-k ranks (``top_k_by_id``).
``created`` and the ids of a reply are never read.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import load_fixture

from dialects import golden
from dialects import test_google_genai as google
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift, lower
from sieval.errors import ContractViolation
from sieval.ir.response import Response

CASES = golden._cases()


def _lift(dialect: str, name: str, change: Callable[[Any], None]) -> Response:
    cases, models = CASES[dialect]
    reply = copy.deepcopy(load_fixture(dialect, name, golden.VERSIONS[dialect])["reply"])
    change(reply)
    d = get_dialect(dialect)
    lowered = lower(d, cases[name], models.get(name, golden.MODEL))
    return lift(d, lowered, 200, {}, json.dumps(reply).encode())


def _refused(run: Callable[[], Any], where: str) -> None:
    with pytest.raises(ContractViolation, match="expected shape") as info:
        run()
    assert where in str(info.value)


def _vllm_prompt_id(reply: dict[str, Any]) -> None:
    choice = reply["choices"][0]
    tid = choice["prompt_token_ids"][5]
    choice["prompt_token_ids"][5] = -tid
    row = choice["prompt_logprobs"][5]
    row[str(-tid)] = row.pop(str(tid))  # the same id everywhere: only its sign is wrong


def test_a_negative_prompt_token_id_is_refused_on_vllm_native() -> None:
    _refused(
        lambda: _lift("vllm_native", "prompt_logprobs_top3_ids", _vllm_prompt_id),
        "`int` >= 0 - at `key` in `$.choices[0].prompt_logprobs[5]`",  # read before the ids
    )


def test_a_sampled_token_id_past_int32_is_refused_on_vllm_native() -> None:
    def change(reply: dict[str, Any]) -> None:
        reply["choices"][0]["token_ids"][0] = 2**40

    _refused(
        lambda: _lift("vllm_native", "prompt_logprobs_top3_ids", change),
        "at `$.choices[0].token_ids[0]`",
    )


def test_a_negative_token_id_is_refused_on_sglang_native() -> None:
    def change(reply: dict[str, Any]) -> None:
        tid = reply["output_ids"][0]
        reply["output_ids"][0] = -tid
        meta = reply["meta_info"]
        for triple in [meta["output_token_logprobs"][0], *meta["output_top_logprobs"][0]]:
            if triple[1] == tid:
                triple[1] = -tid

    _refused(lambda: _lift("sglang_native", "gen_top2", change), "`int` >= 0")


def test_a_negative_token_id_is_refused_on_google_genai() -> None:
    def change(reply: dict[str, Any]) -> None:
        result = reply["candidates"][0]["logprobsResult"]
        tid = result["chosenCandidates"][0]["tokenId"]
        result["chosenCandidates"][0]["tokenId"] = -tid
        for alternative in result["topCandidates"][0]["candidates"]:
            if alternative["tokenId"] == tid:
                alternative["tokenId"] = -tid

    _refused(lambda: google.lift_logprobs(change), "chosenCandidates[0].tokenId`")


def test_a_negative_token_count_is_refused_on_google_genai() -> None:
    _refused(
        lambda: _lift("google_genai", "plain", lambda r: r["candidates"][0].update(tokenCount=-1)),
        "at `$.candidates[0].tokenCount`",
    )


def test_a_negative_echoed_budget_is_refused_on_openai_responses() -> None:
    """The echo of ``max_output_tokens`` says how far the server shortened the budget."""
    _refused(
        lambda: _lift(
            "openai_responses",
            "clamped_max_output_tokens",
            lambda r: r.update(max_output_tokens=-3),
        ),
        "at `$.max_output_tokens`",
    )
