"""The tool loop against the embedded reference server (which calls the tools a turn names, with
the arguments it spells out), and its error branches and bounds against scripted replies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from sieval.ir.request import ChatInput, Request, Sampling, ToolResultPart
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.runner.preflight import embedded_server
from sieval.tasks.bank_tools import Bank
from sieval.tasks.base import Sample, TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.conversation import Conversation
from sieval.tasks.tool_loop import Bounds, Environment, planned_turns, run_tools, tool
from sieval.transport import FakeTransport, HttpReply, HttpRequest, json_reply

START = {"checking": 100, "savings": 50}
SAMPLE = Sample(id="x", data={}, gold=None)
CONFIG = TaskConfig(name="t")


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with embedded_server() as found:
        yield found


def request(text: str) -> Request:
    return Conversation(sampling=Sampling(temperature=0.0, max_tokens=256)).request(text)


def context(model: Model) -> DirectContext:
    return DirectContext(model, SAMPLE, CONFIG, model_facts(model.dialect))


@pytest.mark.parametrize(
    ("dialect", "apart"), [("openai_chat", True), ("anthropic_messages", False)]
)
async def test_parallel_calls_run_in_order_and_their_results_go_back(
    url: str, dialect: str, apart: bool
) -> None:
    bank = Bank(START)
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        ctx = context(model)
        text = "withdraw account=checking amount=10 and deposit account=savings amount=10"
        loop = await run_tools(ctx, request(text), bank)
    assert (loop.stop_reason, loop.bound, loop.turns) == ("answered", None, 2)
    assert [(s.turn, s.name, s.arguments) for s in loop.steps] == [
        (1, "withdraw", {"account": "checking", "amount": 10}),
        (1, "deposit", {"account": "savings", "amount": 10}),
    ]
    assert bank.accounts == {"checking": 90, "savings": 60}
    second = ctx.calls["turn2"].request.input
    assert isinstance(second, ChatInput)
    tools = [m for m in second.messages if m.role == "tool"]
    results = [p for m in tools for p in m.content if isinstance(p, ToolResultPart)]
    assert [r.result for r in results] == [
        {"account": "checking", "balance": 90},
        {"account": "savings", "balance": 60},
    ]
    assert len(tools) == (2 if apart else 1)  # OpenAI: one tool message a result
    # the results reached the model: its answer quotes them
    assert loop.answer is not None and '"balance":60' in loop.answer


async def test_a_tool_that_raises_sends_back_an_error_result(url: str) -> None:
    bank = Bank(START)
    async with Model(dialect="openai_chat", base_url=url, model_id="sieval-reference") as model:
        loop = await run_tools(context(model), request("withdraw account=savings amount=500"), bank)
    (step,) = loop.steps
    assert (step.is_error, step.result) == (
        True,
        {"error": "ValueError: insufficient funds: savings holds 50"},
    )
    assert loop.stop_reason == "answered" and bank.accounts == START
    assert loop.answer is not None and "insufficient funds" in loop.answer


def test_arguments_are_checked_against_the_declared_schema() -> None:
    bank = Bank(START)
    assert bank.run("deposit", {"account": "savings", "amount": "forty"}) == (
        "invalid arguments for deposit: Expected `int`, got `str` - at `$.amount`",
        True,
    )
    assert bank.run("deposit", {"account": "savings", "amount": 1, "memo": "x"}) == (
        "invalid arguments for deposit: Object contains unknown field `memo`",
        True,
    )
    assert bank.run("deposit", {"account": "savings"}) == (
        "invalid arguments for deposit: Object missing required field `amount`",
        True,
    )
    assert bank.run("rob", {}) == (
        "there is no tool named 'rob'; the tools are: balance, deposit, withdraw, transfer",
        True,
    )
    assert bank.accounts == START


def test_the_schema_is_derived_from_the_annotations() -> None:
    class Shelf(Environment):
        @tool
        def put(self, item: str, count: int = 1, fragile: bool = False) -> None:
            """Put count items on the shelf.

            Anything after the first paragraph is not the description."""

    (offer,) = Shelf().tools()
    assert (offer.name, offer.description) == ("put", "Put count items on the shelf.")
    assert offer.parameters == {
        "type": "object",
        "properties": {
            "item": {"type": "string"},
            "count": {"type": "integer", "default": 1},
            "fragile": {"type": "boolean", "default": False},
        },
        "required": ["item"],
        "additionalProperties": False,
    }


def scripted(
    turns: list[list[tuple[str, dict[str, Any]]]], finish: str = "tool_calls"
) -> FakeTransport:
    """An OpenAI chat server that answers turn k with the calls ``turns[k]`` (text when none),
    ending a reply that calls with ``finish``."""
    seen: list[int] = []

    def handler(http: HttpRequest) -> HttpReply:
        k = len(seen)
        seen.append(k)
        calls = turns[k] if k < len(turns) else []
        message: dict[str, Any] = {"role": "assistant", "content": None if calls else "done"}
        if calls:
            message["tool_calls"] = [
                {"id": f"c{k}{i}", "type": "function",
                 "function": {"name": n, "arguments": msgspec.json.encode(a).decode()}}
                for i, (n, a) in enumerate(calls)
            ]  # fmt: skip
        return json_reply({
            "id": "x", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": finish if calls else "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        })  # fmt: skip

    return FakeTransport(handler)


async def run_scripted(
    turns: list[list[tuple[str, dict[str, Any]]]],
    bounds: Bounds,
    bank: Bank,
    finish: str = "tool_calls",
) -> Any:
    transport = scripted(turns, finish)
    model = Model(dialect="openai_chat", base_url="http://x", model_id="m", transport=transport)
    return await run_tools(context(model), request("go"), bank, bounds)


DEPOSIT = ("deposit", {"account": "savings", "amount": 1})


async def test_the_turn_bound_is_its_own_outcome() -> None:
    bank = Bank(START)
    loop = await run_scripted([[DEPOSIT]] * 5, Bounds(turns=2), bank)
    assert (loop.stop_reason, loop.bound, loop.turns, loop.answer) == (
        "budget_exhausted", "turns", 2, None,
    )  # fmt: skip
    assert bank.accounts["savings"] == 52  # both turns' calls ran


async def test_calls_past_the_tool_call_bound_are_not_run() -> None:
    bank = Bank(START)
    loop = await run_scripted([[DEPOSIT, DEPOSIT, DEPOSIT]], Bounds(tool_calls=2), bank)
    assert (loop.stop_reason, loop.bound) == ("budget_exhausted", "tool_calls")
    assert [s.ran for s in loop.steps] == [True, True, False]
    assert bank.accounts["savings"] == 52


async def test_the_output_token_bound_counts_the_replies_usage() -> None:
    loop = await run_scripted([[DEPOSIT]] * 5, Bounds(output_tokens=14), Bank(START))
    assert (loop.stop_reason, loop.bound, loop.turns, loop.output_tokens) == (
        "budget_exhausted", "output_tokens", 2, 14,
    )  # fmt: skip


async def test_a_call_read_from_a_reply_cut_for_length_is_not_run() -> None:
    # a reply cut at max_tokens may hold a call cut itself (arguments short of their end)
    bank = Bank(START)
    loop = await run_scripted([[DEPOSIT, DEPOSIT]], Bounds(), bank, finish="length")
    assert (loop.stop_reason, loop.bound, loop.turns, loop.answer) == (
        "budget_exhausted", "max_tokens", 1, None,
    )  # fmt: skip
    assert [(s.name, s.ran) for s in loop.steps] == [("deposit", False), ("deposit", False)]
    assert bank.accounts == START


async def test_a_call_that_failed_fails_the_loop() -> None:
    def refuse(http: HttpRequest) -> HttpReply:
        return json_reply({"error": {"message": "no tools here", "code": 400}}, status=400)

    model = Model(
        dialect="openai_chat", base_url="http://x", model_id="m", transport=FakeTransport(refuse)
    )
    with pytest.raises(Exception, match="no tools here"):
        await run_tools(context(model), request("go"), Bank(START))


def test_what_planning_knows_is_turn_one_and_a_bound() -> None:
    first, later = planned_turns(request("go"), Bank(START), Bounds(turns=4, tool_calls=3))
    assert (first.name, first.exact, first.times) == ("turn1", True, 1)
    assert first.request.tools.choice == "auto" and len(first.request.tools.functions) == 4
    assert (later.exact, later.times, later.request) == (False, 3, first.request)
    assert later.unseen_tokens == 3 * 256 + 3 * 2000  # the answers' max_tokens, the results' cap
