"""The Responses reply is decoded untagged, then typed: what a tagged union refused is refused."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import load_fixture

from dialects import test_openai_responses as cases
from sieval.dialects.registry import get_dialect
from sieval.dialects.table import lift
from sieval.errors import ContractViolation

D = get_dialect("openai_responses")


def _lift(name: str, change: Any) -> Any:
    reply = copy.deepcopy(load_fixture("openai_responses", name)["reply"])
    change(reply["output"])
    return lift(D, cases.lowered(name), 200, {}, json.dumps(reply).encode())


def _reasoning(output: list[Any]) -> None:
    output.insert(0, {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text"}]})


@pytest.mark.parametrize(
    ("name", "change", "needle"),
    [
        ("plain", lambda o: o[0].update(type="web_search_call"), "not message, function_call"),
        ("plain", lambda o: o[0]["content"][0].pop("text"), "'output_text' part without its text"),
        ("plain", lambda o: o[0]["content"][0].update(type="image"), "'image' part without"),
        ("tool_required", lambda o: o[0].pop("name"), "function_call without call_id, name"),
        ("plain", _reasoning, r"output\[0\].content\[0\] has no text"),
    ],
)
def test_an_item_or_part_that_is_not_its_type_is_refused(name: str, change: Any, needle: str):
    with pytest.raises(ContractViolation, match=needle):
        _lift(name, change)


def test_a_reasoning_item_is_typed_and_read() -> None:
    def add(output: list[Any]) -> None:
        item = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text"}]}
        item["content"][0]["text"] = "think first"
        output.insert(0, item)

    choice = _lift("plain", add).choices[0]
    assert choice.reasoning == "think first"
    assert choice.text == cases.run("plain").choices[0].text
