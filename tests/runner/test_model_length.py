"""A server's ``max_model_len`` (its listing's, its tokenizer's) is believed only when it is a
length (``spec.model_length``): a negative, zero, boolean or absurd one is treated as not
reported, and a length too short for a rolling window is refused naming the option, where a
negative one made the context check refuse every prompt and a length of 2 failed every rolling
sample with an internal error."""

from __future__ import annotations

from typing import Any

import pytest

from sieval.dialects.registry import get_dialect
from sieval.errors import ConfigError
from sieval.runner.preflight import preflight
from sieval.tasks.base import ModelFacts, Sample, TaskConfig
from sieval.tasks.registry import get_task
from sieval.transport import FakeTransport, HttpRequest, json_reply


def _listing(length: Any) -> FakeTransport:
    def handler(request: HttpRequest) -> Any:
        if request.url.endswith("/v1/models"):
            entry = {"id": "m", "object": "model", "max_model_len": length}
            return json_reply({"object": "list", "data": [entry]})
        return json_reply({})

    return FakeTransport(handler)


@pytest.mark.parametrize(("length", "believed"), [(4096, 4096), (-5, None), (0, None)])
async def test_the_listing_s_length_is_believed_only_when_it_is_one(
    length: Any, believed: int | None
) -> None:
    found = await preflight(
        "http://h",
        dialect=get_dialect("openai_completions"),
        api_key=None,
        transport=_listing(length),
        model_id="m",
    )
    assert found.max_model_len.get("m") == believed
    assert found.served_models == ["m"]


def test_a_server_length_too_short_for_a_window_is_refused_naming_the_option() -> None:
    task = get_task("wikitext")
    sample = Sample(id="d0", data={"text": "x", "words": 1, "bytes": 1}, gold=None)
    facts = ModelFacts(max_length=2, documents={"x": (5, 6)}, prefix_token_id=2)
    with pytest.raises(ConfigError, match="maximum model length of 2, too short") as info:
        task.requests(sample, TaskConfig(name="wikitext"), facts)
    assert info.value.path == "tasks.wikitext.options.max_length"
    roomy = ModelFacts(max_length=3, documents={"x": (5, 6)}, prefix_token_id=2)
    assert len(task.requests(sample, TaskConfig(name="wikitext"), roomy)) == 2  # a window each
