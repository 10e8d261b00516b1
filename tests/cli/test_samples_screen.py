"""``sieval samples --id`` shows a tool call the model made and a gold answer as a reader writes
it, not a Python repr (issue 41); the sandbox's result has its own line (``program:``)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from sieval.cli.samples import render_sample
from sieval.ir.response import Choice, Response, ToolCall
from sieval.tasks.base import Sample, TaskConfig
from sieval.tasks.registry import TASKS


def _screen(view: dict[str, Any], width: int = 80) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for part in render_sample(view):
        console.print(part)
    return console.export_text()


def _view(**fields: Any) -> dict[str, Any]:
    view = {
        "id": "test/0", "model": "m", "task": "t", "outcome": "wrong", "metrics": {"acc": 0.0},
        "query": "Q?", "prompt": None, "choices": [], "why": None, "generation": "call it",
        "extracted": None, "gold": None, "error": None, "requests": [],
    }  # fmt: skip
    return view | fields


def test_a_gold_list_and_mapping_are_written_as_a_reader_writes_them() -> None:
    listed = _screen(_view(gold=["Paris", "paris, France"]))
    assert "gold: Paris | paris, France" in listed and "['Paris'" not in listed
    mapped = _screen(_view(gold={"b": 2, "a": "x"}))
    assert 'gold: {"a": "x", "b": 2}' in mapped and "{'a'" not in mapped
    assert "gold: 18\n" in _screen(_view(gold=18.0))


def test_a_tool_call_is_shown() -> None:
    screen = _screen(_view(tool_calls=[{"name": "add", "arguments": {"x": 1, "y": 2}}]))
    assert 'tool call: add({"x": 1, "y": 2})' in screen


def test_a_generation_task_keeps_the_tool_calls_a_reply_made() -> None:
    """What the screen reads: the family's channels keep the calls of the reply it scored."""
    task = TASKS["gsm8k_0shot_gen"]
    sample = Sample(id="test/0", data={"question": "1+1?"}, gold="2")
    call = ToolCall(call_id="c1", name="calculator", arguments={"expression": "1+1"})
    reply = Response(
        choices=(Choice(index=0, text="", finish_reason="tool_calls", tool_calls=(call,)),)
    )
    result = task.score(sample, {"gen": reply}, TaskConfig(name=task.name))
    assert result.channels["tool_calls"] == [
        {"name": "calculator", "arguments": {"expression": "1+1"}}
    ]
    plain = Response(choices=(Choice(index=0, text="The answer is 2."),))
    assert (
        "tool_calls" not in task.score(sample, {"gen": plain}, TaskConfig(name=task.name)).channels
    )


def test_the_gold_label_a_record_gets_is_written_too() -> None:
    """The label ``results.view`` makes for a record (what the screen and the HTML show first)
    was ``str(gold)``: HumanEval's gold came out as ``{'test': ...}``, a list as ``['a', 'b']``."""
    from sieval.results.explain import answer_label

    humaneval = answer_label({}, {"test": "assert f(1) == 2", "entry_point": "f"})
    assert humaneval == '{"entry_point": "f", "test": "assert f(1) == 2"}'
    assert answer_label({}, ["Paris", "paris"]) == "Paris | paris"
    assert answer_label({"choices": ["x", "y", "z"]}, 2) == "C"
    screen = _screen(_view(gold={"test": "t"}, gold_label=answer_label({}, {"test": "t"})))
    assert 'gold: {"test": "t"}' in screen and "{'test'" not in screen
