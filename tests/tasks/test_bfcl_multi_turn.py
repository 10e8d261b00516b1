"""BFCL's multi-turn tasks end to end on the embedded reference server (it calls the tool a turn
shares the most words with, once, then answers in text): BFCL's loop of steps per turn, the
calls executed against bfcl-eval's own environments (through the executor process), the held-out
functions added at their turn, every miss classified, a wire drop found, the v4 figure and
pass^k beside pass@k. And a correct model passes: a small HTTP server that answers with an
entry's ground-truth calls, in order, in both columns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sieval.errors import ConfigError
from sieval.ir.request import ChatInput, CompletionInput, TextPart
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.reference.server import start_in_thread
from sieval.scoring.bfcl_env import oracle_python
from sieval.tasks._bfcl import HINTS, _oracle_data
from sieval.tasks.base import Sample, SampleResult, TaskConfig
from sieval.tasks.bfcl_multi_turn import MORE_FUNCTIONS, repeat_figures
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS

FC, PROMPT = TASKS["bfcl_multi_turn"], TASKS["bfcl_multi_turn_prompt"]


def _installed() -> bool:
    try:
        oracle_python()
    except ConfigError:
        return False
    return _oracle_data() is not None


needs_oracle = pytest.mark.skipif(
    not _installed(),
    reason="bfcl-eval 2026.3.23 is not installed: run scripts/bfcl-oracle.sh (scripts/test does)",
)


async def _server(faults: str | None = None) -> AsyncIterator[str]:
    # the Prompt column's system turn holds every function's schema (some 40,000 characters,
    # the reference's tokens): the server's context is set above it
    running = await asyncio.to_thread(
        start_in_thread, port=0, faults=faults, max_model_len=1_000_000
    )
    try:
        yield running.url
    finally:
        await asyncio.to_thread(running.stop)


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async for found in _server():
        yield found


def first(task: Any, category: str, **options: Any) -> tuple[Sample, TaskConfig]:
    cfg = TaskConfig(name=task.name, options={"categories": category, **options})
    return next(iter(task.load(Path("/nonexistent"), cfg))), cfg


async def solve(
    task: Any, url: str, dialect: str, sample: Sample, cfg: TaskConfig
) -> tuple[SampleResult, DirectContext]:
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        ctx = DirectContext(model, sample, cfg, model_facts(model.dialect))
        return await task.solve(sample, ctx), ctx


@needs_oracle
@pytest.mark.parametrize(
    "dialect", ["openai_chat", "openai_responses", "anthropic_messages", "google_genai"]
)
async def test_fc_runs_bfcl_s_steps_against_its_environments_on_every_tool_wire(
    url: str, dialect: str
) -> None:
    sample, cfg = first(FC, "multi_turn_base")
    result, ctx = await solve(FC, url, dialect, sample, cfg)
    # per turn: a step that calls (executed, its result sent back), then a text answer
    assert list(ctx.calls) == [f"turn{t}.step{s}" for t in range(1, 5) for s in (1, 2)]
    step1, step2 = result.channels["turns"][0]
    assert step1["calls"] == [{"mkdir": {"dir_name": "final_report.pdf"}}]
    assert step1["results"] == ["None"]  # GorillaFileSystem.mkdir's own return value, as text
    # the reference quotes the result it got (Google's wire wraps a text result in "output")
    assert "calls" not in step2 and step2["text"] in (
        "mkdir returned None.",
        'mkdir returned {"output": "None"}.',
    )
    grep = result.channels["turns"][1][0]
    assert grep["results"] == ['{"error": "grep: budget analysis: No such file or directory"}']
    # the directory it made is not the ground truth's move: the state check fails turn 0
    assert result.metrics["accuracy"] == 0.0 and result.channels["miss"] == "wrong_call"
    assert result.channels["reason"].startswith("multi_turn:instance_state_mismatch")
    assert result.channels["failed_turn"] == 0
    assert result.channels["turn_status"] == ["wrong_call"] + ["not_checked"] * 3
    assert "root" in result.channels["details"]["differences"]
    assert result.channels["made"][0] == [[{"mkdir": {"dir_name": "final_report.pdf"}}]]
    sent = ctx.calls["turn1.step2"].request
    assert sent.tools.choice == "auto" and len(sent.tools.functions) == 32
    assert [m.role for m in sent.input.messages] == ["user", "assistant", "tool"]


@needs_oracle
async def test_a_held_out_function_is_added_at_its_turn_without_bfcl_s_hint(url: str) -> None:
    sample, cfg = first(FC, "multi_turn_miss_func")
    assert [d["name"] for d in sample.data["missed"]["3"]] == ["sort"]
    result, ctx = await solve(FC, url, "openai_chat", sample, cfg)
    before = ctx.calls["turn3.step1"].request
    held = ctx.calls["turn4.step1"].request
    assert "sort" not in [f.name for f in before.tools.functions]
    assert [f.name for f in held.tools.functions][-1] == "sort"
    assert len(held.tools.functions) == len(before.tools.functions) + 1
    hint = HINTS["python"]
    assert not held.tools.functions[-1].description.endswith(hint)  # BFCL adds it unhinted
    assert before.tools.functions[0].description.endswith(hint)
    assert held.input.messages[-1].content == (TextPart(text=MORE_FUNCTIONS),)
    assert len(result.channels["turns"]) == 5
    assert result.channels["turn_status"][0] == "wrong_call"


@needs_oracle
@pytest.mark.parametrize("dialect", ["openai_chat", "openai_completions"])
async def test_prompt_puts_the_functions_in_the_system_turn_and_reads_text(
    url: str, dialect: str
) -> None:
    sample, cfg = first(PROMPT, "multi_turn_base")
    result, ctx = await solve(PROMPT, url, dialect, sample, cfg)
    # the reference server writes no Python call: each turn ends at its first step
    assert list(ctx.calls) == [f"turn{t}.step1" for t in range(1, 5)]
    assert (result.metrics["accuracy"], result.channels["miss"]) == (0.0, "no_call")
    assert result.channels["reason"].startswith("multi_turn:empty_turn_model_response")
    assert result.channels["turns"][0][0]["decode_error"]
    assert result.channels["text"] == result.channels["turns"][0][0]["text"]  # the failed turn's
    assert result.channels["made"] == [[], [], [], []]
    sent = ctx.calls["turn2.step1"].request
    assert not sent.tools.functions
    if dialect == "openai_completions":
        assert isinstance(sent.input, CompletionInput) and isinstance(sent.input.text, str)
        assert sent.input.text.startswith("System: You are an expert in composing functions.")
        assert "User: Perform a detailed search using grep" in sent.input.text
    else:
        assert isinstance(sent.input, ChatInput)
        assert [m.role for m in sent.input.messages] == ["system", "user", "assistant", "user"]


@needs_oracle
async def test_a_call_the_server_s_parser_left_in_the_text_is_a_wire_drop() -> None:
    sample, cfg = first(FC, "multi_turn_base")
    async for faulty in _server(faults="tool-calls-as-text"):
        result, _ = await solve(FC, faulty, "openai_chat", sample, cfg)
    assert (result.metrics["accuracy"], result.metrics["wire_drop"]) == (0.0, 1.0)
    assert result.channels["miss"] == "wire_drop" and result.metrics["no_call"] == 0.0
    assert result.channels["lost"].startswith(
        "the text holds 1 <tool_call> block(s) the server's parser did not read"
    )


def _results(outcomes: dict[str, list[float]]) -> list[tuple[Sample, SampleResult]]:
    out = []
    for item, values in outcomes.items():
        category = item.rsplit("_", 1)[0]
        for i, value in enumerate(values):
            sample = Sample(id=f"{item}#r{i}", data={}, gold=None, group=category)
            metrics = {"accuracy": value, f"acc_{category}": value}
            out.append((sample, SampleResult(prediction=None, gold=None, metrics=metrics)))
    return out


def test_the_figures_are_bfcl_v4_s_and_pass_hat_k_beside_pass_at_k() -> None:
    results = _results(
        {
            "multi_turn_base_0": [1.0, 1.0, 0.0, 1.0],
            "multi_turn_miss_func_0": [0.0, 0.0, 0.0, 0.0],
            "multi_turn_miss_param_0": [1.0, 1.0, 1.0, 1.0],
            "multi_turn_long_context_0": [0.0, 1.0, 0.0, 0.0],
        }
    )
    out = FC.aggregate(results)
    assert out["acc_multi_turn_base"] == 0.75 and out["acc_multi_turn_long_context"] == 0.25
    assert out["multi_turn"] == (0.75 + 0.0 + 1.0 + 0.25) / 4  # unweighted over the four
    assert out["repeats"] == 4
    # per entry, pass^2 = C(c,2)/C(4,2): 3/6, 0, 1, 0; pass@2 = 1 - C(4-c,2)/C(4,2): 1, 0, 1, 1/2
    assert out["pass^2"] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert out["pass@2"] == pytest.approx((1 + 0 + 1 + 0.5) / 4)
    assert out["pass^4"] == 0.25 and out["pass@4"] == 0.75
    assert out["pass^1"] == out["pass@1"] == out["accuracy"]
    # three categories run: no multi-turn figure; single draws: no pass^k
    assert "multi_turn" not in FC.aggregate(results[:12])
    assert repeat_figures([(Sample(id="x", data={}, gold=None), results[0][1])]) == {}


@needs_oracle
def test_repeats_are_seeded_draws_of_each_entry() -> None:
    cfg = TaskConfig(
        name=FC.name,
        options={"categories": "multi_turn_base", "repeats": 3, "temperature": 0.7},
        seed=5,
    )
    samples = list(FC.load(Path("/nonexistent"), cfg))[:4]
    assert [s.id for s in samples] == [
        "multi_turn_base_0#r0",
        "multi_turn_base_0#r1",
        "multi_turn_base_0#r2",
        "multi_turn_base_1#r0",
    ]
    assert FC.samples_per_row(cfg) == 3
    seeds = [FC.calls(s, cfg)[0].request.sampling.seed for s in samples]
    assert seeds == [5, 6, 7, 5]
    assert FC.calls(samples[0], cfg)[0].request.sampling.temperature == 0.7
    # planning: the first step as sent, then at most 21 replies a turn (4 turns), not exact
    first, later = FC.calls(samples[0], cfg)
    assert (first.name, first.exact, first.times) == ("turn1.step1", True, 1)
    assert (later.exact, later.times) == (False, 4 * 21 - 1)
    assert later.unseen_tokens >= later.times * 512  # every earlier reply at its max_tokens


# -- a correct model: a server that answers with the ground truth's calls, in order -------------

GROUND_TRUTH_0 = [
    ["cd(folder='document')", "mkdir(dir_name='temp')",
     "mv(source='final_report.pdf', destination='temp')"],
    ["cd(folder='temp')", "grep(file_name='final_report.pdf', pattern='budget analysis')"],
    ["sort(file_name='final_report.pdf')"],
    ["cd(folder='..')", "mv(source='previous_report.pdf', destination='temp')",
     "cd(folder='temp')",
     "diff(file_name1='final_report.pdf', file_name2='previous_report.pdf')"],
]  # fmt: skip
"""multi_turn_base_0's ground truth, its positional argument named (``sort``)."""


def _reply(content: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1796615907,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _fc_calls(turn: list[str], index: int) -> list[dict[str, Any]]:
    import json

    from sieval.scoring.bfcl_multi_turn import ground_truth_call

    out = []
    for i, text in enumerate(turn):
        call = ground_truth_call(text)
        arguments = json.dumps(dict(call.kwargs))
        function = {"name": call.name, "arguments": arguments}
        out.append({"id": f"call-{index}-{i}", "type": "function", "function": function})
    return out


async def _scripted(replies: list[dict[str, Any]]) -> AsyncIterator[tuple[str, list[Any]]]:
    from aiohttp import web

    bodies: list[Any] = []
    queue = list(replies)

    async def chat(request: web.Request) -> web.Response:
        bodies.append(await request.json())
        return web.json_response(queue.pop(0))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", bodies
    finally:
        await runner.cleanup()


@needs_oracle
@pytest.mark.parametrize("column", ["fc", "prompt"])
async def test_a_model_that_makes_the_ground_truth_s_calls_passes(column: str) -> None:
    task = FC if column == "fc" else PROMPT
    replies = []
    for index, turn in enumerate(GROUND_TRUTH_0):
        if column == "fc":
            replies.append(_reply("", _fc_calls(turn, index)))
        else:
            replies.append(_reply("[" + ", ".join(turn) + "]"))
        replies.append(_reply("Done."))
    sample, cfg = first(task, "multi_turn_base")
    bodies: list[Any] = []
    async for server, seen in _scripted(replies):
        result, _ = await solve(task, server, "openai_chat", sample, cfg)
        bodies = seen
    assert result.metrics["accuracy"] == 1.0 and result.channels["miss"] is None
    assert result.channels["turn_status"] == ["passed"] * 4
    assert result.metrics["steps"] == 8.0 and len(bodies) == 8
    step = result.channels["turns"][0][0]
    assert step["results"][0] == '{"current_working_directory": "document"}'
    # the results went back as BFCL sends them: tool messages (FC), one user message (Prompt)
    sent = bodies[1]["messages"]
    if column == "fc":
        assert [m["role"] for m in sent[-3:]] == ["tool", "tool", "tool"]
        assert sent[-3]["tool_call_id"] == "call-0-0"
        assert sent[-3]["content"] in (
            '{"current_working_directory": "document"}',
            [{"type": "text", "text": '{"current_working_directory": "document"}'}],
        )
    else:
        assert sent[-1]["role"] == "user"
        text = sent[-1]["content"]
        text = text if isinstance(text, str) else text[0]["text"]
        assert text.startswith(
            "[{'role': 'tool', 'name': \"cd(folder='document')\", 'content': "
            '\'{"current_working_directory": "document"}\'}'
        )


def test_each_turn_s_status_follows_the_check_that_stops_at_the_first_failed_turn() -> None:
    from sieval.tasks.bfcl_multi_turn import _turn_status

    gold = [["cd(folder='a')"], [], ["ls()"], ["pwd()"]]
    assert _turn_status(gold, None, None) == ["passed", "no_ground_truth", "passed", "passed"]
    assert _turn_status(gold, 2, "no_call") == [
        "passed",
        "no_ground_truth",
        "no_call",
        "not_checked",
    ]
    # stopped at the step limit (multi_turn:force_terminated): no turn was checked
    assert _turn_status(gold, None, "wrong_call") == ["not_checked"] * 4
