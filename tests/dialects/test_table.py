"""The table machinery: every leaf decided, decisions independent of order, writes merged or
refused, rules and unset rows explicit, evidence checked (list indices included)."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sieval.dialects.registry import get_dialect, registry
from sieval.dialects.table import capability_outcomes, decide, describe_leaf, lower
from sieval.dialects.vocabulary import (
    Auth,
    Demand,
    Dialect,
    Encode,
    Endpoint,
    Evidence,
    Excludes,
    Field,
    Fill,
    Group,
    GroupInput,
    NoOp,
    Refuse,
    Requires,
    Write,
)
from sieval.errors import ConfigError, Refused
from sieval.ir.capabilities import CAPABILITIES, capability_of
from sieval.ir.leaves import active_leaves, schema_leaves
from sieval.ir.request import (
    ChatInput,
    CompletionInput,
    ImagePart,
    Message,
    Request,
    Sampling,
    Scheduling,
    Scoring,
    StructuredOutput,
    TextPart,
)
from sieval.ir.validate import validate

OC = get_dialect("openai_completions")
VN = get_dialect("vllm_native")
ACTIVE = [OC, VN]
SEVEN = {
    "openai_completions",
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "google_genai",
    "sglang_native",
    "vllm_native",
}


def with_rows(dialect: Dialect, **changes: Any) -> Dialect:
    rows = dict(dialect.rows)
    for key, row in changes.items():
        key = key.replace("__", ".")
        if row is None:
            rows.pop(key)
        else:
            rows[key] = row
    return dataclasses.replace(dialect, rows=rows)


# -- the registry -------------------------------------------------------------------------------


def test_registry_finds_all_seven_dialect_modules() -> None:
    known = registry()
    assert set(known) >= SEVEN  # a dialect module added later is found too, without an edit here
    assert all(r.dialect.id == id_ and r.status == "active" for id_, r in known.items())


def test_binding_an_unknown_dialect_fails_clearly() -> None:
    with pytest.raises(ConfigError, match="unknown dialect 'future_wire'"):
        get_dialect("future_wire")
    with pytest.raises(ConfigError, match="Did you mean 'openai_completions'"):
        get_dialect("openai_completion")


# -- the import-time self-check -----------------------------------------------------------------


@pytest.mark.parametrize("dialect", ACTIVE, ids=lambda d: d.id)
def test_every_schema_leaf_resolves_to_one_row(dialect: Dialect) -> None:
    for leaf in schema_leaves():
        assert dialect.row_for(leaf) is not None


def test_self_check_names_an_undecided_leaf() -> None:
    broken = with_rows(OC, sampling__seed=None)
    with pytest.raises(AssertionError, match="leaf 'sampling.seed' has no row"):
        broken.check()


def test_self_check_names_a_row_for_no_leaf_and_a_group_on_one_leaf() -> None:
    typo = with_rows(OC, sampling__sead=Field("seed"))
    with pytest.raises(AssertionError, match="'sampling.sead' matches no schema leaf"):
        typo.check()
    group = with_rows(OC, sampling__seed=Group(lambda g: {}, ("seed",), "x"))
    with pytest.raises(AssertionError, match="must be a prefix"):
        group.check()


def test_self_check_names_unknown_rule_unset_and_channel_names() -> None:
    rule = dataclasses.replace(OC, rules=(Excludes("sampling.seed", "sampling.sead", "x"),))
    with pytest.raises(AssertionError, match="'sampling.sead', not a schema leaf"):
        rule.check()
    unset = dataclasses.replace(OC, unset={"sampling.max_token": Demand("x")})
    with pytest.raises(AssertionError, match="unknown leaf 'sampling.max_token'"):
        unset.check()
    channel = dataclasses.replace(OC, channels={"logprobs": OC.guarantee("usage")})
    with pytest.raises(AssertionError, match="unknown channel 'logprobs'"):
        channel.check()


def test_an_exact_row_wins_over_a_prefix_row() -> None:
    d = with_rows(OC, **{"sampling__*": Refuse("no sampling"), "sampling__top_p": None})
    assert isinstance(d.row_for("sampling.top_p"), Refuse)
    assert d.row_for("sampling.seed") == Field("seed")
    assert lower(d, Request.completion("x", sampling=Sampling(seed=3)), "m").body["seed"] == 3


# -- capabilities and descriptions ----------------------------------------------------------------


def test_each_schema_leaf_has_exactly_one_capability() -> None:
    owners = {leaf: capability_of(leaf) for leaf in schema_leaves()}
    assert set(owners.values()) == set(CAPABILITIES)


def test_capability_outcomes_follow_the_table() -> None:
    outcomes = capability_outcomes(OC)
    assert outcomes["input_scoring"] == "supported" and outcomes["chat"] == "no"
    partial = with_rows(OC, input__chat__messages=NoOp("pretend"))
    assert capability_outcomes(partial)["chat"] == "partial"
    assert capability_outcomes(VN)["token_ids"] == "supported"
    assert capability_outcomes(OC)["token_ids"] == "no"


def test_describe_leaf_reads_the_row() -> None:
    assert describe_leaf(OC, "sampling.seed") == ("consumed", "written to seed")
    outcome, detail = describe_leaf(OC, "sampling.top_k")
    assert outcome == "refused" and "vllm_native" in detail
    outcome, detail = describe_leaf(VN, "scoring.input_logprobs")
    assert outcome == "encoded" and "prompt_logprobs" in detail and "row scoring.*" in detail
    assert describe_leaf(OC, "options.min_p")[0] == "refused"
    with pytest.raises(KeyError):
        describe_leaf(OC, "sampling.sead")


# -- writes, conflicts, evidence ------------------------------------------------------------------


def test_a_consumed_leaf_must_leave_wire_evidence() -> None:
    liar = with_rows(OC, sampling__seed=Encode(lambda leaf: Evidence("seed"), ("seed",), "x"))
    with pytest.raises(Refused, match="dialect bug"):
        lower(liar, Request.completion("x", sampling=Sampling(seed=1)), "m")


def test_a_write_outside_the_declared_keys_is_a_dialect_bug() -> None:
    stray = with_rows(OC, sampling__seed=Encode(lambda leaf: Write("sneaky", 1), ("seed",), "x"))
    with pytest.raises(Refused, match="outside its declared keys"):
        lower(stray, Request.completion("x", sampling=Sampling(seed=1)), "m")


def test_an_active_path_that_is_no_schema_leaf_is_refused() -> None:
    with pytest.raises(Refused, match="no decision"):
        decide(OC, Request.completion("x"), "m", {"sampling.sead": 1})


def test_refusal_lists_every_refused_leaf_and_keeps_the_ledger() -> None:
    d = with_rows(
        OC,
        sampling__seed=Refuse("no seeds here"),
        sampling__top_p=Encode(lambda leaf: Refuse("never"), ("top_p",), "x"),
    )
    with pytest.raises(Refused) as info:
        lower(d, Request.completion("x", sampling=Sampling(seed=1, top_p=0.5)), "m")
    assert info.value.path == "sampling.top_p"  # schema order: top_p before seed
    assert info.value.received == ["sampling.top_p", "sampling.seed"]
    assert "sampling.seed" in str(info.value)
    assert [(x.leaf, x.outcome) for x in info.value.ledger] == [
        ("input.completion.text", "consumed"),
        ("sampling.top_p", "refused"),
        ("sampling.seed", "refused"),
    ]


def test_noop_is_recorded_in_the_ledger_and_sends_nothing() -> None:
    lowered = lower(OC, Request.completion("x", scheduling=Scheduling(timeout_s=3.0)), "m")
    assert [(x.leaf, x.outcome) for x in lowered.ledger] == [
        ("input.completion.text", "consumed"),
        ("scheduling.timeout_s", "noop"),
    ]
    assert lowered.ledger[1].reason and "timeout" not in str(lowered.body)


MIXED_TOP_K = Request.completion(
    "x", scoring=Scoring(input_logprobs=True, input_top_k=2, sampled_logprobs=True, sampled_top_k=5)
)


def test_two_values_for_one_body_field_refuse_the_later_leaf_naming_the_earlier() -> None:
    with pytest.raises(Refused) as info:
        lower(OC, MIXED_TOP_K, "m")
    assert info.value.path == "scoring.sampled_logprobs"
    assert "scoring.input_logprobs already wrote 2 to body field 'logprobs'" in str(info.value)
    assert "needs 5" in str(info.value)


def test_equal_writes_agree() -> None:
    same = Request.completion(
        "x",
        scoring=Scoring(input_logprobs=True, input_top_k=3, sampled_logprobs=True, sampled_top_k=3),
    )
    lowered = lower(OC, same, "m")
    assert lowered.body["logprobs"] == 3 and lowered.body["echo"] is True
    assert {d.leaf: d.path for d in lowered.ledger}["scoring.sampled_top_k"] == "logprobs"


def test_the_known_order_defect_is_gone() -> None:
    """input + sampled logprobs with top-k 5 once flipped with the order of two encoders."""
    request = Request.completion(
        "x", scoring=Scoring(input_logprobs=True, sampled_logprobs=True, sampled_top_k=5)
    )
    active = active_leaves(request)
    outcomes = set()
    for order in (list(active), list(reversed(active))):
        reordered = {k: active[k] for k in order}
        try:
            decide(OC, request, "m", reordered)
            outcomes.add("accepted")
        except Refused as exc:
            outcomes.add(f"refused {exc.path}")
    assert outcomes == {"refused scoring.sampled_logprobs"}


def test_a_rule_refusal_is_never_discarded() -> None:
    """echo + a FIM suffix: the refusal once got lost inside the input-logprobs encoder."""
    request = Request(
        input=CompletionInput(text="x", suffix="y"), scoring=Scoring(input_logprobs=True)
    )
    with pytest.raises(Refused, match="FIM suffix") as info:
        lower(OC, request, "m")
    assert info.value.path == "scoring.input_logprobs"


def test_sampled_top_k_is_decided_as_sampled_not_as_input() -> None:
    lowered = lower(
        VN, Request.completion("x", scoring=Scoring(sampled_logprobs=True, sampled_top_k=4)), "m"
    )
    assert lowered.body["logprobs"] == 4 and "prompt_logprobs" not in lowered.body


def test_requires_and_excludes_rules() -> None:
    with pytest.raises(Refused, match="only valid with input scoring") as info:
        lower(OC, Request.completion("x", sampling=Sampling(max_tokens=0)), "m")
    assert info.value.path == "sampling.max_tokens"
    ok = lower(
        OC,
        Request.completion(
            "x", sampling=Sampling(max_tokens=0), scoring=Scoring(input_logprobs=True)
        ),
        "m",
    )
    assert ok.body["max_tokens"] == 0


def test_unset_rows_fill_with_a_ledger_entry_or_demand() -> None:
    filled = dataclasses.replace(
        OC, unset={"sampling.max_tokens": Fill("max_tokens", 16, "the wire needs it")}
    )
    lowered = lower(filled, Request.completion("x"), "m")
    assert lowered.body["max_tokens"] == 16
    entry = lowered.ledger[-1]
    assert (entry.leaf, entry.outcome, entry.path) == (
        "sampling.max_tokens",
        "defaulted",
        "max_tokens",
    )
    assert "16" in entry.reason and "the wire needs it" in entry.reason
    assert (
        lower(filled, Request.completion("x", sampling=Sampling(max_tokens=4)), "m").body[
            "max_tokens"
        ]
        == 4
    )
    demanding = dataclasses.replace(
        OC, unset={"sampling.max_tokens": Demand("set sampling.max_tokens")}
    )
    with pytest.raises(Refused, match=r"sampling.max_tokens \(unset\): set sampling.max_tokens"):
        lower(demanding, Request.completion("x"), "m")


def test_a_group_that_forgets_a_leaf_is_refused() -> None:
    d = with_rows(OC, **{"scoring__*": Group(lambda g: {}, ("echo",), "forgetful")})
    with pytest.raises(Refused, match="returned no decision"):
        lower(d, Request.completion("x", scoring=Scoring(input_logprobs=True)), "m")


# -- element leaves and list-aware paths ---------------------------------------------------------


def _chat_group(group: GroupInput) -> dict[str, Any]:
    out: dict[str, Any] = {"input.chat.messages": Evidence("messages")}
    for i, message in enumerate(group.value.messages):
        out[f"input.chat.messages[{i}]"] = Write(f"messages[{i}].role", message.role)
        for j, part in enumerate(message.content):
            at = f"input.chat.messages[{i}].content[{j}]"
            if isinstance(part, TextPart):
                out[f"{at}.text"] = Write(
                    f"messages[{i}].content[{j}]", {"type": "text", "text": part.text}
                )
            elif isinstance(part, ImagePart):
                out[f"{at}.image"] = Write(
                    f"messages[{i}].content[{j}].image_url",
                    {"url": part.url},
                    also={f"messages[{i}].content[{j}].type": "image_url"},
                )
                out[f"{at}.image.url"] = Evidence(f"messages[{i}].content[{j}].image_url.url")
    return out


CHAT = with_rows(OC, **{"input__chat__*": Group(_chat_group, ("messages",), "messages")})
CONVERSATION = Request(
    input=ChatInput(
        messages=(
            Message(role="system", content=(TextPart(text="be brief"),)),
            Message(
                role="user",
                content=(TextPart(text="what is this?"), ImagePart(url="http://x/cat.png")),
            ),
        )
    )
)


def test_group_rows_decide_each_element_with_indexed_paths() -> None:
    lowered = lower(CHAT, CONVERSATION, "m")
    assert lowered.body["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "be brief"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": "http://x/cat.png"}},
            ],
        },
    ]
    ledger = {d.leaf: d.path for d in lowered.ledger}
    assert ledger["input.chat.messages[1].content[1].image"] == "messages[1].content[1].image_url"
    assert ledger["input.chat.messages[1].content[1].image.url"] == (
        "messages[1].content[1].image_url.url"
    )
    assert [d.leaf for d in lowered.ledger][:3] == [
        "input.chat.messages",
        "input.chat.messages[0]",
        "input.chat.messages[0].content[0].text",
    ]


def test_an_exact_row_wins_over_its_groups_outcome_for_that_leaf() -> None:
    """The group decides every element (names included, as ``parts.conversation`` does); the
    leaf with its own row is decided by that row, and no dialect has to drop keys by hand."""

    def naming(group: GroupInput) -> dict[str, Any]:
        out = _chat_group(group)
        for i in range(len(group.value.messages)):
            out[f"input.chat.messages[{i}].name"] = Write(f"messages[{i}].name", "group's")
        return out

    refusing = with_rows(
        OC,
        **{
            "input__chat__*": Group(naming, ("messages",), "messages"),
            "input__chat__messages__name": Refuse("no names on this wire"),
        },
    )
    named = Message(role="system", content=(TextPart(text="be brief"),), name="ann")
    request = Request(input=ChatInput(messages=(named,)))
    with pytest.raises(Refused) as info:
        lower(refusing, request, "m")
    ledger = {d.leaf: d for d in info.value.ledger}
    assert ledger["input.chat.messages.name"].reason == "no names on this wire"
    assert "input.chat.messages[0].name" not in ledger
    assert [d.leaf for d in info.value.ledger if d.outcome == "refused"] == [
        "input.chat.messages.name"
    ]
    # a leaf outside the group's prefix is still a dialect bug, exact row or not
    stray = with_rows(
        OC,
        **{
            "input__chat__*": Group(
                lambda g: {**_chat_group(g), "sampling.seed": Write("seed", 1)},
                ("messages",),
                "messages",
            )
        },
    )
    with pytest.raises(Refused, match="not one of its leaves"):
        lower(stray, CONVERSATION, "m")


def test_a_list_with_a_hole_is_a_dialect_bug() -> None:
    def skips(group: GroupInput) -> dict[str, Any]:
        out = _chat_group(group)
        out["input.chat.messages[1]"] = Write(
            "messages[2].role", "user"
        )  # leaves messages[1] empty
        return {k: v for k, v in out.items() if not k.startswith("input.chat.messages[1].")} | {
            "input.chat.messages.content.text": NoOp("x"),
            "input.chat.messages.content.image": NoOp("x"),
            "input.chat.messages.content.image.url": NoOp("x"),
        }

    d = with_rows(OC, **{"input__chat__*": Group(skips, ("messages",), "messages")})
    with pytest.raises(Refused, match=r"list slots \['messages\[1\]'\] were never written"):
        lower(d, CONVERSATION, "m")


def test_prefix_rows_refuse_every_leaf_under_them() -> None:
    with pytest.raises(Refused) as info:
        lower(OC, CONVERSATION, "m")
    assert info.value.path == "input.chat.messages"
    assert "input.chat.messages.content.image" in str(info.value)


# -- wire facts -----------------------------------------------------------------------------------


def test_endpoint_paths_and_auth_headers() -> None:
    google = Endpoint(
        "/v1beta/models/{model}:generateContent",
        stream_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
        model_field=None,
    )
    assert (
        google.url_path("gemini 2/x", stream=False)
        == "/v1beta/models/gemini%202%2Fx:generateContent"
    )
    assert google.url_path("g", stream=True).endswith(":streamGenerateContent?alt=sse")
    anthropic = Auth("x-api-key", None, {"anthropic-version": "2023-06-01"})
    assert anthropic.headers("k1") == {"anthropic-version": "2023-06-01", "x-api-key": "k1"}
    assert anthropic.headers(None) == {"anthropic-version": "2023-06-01"}
    assert Auth().headers("k2") == {"Authorization": "Bearer k2"} and Auth().headers(None) == {}


def test_the_model_goes_where_the_endpoint_says() -> None:
    in_path = dataclasses.replace(OC, endpoint=Endpoint("/m/{model}:go", model_field=None))
    lowered = lower(in_path, Request.completion("x"), "g-1")
    assert "model" not in lowered.body and lowered.path == "/m/g-1:go"
    assert lower(OC, Request.completion("x"), "g-1").body["model"] == "g-1"


def test_an_option_never_shadows_a_body_field_the_table_owns() -> None:
    for name in ("logprobs", "echo", "prompt_logprobs", "max_tokens", "temperature"):
        with pytest.raises(Refused, match="names a field the IR owns"):
            lower(VN, Request.completion("x", options={name: 1}), "m")
    assert "logprobs" in OC.compiled.owned_keys and "prompt_logprobs" in VN.compiled.owned_keys


# -- order independence, over many requests -------------------------------------------------------


def _requests() -> st.SearchStrategy[Request]:
    sampling = st.builds(
        Sampling,
        temperature=st.sampled_from([msgspec.UNSET, 0.0, 0.7]),
        top_p=st.sampled_from([msgspec.UNSET, 0.5]),
        top_k=st.sampled_from([msgspec.UNSET, 5]),
        max_tokens=st.sampled_from([msgspec.UNSET, 0, 1, 8]),
        stop=st.sampled_from([msgspec.UNSET, ("a",), ("a", "b", "c", "d", "e")]),
        seed=st.sampled_from([msgspec.UNSET, 7]),
        frequency_penalty=st.sampled_from([msgspec.UNSET, 0.5]),
    )
    scoring = st.builds(
        Scoring,
        input_logprobs=st.booleans(),
        input_top_k=st.sampled_from([0, 2, 5]),
        sampled_logprobs=st.booleans(),
        sampled_top_k=st.sampled_from([0, 2, 5]),
        token_ids=st.booleans(),
    )
    structured = st.sampled_from(
        [
            StructuredOutput(),
            StructuredOutput(format="json_object"),
            StructuredOutput(
                format="json_schema", schema={"type": "object"}, name="x", strict=True
            ),
            StructuredOutput(format="json_schema", schema={"type": "object"}, strict=False),
        ]
    )
    completion = st.sampled_from(
        [
            CompletionInput(text="hi"),
            CompletionInput(token_ids=(1, 2)),
            CompletionInput(text="a", suffix="b"),
        ]
    )
    options = st.dictionaries(
        st.sampled_from(["min_p", "logprobs", "guided_json"]), st.just(0.1), max_size=2
    )
    return st.builds(
        Request,
        input=completion,
        sampling=sampling,
        scoring=scoring,
        structured_output=structured,
        scheduling=st.builds(Scheduling, stream=st.booleans()),
        options=options,
    )


def _outcome(dialect: Dialect, request: Request, active: dict[str, Any]) -> tuple[Any, ...]:
    try:
        lowered = decide(dialect, request, "m", active)
    except Refused as exc:
        return ("refused", exc.path, exc.message, exc.ledger)
    return ("lowered", msgspec.json.encode(lowered.body), lowered.ledger, lowered.stream)


@settings(max_examples=400, deadline=None)
@given(_requests(), st.sampled_from(ACTIVE), st.randoms(use_true_random=False))
def test_body_and_ledger_never_depend_on_row_or_leaf_order(
    request: Request, dialect: Dialect, rnd: random.Random
) -> None:
    try:
        validate(request)
    except Refused:
        return
    active = active_leaves(request)
    expected = _outcome(dialect, request, active)
    rows = list(dialect.rows.items())
    rnd.shuffle(rows)
    shuffled = dataclasses.replace(dialect, rows=dict(rows))
    keys = list(active)
    rnd.shuffle(keys)
    assert _outcome(shuffled, request, {k: active[k] for k in keys}) == expected


def test_requires_sees_the_value_it_conditions_on() -> None:
    rule = Requires(
        "sampling.seed", "sampling.temperature", "seed 1 needs a temperature", when=lambda v: v == 1
    )
    d = dataclasses.replace(OC, rules=(rule,))
    with pytest.raises(Refused, match="seed 1 needs"):
        lower(d, Request.completion("x", sampling=Sampling(seed=1)), "m")
    assert lower(d, Request.completion("x", sampling=Sampling(seed=2)), "m").body["seed"] == 2


def test_below_compares_two_leaves_values() -> None:
    from sieval.dialects.vocabulary import Below

    rule = Below("sampling.seed", "sampling.max_tokens", "seed must stay below max_tokens")
    d = dataclasses.replace(OC, rules=(rule,))
    with pytest.raises(Refused, match="seed must stay below") as info:
        lower(d, Request.completion("x", sampling=Sampling(seed=8, max_tokens=8)), "m")
    assert info.value.path == "sampling.seed"
    assert lower(d, Request.completion("x", sampling=Sampling(seed=7, max_tokens=8)), "m")
    assert lower(d, Request.completion("x", sampling=Sampling(seed=9)), "m")  # no bound: no rule
