"""The tool-call serving check on the embedded reference server: it passes where the server's
tool parser delivers every call, and fails with evidence where the parser loses them (the
server's fault modes ``tool-calls-as-text`` and ``tool-calls-empty``)."""

from __future__ import annotations

import pytest

from sieval.ir.request import ChatInput, FunctionTool, Request, Tools
from sieval.model import Model
from sieval.reference.server import ReferenceServer
from sieval.serving import run_serving_checks
from sieval.serving.finding import Finding
from sieval.serving.observation import Sender
from sieval.serving.selection import Needs, needs_of, select
from sieval.serving.tool_calls import PROBES, check_tool_calls, check_tool_prompt
from sieval.tasks.conversation import message
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply


async def tool_check(fault: str | None, dialect: str = "openai_chat") -> Finding:
    async with (
        ReferenceServer(faults=fault) as server,
        Model(dialect=dialect, base_url=server.url, model_id=server.model_name) as m,
    ):
        serving = await run_serving_checks(m, Needs({"tool_calls": ["bfcl"]}))
    (finding,) = serving.findings
    return finding


@pytest.mark.parametrize("dialect", ["openai_chat", "anthropic_messages", "google_genai"])
async def test_a_parser_that_delivers_every_call_passes(dialect: str) -> None:
    finding = await tool_check(None, dialect)
    assert (finding.check, finding.outcome, finding.matters) == ("tool_calls", "passed", False)
    evidence = finding.evidence
    assert list(evidence) == list(PROBES)
    assert evidence["forced"]["calls"] == [{"get_weather": {"city": "Paris"}}]
    assert evidence["parallel"]["calls"] == [
        {"get_weather": {"city": "Paris"}},
        {"get_weather": {"city": "London"}},
    ]
    assert evidence["empty"]["calls"] == []
    assert list(evidence["dotted"]["calls"][0]) == ["weather.get_current"]
    assert finding.tasks == ["bfcl"] and finding.cost.requests == len(PROBES)


async def test_calls_left_as_text_fail_the_check_with_the_text() -> None:
    finding = await tool_check("tool-calls-as-text")
    assert (finding.outcome, finding.matters) == ("failed", True)
    forced = finding.evidence["forced"]["why"]
    # a forced call: the reply says it called, lists none, and holds the call as text
    assert forced.startswith("ContractViolation: openai_chat: choice 0 finished for tool_calls")
    assert '<tool_call>\\n{\\"name\\": \\"get_weather\\"' in forced
    assert finding.evidence["empty"]["outcome"] == "passed"  # no call was made there
    assert "--tool-call-parser" in finding.meaning


async def test_a_reply_that_says_it_called_and_lists_none_fails_the_check() -> None:
    finding = await tool_check("tool-calls-empty")
    assert finding.outcome == "failed"
    assert "finished for tool_calls but carries no tool call" in finding.evidence["forced"]["why"]


async def test_a_wire_without_tools_skips_it() -> None:
    finding = await tool_check(None, "openai_completions")
    assert (finding.outcome, finding.detail) == (
        "skipped", "openai_completions carries no function tools",
    )  # fmt: skip


def test_only_runs_that_offer_tools_need_it() -> None:
    tool = FunctionTool(name="f", parameters={"type": "object", "properties": {}})
    chat = Request(input=ChatInput(messages=(message("user", "x"),)))
    offering = Request(input=chat.input, tools=Tools(functions=(tool,)))
    assert "tool_calls" not in needs_of((("chat", chat),), 1)
    needs = needs_of((("chat", chat), ("bfcl", chat), ("bfcl", offering)), 1)
    assert needs.tasks("tool_calls") == ["bfcl"] and "tool_prompt" not in needs
    assert select(needs, ("tool_prompt",)).tasks("tool_prompt") == ["bfcl"]  # when named


async def test_a_reply_cut_at_the_token_limit_is_inconclusive_not_a_failure() -> None:
    def cut(http: HttpRequest) -> HttpReply:
        return json_reply({
            "id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": '{"name": "get_wea'}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 128, "total_tokens": 133},
        })  # fmt: skip

    model = Model(
        dialect="openai_chat", base_url="http://x", model_id="m", transport=FakeTransport(cut)
    )
    finding = await check_tool_calls(Sender(model), model)
    assert finding.outcome == "skipped" and finding.detail.startswith("inconclusive: the probes")
    assert {e["outcome"] for e in finding.evidence.values()} == {"inconclusive"}
    assert finding.evidence["forced"]["why"].startswith("cut at 128 tokens")


async def test_tools_a_chat_template_does_not_render_fail_the_prompt_check() -> None:
    # the reference renders chats with the live Gemma 3's turn format, which has no tools: as
    # on the live vLLM, the offered tool adds no prompt token
    async with ReferenceServer() as server:
        model = Model(dialect="openai_chat", base_url=server.url, model_id=server.model_name)
        async with model:
            finding = await check_tool_prompt(Sender(model), model)
    assert (finding.outcome, finding.matters) == ("failed", True)
    assert finding.evidence["with_tool"] == finding.evidence["without"] > 0
    assert finding.detail.startswith("the tool did not reach the prompt")
    assert "bfcl_prompt" in finding.meaning


async def test_tools_that_reach_the_prompt_pass_it() -> None:
    def counting(http: HttpRequest) -> HttpReply:
        tokens = 90 if b'"tools"' in (http.body or b"") else 16
        return json_reply({
            "id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": "I"}}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 1,
                      "total_tokens": tokens + 1},
        })  # fmt: skip

    transport = FakeTransport(counting)
    model = Model(dialect="openai_chat", base_url="http://x", model_id="m", transport=transport)
    finding = await check_tool_prompt(Sender(model), model)
    assert (finding.outcome, finding.evidence) == ("passed", {"with_tool": 90, "without": 16})
    assert finding.cost.requests == 2
