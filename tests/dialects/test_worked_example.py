"""The worked example of ``docs/dialect-layer.md``: a new OpenAI-shaped wire is one module.

``example_dialects/acme_chat.py`` is put on the dialects package's path, as a file dropped into
``sieval/dialects/`` would be; no shared file is edited. The registry finds it, the capability
matrix and ``sieval dialects --leaf`` derive from its table, it lowers requests to its own body,
and its reply declaration reads a recorded reply with its own top-k rule.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import load_fixture
from typer.testing import CliRunner

import sieval.dialects
from dialects import test_openai_chat as chat_cases
from sieval.audit.corpus import chat, user
from sieval.cli.main import app
from sieval.dialects import registry
from sieval.dialects.table import capability_outcomes, lift, lower
from sieval.errors import ContractViolation
from sieval.ir.request import Sampling, Scoring

EXAMPLES = Path(__file__).parent / "example_dialects"
MODEL = "gemma-3-270m"


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Iterator[sieval.dialects.vocabulary.Dialect]:
    monkeypatch.setattr(sieval.dialects, "__path__", [*sieval.dialects.__path__, str(EXAMPLES)])
    registry.registry.cache_clear()
    try:
        yield registry.get_dialect("acme_chat")
    finally:
        registry.registry.cache_clear()


def test_the_registry_finds_the_new_module_and_derives_its_matrix(acme) -> None:
    assert set(registry.registry()) > {"openai_chat", "acme_chat"}
    assert capability_outcomes(acme) == capability_outcomes(registry.get_dialect("openai_chat"))
    result = CliRunner().invoke(app, ["dialects", "--leaf", "sampling.seed", "--json"])
    assert {"dialect": "acme_chat", "outcome": "consumed", "detail": "written to random_seed"} in (
        json.loads(result.stdout)
    )


def test_it_lowers_to_its_own_fields(acme) -> None:
    request = chat(
        user("hi"),
        sampling=Sampling(seed=3, max_tokens=5),
        scoring=Scoring(sampled_logprobs=True, sampled_top_k=2),
    )
    body = lower(acme, request, MODEL).body
    assert (body["random_seed"], body["max_tokens"], body["top_logprobs"]) == (3, 5, 2)
    assert "seed" not in body and "max_completion_tokens" not in body
    assert lower(registry.get_dialect("openai_chat"), request, MODEL).body["top_logprobs"] == 3


def test_its_reply_declaration_reads_k_alternatives_that_openai_chat_would_refuse(acme) -> None:
    """vLLM's chat reply, its k + 1 lists cut to the k best as acme sends them: the same tokens
    and top-k on acme; refused on openai_chat, which asked for k + 1."""
    recorded = load_fixture("openai_chat", "logprobs_sampled")
    request = chat_cases.CASES["logprobs_sampled"]
    k = request.scoring.sampled_top_k
    reply = copy.deepcopy(recorded["reply"])
    for entry in reply["choices"][0]["logprobs"]["content"]:
        best = sorted(entry["top_logprobs"], key=lambda e: -e["logprob"])
        entry["top_logprobs"] = best[:k]
    body = json.dumps(reply).encode()
    read = lift(acme, lower(acme, request, MODEL), 200, {}, body)
    expected = chat_cases.run("logprobs_sampled")
    assert read.choices[0].tokens == expected.choices[0].tokens and read.dialect == "acme_chat"
    chat = registry.get_dialect("openai_chat")
    with pytest.raises(ContractViolation, match="top_logprobs=4 was sent: the list is short"):
        lift(chat, lower(chat, request, MODEL), 200, {}, body)
