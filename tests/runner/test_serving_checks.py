"""Each serving check against the reference server with its fault on (it fails, with the numbers
that moved) and off (it passes); and the pieces they are made of."""

from __future__ import annotations

import pytest

from sieval.errors import ConfigError
from sieval.ir.request import Request, Sampling, Scoring
from sieval.model import Model
from sieval.reference import ReferenceServer
from sieval.reference.numerics import SAMPLING_DEFAULTS
from sieval.serving import (
    ALL,
    DEFAULT_COPIES,
    Finding,
    Fingerprint,
    Serving,
    compare,
    needs_of,
    numerics_differ,
    parse_selection,
    run_serving_checks,
)
from sieval.serving.determinism import check_seed
from sieval.serving.observation import Observation, Sender, differ
from sieval.serving.selection import Needs

SCORE = Request.completion(
    "Q: x\nA: y",
    sampling=Sampling(temperature=0.0, max_tokens=1),
    scoring=Scoring(input_logprobs=True),
)
GREEDY = Request.completion("Q: 1+1\nA:", sampling=Sampling(temperature=0.0, max_tokens=64))
SAMPLED = Request.completion(
    "Q: 1+1\nA:", sampling=Sampling(temperature=0.7, max_tokens=64, seed=3)
)
RUN = (("arc", SCORE), ("gsm8k", GREEDY), ("ifeval", SAMPLED))


async def checks(
    fault: str | None, dialect: str = "openai_completions", chosen: tuple[str, ...] = ALL
) -> Serving:
    needs = Needs({c: [] for c in chosen}, RUN)
    async with (
        ReferenceServer(faults=fault) as server,
        Model(dialect=dialect, base_url=server.url, model_id=server.model_name) as m,
    ):
        return await run_serving_checks(m, needs)


def found(serving: Serving, check: str) -> Finding:
    return next(f for f in serving.findings if f.check == check)


@pytest.fixture(scope="module")
async def clean() -> Serving:
    return await checks(None, "vllm_native")


async def test_every_check_passes_on_a_server_without_faults(clean: Serving) -> None:
    """vllm_native can send every sampling field, so even the defaults are proven, not guessed."""
    assert {f.check: f.outcome for f in clean.findings} == {
        "determinism": "passed",
        "batch_invariance": "passed",
        "cache_invariance": "passed",
        "seed_repeat": "passed",
        "server_defaults": "passed",
        "tool_calls": "skipped",  # vllm_native carries no function tools
        "tool_prompt": "skipped",
    }
    assert not clean.warnings("m")
    assert clean.fingerprint is not None and clean.fingerprint.noise == 0.0
    assert clean.fingerprint.engine == "sieval-reference" and clean.fingerprint.values
    batch = found(clean, "batch_invariance")
    assert batch.evidence["moved"] == 0 and batch.evidence["compared"] > 1000
    assert batch.cost.requests == 1 + DEFAULT_COPIES == 8  # alone, then the copies
    assert clean.cost.requests == sum(f.cost.requests for f in clean.findings)
    assert clean.cost.prompt_tokens > 0 and clean.cost.unreported == 0


async def test_a_runs_overrides_do_not_reach_the_probes(clean: Serving) -> None:
    """``--gen-kwargs temperature=0.7,max_tokens=5`` is the run's, not the probes': with it
    applied to them the greedy probes were sampled, server_defaults failed on a clean server and
    the numerics fingerprint changed from run to run."""
    needs = Needs({c: [] for c in ALL}, RUN)
    overrides = {"sampling.temperature": 0.7, "sampling.max_tokens": 5}
    async with (
        ReferenceServer() as server,
        Model(
            dialect="vllm_native",
            base_url=server.url,
            model_id=server.model_name,
            request_overrides=overrides,
        ) as m,
    ):
        serving = await run_serving_checks(m, needs)
        assert m.request_overrides == overrides  # the run's own requests still get them
    assert {f.check: f.outcome for f in serving.findings} == {
        f.check: f.outcome for f in clean.findings
    }
    assert serving.fingerprint is not None and clean.fingerprint is not None
    assert serving.fingerprint.digest == clean.fingerprint.digest


async def test_batch_variant_fails_the_batch_check_only() -> None:
    serving = await checks("batch-variant")
    batch = found(serving, "batch_invariance")
    assert batch.outcome == "failed" and batch.matters
    assert batch.evidence["moved"] > 0 and batch.evidence["max_abs"] > 0.1
    assert "concurrent copies" in batch.detail and "nats" in batch.detail
    assert "concurrency 1" in batch.meaning
    assert found(serving, "determinism").outcome == "passed"
    assert found(serving, "cache_invariance").outcome == "passed"
    assert any("batch invariance failed" in w for w in serving.warnings("m"))


async def test_cache_variant_fails_the_cache_check_only() -> None:
    serving = await checks("cache-variant")
    cache = found(serving, "cache_invariance")
    assert cache.outcome == "failed" and cache.matters
    assert cache.evidence["moved"] > 0 or not cache.evidence["same_text"]
    assert "second send" in cache.detail
    assert found(serving, "batch_invariance").outcome == "passed"  # it scores the prompt
    assert found(serving, "determinism").outcome == "passed"


async def test_a_nondeterministic_server_fails_determinism_and_the_seed() -> None:
    serving = await checks("nondeterministic")
    assert found(serving, "determinism").outcome == "failed"
    seed = found(serving, "seed_repeat")
    # the text repeats by chance now and then; the sampled tokens' numbers never do
    assert seed.outcome == "failed" and seed.evidence["moved"] > 0
    assert seed.evidence["first"] and seed.evidence["second"]
    assert serving.fingerprint is not None and serving.fingerprint.noise != 0.0
    # a comparison on a server that does not repeat itself says nothing of its cause
    batch = found(serving, "batch_invariance")
    assert batch.outcome == "passed" or "not proven to be its cause" in batch.detail


async def test_sampling_defaults_are_found_where_the_wire_can_send_the_field() -> None:
    serving = await checks("sampling-default", "vllm_native")
    defaults = found(serving, "server_defaults")
    assert defaults.outcome == "failed" and defaults.matters
    differs = {k for k, v in defaults.evidence.items() if v["status"] == "differs"}
    # every field the fault fills in, and only those
    assert {leaf.rpartition(".")[2] for leaf in differs} == set(SAMPLING_DEFAULTS) - {"temperature"}
    assert defaults.evidence["sampling.frequency_penalty"]["status"] == "same"
    assert "--generation-config vllm" not in defaults.meaning  # not a vLLM: no vLLM flag
    assert "request_defaults" in defaults.meaning


async def test_on_a_wire_that_cannot_send_a_field_the_defaults_check_says_so() -> None:
    serving = await checks("sampling-default", "openai_completions")
    evidence = found(serving, "server_defaults").evidence
    assert evidence["sampling.top_p"]["status"] == "differs"  # sent explicitly: proven
    assert evidence["sampling.top_k"]["status"] == "unverified"  # OpenAI's wire has no top_k
    assert "cannot send top_k" in evidence["sampling.top_k"]["why"]
    assert evidence["sampling.top_p"]["tasks"] == ["ifeval"]  # greedy tasks cannot meet it


async def test_a_greedy_and_scoring_run_is_settled_from_its_requests() -> None:
    needs = Needs({"server_defaults": []}, (("arc", SCORE), ("gsm8k", GREEDY)))
    async with (
        ReferenceServer() as server,
        Model(dialect="vllm_native", base_url=server.url, model_id=server.model_name) as m,
    ):
        serving = await run_serving_checks(m, needs)
    evidence = found(serving, "server_defaults").evidence
    assert evidence["sampling.top_p"]["status"] == "cannot change"
    assert "sampling.temperature" not in evidence  # both send it
    assert evidence["options.repetition_penalty"]["status"] == "same"  # greedy can meet it


async def test_a_changed_fingerprint_is_the_same_engine_with_other_numbers(clean: Serving) -> None:
    other = await checks("fingerprint-changing", "vllm_native", ("fingerprint",))
    assert clean.fingerprint is not None and other.fingerprint is not None
    assert other.findings == []  # the fingerprint alone
    assert other.fingerprint.digest != clean.fingerprint.digest
    lines = compare(clean.fingerprint, other.fingerprint)
    assert len(lines) == 1 and lines[0].startswith("numerics: ")
    assert "log-probabilities moved, up to" in lines[0]
    assert compare(clean.fingerprint, clean.fingerprint) == []


def test_numerics_differ_only_beyond_the_servers_own_noise() -> None:
    a = Fingerprint(probe="p", values={"x": -1.0, "y": -2.0}, text="t", digest="d1", noise=0.01)
    b = Fingerprint(probe="p", values={"x": -1.005, "y": -2.0}, text="t", digest="d2")
    assert numerics_differ(a, b) is None  # within a's noise
    c = Fingerprint(probe="p", values={"x": -1.2, "y": -2.0}, text="t", digest="d3")
    assert "1 of 2" in str(numerics_differ(a, c)) and "0.2" in str(numerics_differ(a, c))
    d = Fingerprint(probe="q", values={"x": -9.0}, text="t", digest="d4")
    assert numerics_differ(a, d) is None  # another probe request: not comparable
    assert "not comparable" in compare(a, d)[0]
    e = Fingerprint(probe="p", values=dict(a.values), text="u", digest="d5")
    assert "greedy text changed" in str(numerics_differ(a, e))


def test_compare_names_engine_dtype_and_model_changes() -> None:
    a = Fingerprint(engine="vllm", version="0.32.0", model={"root": "m"}, dtype=None)
    b = Fingerprint(engine="sglang", version="0.5.23", model={"root": "m"}, dtype="float32")
    assert compare(a, b) == ["engine: vllm 0.32.0 -> sglang 0.5.23", "dtype: ? -> float32"]
    c = Fingerprint(engine="vllm", version="0.32.0", model={"root": "m2"})
    assert compare(a, c) == ['model.root: "m" -> "m2"']


def test_differ_counts_moved_values_on_shared_labels() -> None:
    a = Observation({"p1": -1.0, "p2": -2.0, "o0": -0.5}, "abc")
    b = Observation({"p1": -1.0, "p2": -2.25, "o1": -0.1}, "abd")
    diff = differ(a, b)
    assert (diff.compared, diff.moved, diff.max_abs, diff.where) == (2, 1, 0.25, "p2")
    assert not diff.same_text and not diff.same


class _RepeatsTextOnly(Sender):
    """A sender whose two sends give the same text with other numbers: what a nondeterministic
    kernel gives now and then when 16 sampled tokens happen to repeat."""

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.sends = 0

    async def one(self, request: Request) -> Observation:
        self.sends += 1
        return Observation({"out 0 ' a'": -0.5 - 0.1 * self.sends}, " a b")


async def test_a_seeded_text_that_repeats_by_chance_with_moved_numbers_fails() -> None:
    async with Model(dialect="vllm_native", base_url="http://127.0.0.1:9", model_id="m") as model:
        sender = _RepeatsTextOnly(model)
        seed = await check_seed(sender)
    assert sender.sends == 2
    assert seed.outcome == "failed" and seed.matters
    assert seed.evidence["same_text"] and seed.evidence["moved"] == 1


@pytest.mark.parametrize(
    ("concurrency", "expected"),
    [
        (1, ["fingerprint", "determinism", "batch_invariance", "cache_invariance", "seed_repeat",
             "server_defaults"]),
        (4, ["fingerprint", "determinism", "batch_invariance", "cache_invariance", "seed_repeat",
             "server_defaults"]),
    ],
)  # fmt: skip
def test_needs_follow_the_runs_requests(concurrency: int, expected: list[str]) -> None:
    needs = needs_of(RUN, concurrency)
    assert list(needs.checks) == expected
    assert needs.tasks("seed_repeat") == ["ifeval"]
    assert needs.tasks("determinism") == ["arc", "gsm8k"]
    # scoring at concurrency 1 never batches; greedy generation still can (other clients)
    assert needs.tasks("batch_invariance") == (["gsm8k"] if concurrency == 1 else ["arc", "gsm8k"])


def test_a_scoring_run_at_concurrency_1_needs_no_batch_check_nor_seed() -> None:
    needs = needs_of((("arc", SCORE),), 1)
    assert list(needs.checks) == ["fingerprint", "determinism", "cache_invariance",
                                  "server_defaults"]  # fmt: skip


def test_the_selection_names_the_known_checks() -> None:
    assert parse_selection("auto") is None and parse_selection("off") == ()
    assert parse_selection("all") == ALL
    assert parse_selection("batch-invariance,seed_repeat") == ("batch_invariance", "seed_repeat")
    with pytest.raises(ConfigError, match="unknown check 'batch'.*batch_invariance"):
        parse_selection("batch")
