"""BFCL's memory tasks end to end on the embedded reference server (it calls the memory function
a turn shares the most words with, once, then answers in text): the prerequisite conversations
lived through in order against bfcl-eval's own memory backend (through the executor), the memory
they left shown in each question's system prompt, the questions graded by the agentic check, a
wire drop found."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sieval.errors import ConfigError
from sieval.ir.request import ChatInput, CompletionInput, TextPart
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.reference.server import start_in_thread
from sieval.scoring.bfcl_agentic import check_answer
from sieval.scoring.bfcl_env import oracle_python, shared
from sieval.tasks._bfcl import REFUSED, _oracle_data
from sieval.tasks.base import Sample, SampleResult, TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS

FC, PROMPT = TASKS["bfcl_memory"], TASKS["bfcl_memory_prompt"]


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


def notetaker(task: Any, category: str) -> tuple[Sample, TaskConfig]:
    options = {"categories": category, "scenarios": "notetaker", "questions": 2}
    cfg = TaskConfig(name=task.name, options=options)
    (sample,) = task.load(Path("/nonexistent"), cfg)
    return sample, cfg


async def solve(
    task: Any, url: str, dialect: str, sample: Sample, cfg: TaskConfig
) -> tuple[SampleResult, DirectContext]:
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        ctx = DirectContext(model, sample, cfg, model_facts(model.dialect))
        return await task.solve(sample, ctx), ctx


def _system(request: Any) -> str:
    if isinstance(request.input, CompletionInput):
        return str(request.input.text)
    first = request.input.messages[0]
    assert first.role == "system"
    return "".join(p.text for p in first.content if isinstance(p, TextPart))


@needs_oracle
@pytest.mark.parametrize("category", ["memory_rec_sum", "memory_kv"])
async def test_fc_lives_through_the_prerequisites_then_answers_from_the_memory(
    url: str, category: str
) -> None:
    sample, cfg = notetaker(FC, category)
    ids = [p["id"] for p in sample.data["prereqs"]]
    assert ids[:2] == [f"{category}_prereq_32-notetaker-0", f"{category}_prereq_33-notetaker-1"]
    result, ctx = await solve(FC, url, "openai_chat", sample, cfg)
    prereqs = sample.data["prereqs"]
    turns = sum(len(p["question"]) for p in prereqs)
    assert [len(p["turns"]) for p in result.channels["prereqs"]] == [
        len(p["question"]) for p in prereqs
    ]
    assert len([n for n in ctx.calls if n.startswith("prereq")]) >= turns
    made = [s for p in result.channels["prereqs"] for t in p["turns"] for s in t if "calls" in s]
    assert made  # the reference called the memory's functions, their results sent back
    first = ctx.calls["prereq1.turn1.step1"].request
    assert isinstance(first.input, ChatInput)
    assert len(first.tools.functions) == (15 if category == "memory_kv" else 5)
    # bfcl-eval's memory prompt: the scenario's setting, the memory empty at the first one
    assert _system(first).startswith("You are a personal organization assistant.")
    assert "no content in the" in _system(first)
    assert "For your final answer" not in _system(first)
    asked = _system(ctx.calls["q1.turn1.step1"].request)
    assert "For your final answer to the user, you must respond in this format" in asked
    if category == "memory_rec_sum":
        # the last write that took is in the memory the question is shown
        writes = [
            (name, args, result)
            for s in made
            for call, result in zip(s["calls"], s["results"], strict=True)
            for name, args in call.items()
            if name != "memory_retrieve" and "error" not in result
        ]
        assert writes
        name, args, _ = writes[-1]
        if name == "memory_clear":
            assert "There is no content in the memory at this point." in asked
        else:
            assert str(args.get("text", args.get("new_text"))) in asked
    else:
        assert "Here is the content of your Core Memory from previous interactions" in asked
    # the reference's text holds no possible answer: both questions are wrong answers
    assert [q["reason"] for q in result.channels["questions"]] == ["agentic:answer_not_found"] * 2
    assert result.metrics["n_questions"] == 2.0 and result.metrics["accuracy"] == 0.0
    assert result.metrics["wrong_answer"] == 1.0 and result.metrics["n_wrong"] == 2.0
    assert result.metrics["wire_drop"] == 0.0
    first_id = result.channels["questions"][0]["id"]
    assert result.channels["miss"] == "wrong_answer"
    assert result.channels["reason"].startswith(f"{first_id}: agentic:answer_not_found")
    assert result.channels["made"][first_id] == result.channels["questions"][0]["answer"]
    assert result.gold[first_id] == sample.data["questions"][0]["possible"]
    figures = FC.aggregate([(sample, result)])
    assert figures["questions"] == 2.0 and figures[f"acc_{category}"] == 0.0
    assert "memory" not in figures  # BFCL's memory summary needs memory_vector


@needs_oracle
async def test_prompt_puts_the_functions_before_the_memory_prompt_on_a_completions_wire(
    url: str,
) -> None:
    sample, cfg = notetaker(PROMPT, "memory_kv")
    result, ctx = await solve(PROMPT, url, "openai_completions", sample, cfg)
    sent = ctx.calls["q2.turn1.step1"].request
    assert isinstance(sent.input, CompletionInput) and not sent.tools.functions
    text = str(sent.input.text)
    assert text.startswith("System: You are an expert in composing functions.")
    assert text.index("core_memory_add") < text.index("You are a personal organization")
    assert text.index("You are a personal organization") < text.index("For your final answer")
    assert len(result.channels["questions"]) == 2


@needs_oracle
async def test_a_call_the_server_s_parser_left_in_the_text_is_a_wire_drop() -> None:
    sample, cfg = notetaker(FC, "memory_rec_sum")
    async for faulty in _server(faults="tool-calls-as-text"):
        result, _ = await solve(FC, faulty, "openai_chat", sample, cfg)
    assert result.metrics["wire_drop"] == 1.0
    assert str(result.channels["lost"]).startswith(
        "the text holds 1 <tool_call> block(s) the server's parser did not read"
    )


def test_the_accuracy_is_over_questions_not_scenarios() -> None:
    def scored(category: str, correct: float, questions: float) -> tuple[Sample, SampleResult]:
        metrics = {"n_correct": correct, "n_questions": questions, "n_wrong": questions - correct}
        metrics |= {"n_unanswered": 0.0, "accuracy": correct / questions}
        sample = Sample(id=f"{category}-x", data={}, gold=None, group=category)
        return sample, SampleResult(prediction=None, gold=None, metrics=metrics)

    figures = FC.aggregate([scored("memory_kv", 1, 10), scored("memory_kv", 2, 2)])
    assert figures["accuracy"] == pytest.approx(3 / 12)  # a mean of 0.1 and 1.0 would be 0.55
    assert figures["wrong_answer"] == pytest.approx(9 / 12) and figures["questions"] == 12
    for name, count in (("accuracy", "n_correct"), ("wrong_answer", "n_wrong")):
        assert (FC.derived[name].of, FC.derived[name].per) == (count, "n_questions")


def test_only_memory_vector_and_web_search_stay_refused() -> None:
    assert set(REFUSED) == {"web_search_base", "web_search_no_snippet", "memory_vector"}
    assert "faiss" in REFUSED["memory_vector"]


@needs_oracle
def test_the_backends_load() -> None:
    assert FC.check_ready().said == (f"bfcl memory backends: {shared().python}",)


async def _noting_model() -> AsyncIterator[tuple[str, list[Any]]]:
    """An OpenAI chat server standing for a model that uses its memory: each prerequisite turn
    it appends the user's message (cut at 400 characters) with ``memory_append``, then says
    "Noted."; asked a question (BFCL's answer-format prompt present), it answers with the memory
    its system prompt shows."""
    from aiohttp import web

    bodies: list[Any] = []

    def reply(content: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return {"id": "x", "object": "chat.completion", "created": 1, "model": "noting",
                "choices": [choice], "usage": usage}  # fmt: skip

    def text(message: dict[str, Any]) -> str:
        content = message.get("content") or ""
        return content if isinstance(content, str) else "".join(p["text"] for p in content)

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        bodies.append(body)
        messages = body["messages"]
        system = text(messages[0]) if messages[0]["role"] == "system" else ""
        last = messages[-1]
        if last["role"] == "tool":
            return web.json_response(reply("Noted."))
        if "For your final answer" in system:
            return web.json_response(reply(system))
        arguments = json.dumps({"text": text(last)[:400] + "\n"})
        call = {"id": f"c{len(bodies)}", "type": "function",
                "function": {"name": "memory_append", "arguments": arguments}}  # fmt: skip
        return web.json_response(reply("", [call]))

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
async def test_a_model_that_keeps_notes_answers_from_the_memory_its_prerequisites_wrote() -> None:
    sample, cfg = notetaker(FC, "memory_rec_sum")
    async for found, bodies in _noting_model():
        result, ctx = await solve(FC, found, "openai_chat", sample, cfg)
        requests = len(bodies)
    # every prerequisite turn appended its message; the memory carried over all five
    # conversations (bfcl-eval's snapshots) into each question's system prompt
    first_said = sample.data["prereqs"][0]["question"][0][0]["content"][:400]
    last_said = sample.data["prereqs"][-1]["question"][-1][0]["content"][:400]
    asked = _system(ctx.calls["q1.turn1.step1"].request)
    assert first_said in asked and last_said in asked
    assert first_said not in _system(ctx.calls["prereq1.turn1.step1"].request)
    assert first_said in _system(ctx.calls["prereq2.turn1.step1"].request)
    # graded on what the memory held: a question passes exactly when a possible answer is there
    for question in result.channels["questions"]:
        held = any(check_answer(asked, [p]).valid for p in question["possible"])
        assert question["valid"] == held, question["id"]
    assert any(q["valid"] for q in result.channels["questions"]), "a pass is possible"
    assert requests == 2 * sum(len(p["question"]) for p in sample.data["prereqs"]) + 2
