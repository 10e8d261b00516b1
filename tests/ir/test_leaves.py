"""Leaf flattening is derived from the types; activity means "differs from the default"."""

from __future__ import annotations

import msgspec
import pytest

from sieval.ir.leaves import active_leaves, schema_leaves, schema_match
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
    ToolResultPart,
)

GROUPS = ("sampling", "scoring", "structured_output", "reasoning", "tools", "scheduling")


@pytest.mark.parametrize("group", GROUPS)
def test_every_group_field_is_a_schema_leaf(group: str) -> None:
    cls = type(getattr(Request.completion("x"), group))
    names = {f.name for f in msgspec.structs.fields(cls)}
    leaves = {leaf.split(".")[1] for leaf in schema_leaves() if leaf.startswith(group + ".")}
    assert names == leaves


def test_schema_has_input_variants_and_open_options() -> None:
    leaves = schema_leaves()
    assert "input.completion.text" in leaves
    assert "input.chat.messages" in leaves
    assert "input.chat.messages.content.image.detail" in leaves
    assert "input.chat.messages.content.tool_result.is_error" in leaves
    assert "options.*" in leaves
    # required fields inside sequence elements belong to their element, not to a leaf of their own
    assert "input.chat.messages.role" not in leaves
    assert "input.chat.messages.content.text.text" not in leaves
    assert len(leaves) == len(set(leaves))


def test_default_request_has_only_its_input_active() -> None:
    assert active_leaves(Request.completion("hi")) == {"input.completion.text": "hi"}


def test_a_leaf_set_to_its_default_value_is_not_active() -> None:
    req = Request.completion("hi", sampling=Sampling(n=1), scoring=Scoring(input_top_k=0))
    assert set(active_leaves(req)) == {"input.completion.text"}


def test_active_leaves_carry_values_and_option_keys() -> None:
    req = Request.completion(
        "hi",
        sampling=Sampling(temperature=0.0, stop=("\n",), n=2),
        scoring=Scoring(input_logprobs=True),
        structured_output=StructuredOutput(strict=True),
        scheduling=Scheduling(stream=True),
        options={"min_p": 0.1},
    )
    assert active_leaves(req) == {
        "input.completion.text": "hi",
        "sampling.temperature": 0.0,
        "sampling.stop": ("\n",),
        "sampling.n": 2,
        "scoring.input_logprobs": True,
        "structured_output.strict": True,
        "scheduling.stream": True,
        "options.min_p": 0.1,
    }


def test_chat_leaves_name_each_part_kind_present() -> None:
    req = Request(
        input=ChatInput(
            messages=(
                Message(
                    role="user", content=(TextPart(text="a"), ImagePart(url="u", detail="low"))
                ),
                Message(role="tool", content=(ToolResultPart(call_id="c", result=1),)),
            )
        )
    )
    leaves = set(active_leaves(req))
    assert {
        "input.chat.messages",
        "input.chat.messages.content.text",
        "input.chat.messages.content.image",
        "input.chat.messages.content.image.url",
        "input.chat.messages.content.image.detail",
        "input.chat.messages.content.tool_result",
    } == leaves


def test_token_id_prompt_is_its_own_leaf() -> None:
    req = Request(input=CompletionInput(token_ids=(2, 5)))
    assert active_leaves(req) == {"input.completion.token_ids": (2, 5)}


def test_every_active_leaf_matches_a_schema_leaf() -> None:
    req = Request.completion("x", options={"repetition_penalty": 1.1})
    for leaf in active_leaves(req):
        assert schema_match(leaf) is not None
    assert schema_match("options.repetition_penalty") == "options.*"
    assert schema_match("sampling.nonsense") is None


def test_typo_in_a_group_field_fails_at_decode() -> None:
    with pytest.raises(msgspec.ValidationError, match="temprature"):
        msgspec.convert({"temprature": 0.5}, Sampling)
