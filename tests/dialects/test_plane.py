"""Meta-tests of the plane and the registry: every leaf decided, owned once, every channel real."""

from __future__ import annotations

import dataclasses

import pytest

from sieval.dialects.plane import (
    ChannelRule,
    Encode,
    LeafContext,
    NoOp,
    Refuse,
    body_has_path,
    capability_outcomes,
    lower,
)
from sieval.dialects.registry import REGISTRY, get_dialect
from sieval.errors import ConfigError, Refused
from sieval.ir.capabilities import CAPABILITIES, capability_of
from sieval.ir.channels import CHANNELS, Guarantee
from sieval.ir.leaves import schema_leaves
from sieval.ir.request import Request, Sampling

ACTIVE = [row.dialect for row in REGISTRY.values() if row.dialect is not None]


def test_registry_lists_the_seven_ids() -> None:
    assert set(REGISTRY) == {
        "openai_completions",
        "openai_chat",
        "openai_responses",
        "anthropic_messages",
        "google_genai",
        "sglang_native",
        "vllm_native",
    }
    assert REGISTRY["openai_completions"].status == "active"


@pytest.mark.parametrize("dialect", ACTIVE, ids=lambda d: d.id)
def test_every_schema_leaf_is_decided(dialect) -> None:
    assert set(dialect.rows) == set(schema_leaves())
    assert set(dialect.channels) == set(CHANNELS)


@pytest.mark.parametrize("dialect", ACTIVE, ids=lambda d: d.id)
def test_self_check_catches_an_undecided_leaf(dialect) -> None:
    rows = dict(dialect.rows)
    rows.pop("sampling.seed")
    broken = dataclasses.replace(dialect, rows=rows)
    with pytest.raises(AssertionError, match="sampling.seed"):
        broken.check()


@pytest.mark.parametrize("dialect", ACTIVE, ids=lambda d: d.id)
def test_self_check_catches_a_guaranteed_channel_without_lifter(dialect) -> None:
    channels = dict(dialect.channels)
    channels["sampled_logprobs"] = ChannelRule(Guarantee.PRESENT_OR_ERROR, None)
    with pytest.raises(AssertionError, match="sampled_logprobs"):
        dataclasses.replace(dialect, channels=channels).check()


def test_each_schema_leaf_has_exactly_one_capability() -> None:
    owners = {leaf: capability_of(leaf) for leaf in schema_leaves()}
    assert set(owners.values()) == set(CAPABILITIES)


def test_capability_outcomes_follow_the_table() -> None:
    d = get_dialect("openai_completions")
    outcomes = capability_outcomes(d)
    assert outcomes["input_scoring"] == "supported"
    assert outcomes["chat"] == "no"
    rows = dict(d.rows)
    rows["input.chat.messages"] = NoOp("pretend")
    assert capability_outcomes(dataclasses.replace(d, rows=rows))["chat"] == "partial"


def test_a_consumed_leaf_must_leave_wire_evidence() -> None:
    d = get_dialect("openai_completions")
    rows = dict(d.rows)
    rows["sampling.seed"] = Encode(lambda ctx: "seed")  # claims "seed" but writes nothing
    liar = dataclasses.replace(d, rows=rows)
    with pytest.raises(Refused, match="dialect bug"):
        lower(liar, Request.completion("x", sampling=Sampling(seed=1)), "m")


def test_an_active_leaf_without_row_is_refused() -> None:
    d = get_dialect("openai_completions")
    rows = {k: v for k, v in d.rows.items() if k != "sampling.seed"}
    with pytest.raises(Refused, match="no decision"):
        lower(
            dataclasses.replace(d, rows=rows),
            Request.completion("x", sampling=Sampling(seed=1)),
            "m",
        )


def test_refusal_lists_every_refused_leaf() -> None:
    d = get_dialect("openai_completions")
    rows = dict(d.rows)
    rows["sampling.seed"] = Refuse("no seeds here")
    rows["sampling.top_p"] = Encode(lambda ctx: Refuse("never"))
    with pytest.raises(Refused) as info:
        lower(
            dataclasses.replace(d, rows=rows),
            Request.completion("x", sampling=Sampling(seed=1, top_p=0.5)),
            "m",
        )
    assert info.value.path == "sampling.top_p"
    assert "sampling.seed" in str(info.value)
    assert info.value.received == ["sampling.top_p", "sampling.seed"]


def test_noop_is_recorded_in_the_ledger() -> None:
    d = get_dialect("openai_completions")
    from sieval.ir.request import Scheduling

    lowered = lower(d, Request.completion("x", scheduling=Scheduling(timeout_s=3.0)), "m")
    assert [(x.leaf, x.outcome) for x in lowered.ledger] == [
        ("input.completion.text", "consumed"),
        ("scheduling.timeout_s", "noop"),
    ]
    assert "timeout_s" not in str(lowered.body)


def test_body_has_path() -> None:
    body = {"a": {"b": 1}, "c": None}
    assert body_has_path(body, "a.b")
    assert body_has_path(body, "c")
    assert not body_has_path(body, "a.x")
    assert not body_has_path(body, "a.b.c")


def test_binding_unknown_or_planned_dialect_fails_clearly() -> None:
    with pytest.raises(ConfigError, match="not yet implemented"):
        get_dialect("anthropic_messages")
    with pytest.raises(ConfigError, match="Did you mean 'openai_completions'"):
        get_dialect("openai_completion")


def test_encoder_sees_the_whole_request() -> None:
    seen: list[LeafContext] = []

    def spy(ctx: LeafContext) -> str:
        seen.append(ctx)
        ctx.body["seed"] = ctx.value
        return "seed"

    d = get_dialect("openai_completions")
    rows = dict(d.rows)
    rows["sampling.seed"] = Encode(spy)
    lower(
        dataclasses.replace(d, rows=rows), Request.completion("x", sampling=Sampling(seed=9)), "m"
    )
    assert seen[0].leaf == "sampling.seed" and seen[0].value == 9
    assert seen[0].body["model"] == "m"
