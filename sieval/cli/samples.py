"""``sieval samples RUN_DIR``: a run's samples in the terminal, as the HTML report shows them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from ..errors import ConfigError, StorageError
from . import common, text
from .app import app

__all__ = ["matching", "render_sample"]


@app.command("samples")
def samples_command(
    run_dir: Path = typer.Argument(..., help="A run directory written by 'sieval eval'."),
    task: str | None = typer.Option(None, "--task", metavar="NAME", help="Only this task."),
    model: str | None = typer.Option(
        None, "--model", metavar="LABEL", help="Only this model label."
    ),
    wrong: bool = typer.Option(False, "--wrong", help="Only samples scored wrong (headline 0)."),
    failed: bool = typer.Option(False, "--failed", help="Only failed samples (never scored)."),
    correct: bool = typer.Option(False, "--correct", help="Only samples scored right."),
    censored: bool = typer.Option(
        False, "--censored", help="Only censored samples (cut by max_tokens before answering)."
    ),
    sample_id: str | None = typer.Option(
        None,
        "--id",
        metavar="ID",
        help="Only this sample id, shown in full: prompt, a refused reply, wire bodies, ledgers.",
    ),
    search: str | None = typer.Option(
        None,
        "--search",
        metavar="TEXT",
        help="Only samples whose id, question, prompt or generation has TEXT.",
    ),
    limit: int = typer.Option(20, "--limit", min=0, help="Show at most N samples (0: all)."),
    body: bool = typer.Option(False, "--body", help="Show each request's wire body and ledger."),
) -> None:
    """Print a run's samples, explained; filter by task, model, outcome, id or text.

    Each sample shows its question, the choices with their scores, the gold answer and the
    model's pick with why, the generation and the extracted answer, or the error. A run that is
    going or was interrupted shows the samples recorded so far."""
    from ..results.snapshot import snapshot
    from ..results.view import sample_view, units
    from .report import partial_note

    chosen = [("wrong", wrong), ("failed", failed), ("correct", correct), ("censored", censored)]
    outcomes = {name for name, asked in chosen if asked}
    try:
        report = snapshot(run_dir, tasks=common.tasks_for(run_dir=run_dir))
        found = list(units(run_dir, report))
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    known_tasks = sorted({u.result.task for u in found})
    if task is not None and task not in known_tasks:
        raise common.fail(
            f"--task {task!r} is not in this run; its tasks: {', '.join(known_tasks)}"
        )
    console = text.console()
    note = partial_note(report)
    if note:
        console.print(f"[yellow]{escape(note)}[/]")
    shown = total = 0
    for unit in found:
        if (task and unit.result.task != task) or (model and unit.result.model != model):
            continue
        headline = unit.result.headline
        for record in unit.records:
            if sample_id is not None and record.sample_id != sample_id:
                continue
            view = sample_view(record, unit.shared, headline)
            if not matching(view, outcomes, search):
                continue
            total += 1
            if limit and shown >= limit:
                continue
            shown += 1
            for line in render_sample(view, full=sample_id is not None, body=body):
                console.print(line)
    if total == 0:
        console.print("no sample matches")
        raise typer.Exit(common.EXIT_OK)
    if total > shown:
        console.print(f"[dim]{shown} of {total} matching samples shown; --limit 0 shows all[/]")


def matching(view: dict[str, Any], outcomes: set[str], search: str | None) -> bool:
    """Whether a sample view passes the outcome filter and the text search (case-insensitive)."""
    if outcomes and view["outcome"] not in outcomes:
        return False
    if search:
        needle = search.lower()
        fields = (view["id"], view["query"], view["prompt"], view["generation"])
        return any(needle in f.lower() for f in fields if isinstance(f, str))
    return True


_MARK = {
    "correct": ("correct", "green"),
    "wrong": ("wrong", "red"),
    "failed": ("failed", "yellow"),
    "censored": ("censored", "magenta"),
    "budget_exhausted": ("stopped by a bound", "yellow"),
}


def render_sample(view: dict[str, Any], *, full: bool = False, body: bool = False) -> Iterable[Any]:
    """The lines and tables that show one sample: the gold answer marked ✓ and the model's pick
    named as such (a tick is never next to a wrong pick); all that a model, a server or a dataset
    wrote goes through ``shown`` (inert: no escape sequence, markup or emoji code acts)."""
    from rich.table import Table
    from rich.text import Text

    from ..results.explain import written
    from .inert import shown

    metrics = ", ".join(f"{k} {v:g}" for k, v in view["metrics"].items())
    head = shown(f"{view['model']} / {view['task']} / {view['id']}", style="bold")
    yield Text.assemble(head, "  ", _MARK[view["outcome"]], f"  ({metrics})" if metrics else "")
    talk = view.get("conversation") or []
    if talk and full:
        yield from render_conversation(talk)
    elif talk:
        turns = max(c["turn"] for c in talk)
        yield Text(f"{len(talk)} calls over {turns} turns (--id shows the conversation)", "dim")
    if not talk and full and view["prompt"]:
        yield Text("prompt (first request, as sent):", style="dim")
        yield shown(view["prompt"])
    elif view["query"]:
        yield shown(view["query"])
    if view["choices"]:
        table = Table(show_edge=False, pad_edge=False)
        chars = any(c["norm_chars"] is not None for c in view["choices"])  # none for letters
        for column in (
            "gold",
            "choice",
            "logprob",
            *(["chars"] if chars else []),
            "score",
            "model",
        ):
            table.add_column(column, justify="right" if column in _NUMBERS else "left")
        for choice in view["choices"]:
            picked: Text | str = ""
            if choice["picked"]:
                picked = Text("picked", style="green" if choice["gold"] else "red")
            label = choice["label"] + (f" {choice['text']}" if choice["text"] else "")
            counted = [_num(choice["norm_chars"], "d")] if chars else []
            table.add_row(
                "✓" if choice["gold"] else "", shown(label), _num(choice["logprob"]), *counted,
                _num(choice["score"]), picked,
            )  # fmt: skip
        yield table
        why = f"; {view['why']}" if view["why"] else ""
        yield shown(f"✓ the gold answer; picked: the model's choice{why}", style="dim")
    if view["generation"] is not None:
        yield Text.assemble("generation: ", shown(view["generation"]))
        extracted = view["extracted"]
        found = Text("(no answer found)") if extracted is None else shown(extracted)
        gold = shown(written(view.get("gold_label", view["gold"])))
        yield Text.assemble("extracted: ", found, "   gold: ", gold)
    calls = view.get("calls")
    if calls:
        made = json.dumps(calls["made"], ensure_ascii=False)
        yield Text.assemble("calls made: ", shown("(none)" if calls["made"] is None else made))
        expected = json.dumps(calls["expected"], ensure_ascii=False)
        yield Text.assemble("expected:   ", shown(expected))
        if calls["miss"]:
            why = calls["lost"] or calls["reason"] or ""
            yield Text.assemble("miss: ", shown(calls["miss"], style="yellow"), " — ", shown(why))
        if calls["text"]:
            yield Text.assemble("text: ", shown(str(calls["text"])[:600]))
    for call in view.get("tool_calls") or []:
        arguments = json.dumps(call.get("arguments"), ensure_ascii=False, sort_keys=True)
        yield Text.assemble("tool call: ", shown(f"{call.get('name')}({arguments})"))
    execution = view.get("execution")
    if execution:
        wall = execution.get("wall_seconds")
        took = f", {wall:g} s" if isinstance(wall, int | float) else ""
        style = "green" if execution.get("status") == "passed" else "yellow"
        yield Text.assemble(
            "program: ",
            shown(str(execution.get("status")), style=style),
            " — ",
            shown(str(execution.get("reason"))),
            shown(f"  ({execution.get('mode') or 'sandbox'}{took})", style="dim"),
        )
        if full and execution.get("stderr"):
            yield Text("program's stderr (its end):", style="dim")
            yield shown(execution["stderr"])
    rerun = view.get("rerun")
    if isinstance(rerun, dict):
        yield shown(
            f"re-run of a censored answer at max_tokens {_budgets(rerun.get('max_tokens'))} "
            f"(×{text.shown(rerun.get('factor'))}); the first, at {_budgets(rerun.get('was'))}, is "
            "an earlier line of records.jsonl",
            style="dim",
        )
    if view["error"]:
        error = view["error"]
        status = f" (HTTP {error['status']})" if error.get("status") else ""
        yield Text.assemble(
            shown(f"{error['class']}{status}:", style="yellow"), " ", shown(error["message"])
        )
        for request in view["requests"] if full else ():
            if request["reply"] is not None:
                what = f"request {request['key']} reply, as received and refused:"
                yield shown(what, style="dim")
                yield shown(request["reply"])
    if body:
        for request in view["requests"]:
            yield shown(f"request {request['key']} body:", style="dim")
            yield shown(json.dumps(request["body"], indent=2, ensure_ascii=False))
            ledger = request["ledger"] if isinstance(request["ledger"], list) else []
            for row in ledger:
                where = row.get("path") or row.get("reason") or ""
                yield shown(f"  {row.get('leaf', '')}: {row.get('outcome', '')} {where}")
    yield ""


def render_conversation(talk: list[dict[str, Any]]) -> Iterable[Any]:
    """A conversational sample, call by call: what each call added (the user's turn, the tool
    results), then the answer (its text, the tools it called); a role's calls (a judge's) named
    with the role."""
    from rich.text import Text

    from .inert import shown

    for call in talk:
        who = f"{call['role']} · " if call["role"] else ""
        yield Text(f"{who}turn {call['turn']} · {call['key']}", style="bold dim")
        for message in call["messages"]:
            for part in message.get("content", []):
                yield Text.assemble("  ", *_part(message.get("role", "?"), part, shown))
        for answer in call["output"]:
            finish = f"  [{answer['finish']}]" if answer.get("finish") else ""
            if answer.get("text"):
                yield Text.assemble("  → ", shown(answer["text"]), (finish, "dim"))
                finish = ""
            for made in answer.get("tool_calls", []):
                arguments = json.dumps(made.get("arguments"), ensure_ascii=False)
                yield Text.assemble(
                    "  → calls ", shown(f"{made.get('name')}({arguments})", style="cyan"),
                    (finish, "dim"),
                )  # fmt: skip
                finish = ""
            if finish:
                yield Text.assemble("  → (no answer)", (finish, "dim"))
        if call["error"]:
            error = call["error"]
            yield Text.assemble(
                "  ", shown(f"{error.get('class')}: {error.get('message')}", style="yellow")
            )


def _part(role: str, part: dict[str, Any], shown: Any) -> list[Any]:
    kind = part.get("type")
    if kind == "text":
        return [f"{role}: ", shown(part.get("text", ""))]
    if kind == "tool_result":
        result = json.dumps(part.get("result"), ensure_ascii=False)
        return ["tool result: ", shown(result, style="green")]
    if kind == "tool_call":
        arguments = json.dumps(part.get("arguments"), ensure_ascii=False)
        return [f"{role} called ", shown(f"{part.get('name')}({arguments})")]
    return [f"{role}: ({kind})"]


_NUMBERS = ("logprob", "chars", "score")


def _budgets(value: Any) -> str:
    """A re-run's budgets per request (``{"gen": 4096}``) as ``4096``."""
    found = list(value.values()) if isinstance(value, dict) else []
    return "/".join(str(v) for v in found) or "-"


def _num(value: Any, spec: str = ".4f") -> str:
    return "-" if value is None else format(value, spec)
