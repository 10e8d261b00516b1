"""``sieval samples --id`` on a conversation: each call's new messages and its answer, the tools
called with their arguments and the results sent back, a judge's call under its role."""

from __future__ import annotations

from rich.console import Console

from sieval.cli.samples import render_conversation
from sieval.results.view import conversation
from sieval.store.records import RequestRecord


def _text(*parts: str) -> dict[str, object]:
    return {"role": parts[0], "content": [{"type": "text", "text": parts[1]}]}


CALL = {"call_id": "c1", "name": "deposit", "arguments": {"account": "savings", "amount": 40}}
REQUESTS = {
    "turn1": RequestRecord(
        messages=[_text("system", "You manage accounts."), _text("user", "deposit 40")],
        output=[{"text": "", "tool_calls": [CALL], "finish": "tool_calls"}],
    ),
    "turn2": RequestRecord(
        turn=2,
        messages=[
            {"role": "assistant", "content": [{"type": "tool_call", **CALL}]},
            {
                "role": "tool",
                "content": [{"type": "tool_result", "call_id": "c1", "result": {"balance": 90}}],
            },
        ],
        output=[{"text": "Deposited 40.", "finish": "stop"}],
    ),
    "judge:verdict": RequestRecord(
        role="judge",
        messages=[_text("user", "Rate it as [[rating]].")],
        output=[{"text": "Rating: [[7]]", "finish": "stop"}],
    ),
    "one-shot": RequestRecord(),  # a static request keeps no conversation: left out
}


def test_a_conversation_is_shown_call_by_call() -> None:
    console = Console(width=120, record=True)
    for line in render_conversation(conversation(REQUESTS)):
        console.print(line)
    assert console.export_text().splitlines() == [
        "turn 1 · turn1",
        "  system: You manage accounts.",
        "  user: deposit 40",
        '  → calls deposit({"account": "savings", "amount": 40})  [tool_calls]',
        "turn 2 · turn2",
        '  tool result: {"balance": 90}',
        "  → Deposited 40.  [stop]",
        "judge · turn 1 · judge:verdict",
        "  user: Rate it as [[rating]].",
        "  → Rating: [[7]]  [stop]",
    ]
