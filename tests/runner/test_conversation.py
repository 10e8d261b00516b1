"""Samples that are conversations, run through the engine against the embedded reference server:
every turn recorded with its name, turn and role; the judge role planned and checked like a
model; the call journal replayed on a resume through the same checks; budgets stop between
calls; the forecast of a task that is not static is a bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from sieval.cli.costs import render_forecast
from sieval.cost.forecast import CostOptions
from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.plan.plan import plan_run
from sieval.runner import RunOptions, arun_eval, read_records
from sieval.store.records import journal_path

from .conversations import TwoTurns
from .fakes import FakeTask, write_data

WORDS = ["red", "green", "blue"]


def config(*, judge: str = "", task: str = "two_turns", extra: str = "") -> Any:
    return parse_config(
        f"""
models:
  - {{name: m, endpoint: embedded, kind: chat}}
tasks:
  - name: {task}
{judge}
{extra}
"""
    )


def opts(tmp_path: Path, **kw: Any) -> RunOptions:
    return RunOptions(
        out=tmp_path / "out",
        data_dir=tmp_path / "data",
        preflight=False,
        serving_checks="off",
        max_failures=None,
        **kw,
    )


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write_data(tmp_path / "data", WORDS)
    return tmp_path / "data"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_every_turn_is_recorded_after_the_answer_it_follows(
    tmp_path: Path, data: Path
) -> None:
    result = await arun_eval(config(), opts(tmp_path), tasks={"two_turns": TwoTurns()})
    assert result.exit_code == 0
    records = read_records(result.run_dir / "m" / "two_turns" / "records.jsonl").records
    assert sorted(records) == ["s0", "s1", "s2"]
    for record in records.values():
        turn1, turn2 = record.requests["turn1"], record.requests["turn2"]
        assert (turn1.turn, turn2.turn, turn1.role, turn2.role) == (1, 2, None, None)
        answer = turn1.output[0]["text"] if turn1.output else None
        # turn 2 was sent after turn 1's answer, which it carries back as the assistant's turn
        assert turn2.body is not None
        sent = turn2.body["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        assert sent[1]["content"] == [{"type": "text", "text": answer}]
        assert turn2.messages is not None and turn2.messages[-1]["content"][0]["text"].startswith(
            "again "
        )
        assert record.channels["answers"][0] == answer


async def test_a_static_task_s_records_hold_no_conversation_fields(
    tmp_path: Path, data: Path
) -> None:
    cfg = parse_config("models: [{name: m, endpoint: embedded}]\ntasks: [{name: fake_qa}]")
    result = await arun_eval(cfg, opts(tmp_path), tasks={"fake_qa": FakeTask()})
    text = (result.run_dir / "m" / "fake_qa" / "records.jsonl").read_text()
    for key in ('"turn"', '"role"', '"messages"', '"output"'):
        assert key not in text  # byte for byte what version 5 wrote
    assert not journal_path(result.run_dir / "m" / "fake_qa" / "records.jsonl").exists()


async def test_a_task_needing_a_role_the_config_lacks_is_refused_before_io(
    tmp_path: Path, data: Path
) -> None:
    with pytest.raises(ConfigError) as info:
        plan_run(config(), data_dir=data, tasks={"two_turns": TwoTurns(judge=True)})
    assert info.value.message == (
        "task 'two_turns' calls a model in the role 'judge', which the config does not set; add "
        "roles: {judge: LABEL} naming a models: entry, or an entry of its own (roles: {judge: "
        "{endpoint: URL, model: ID}})"
    )


JUDGE = "roles:\n  judge: {name: j, endpoint: embedded, kind: chat}"


async def test_the_judge_is_planned_recorded_and_in_the_identity(
    tmp_path: Path, data: Path
) -> None:
    task = {"two_turns": TwoTurns(judge=True)}
    plain = plan_run(config(), data_dir=data, tasks={"two_turns": TwoTurns()})
    judged = plan_run(config(judge=JUDGE), data_dir=data, tasks=task)
    assert judged.inputs["roles"] == {
        "judge": {"endpoint": "embedded", "model": "sieval-reference", "dialect": "openai_chat",
                  "request_defaults": {}}
    }  # fmt: skip
    assert "roles" not in plain.inputs and judged.identity != plain.identity
    assert [pm.label for pm in judged.role_models] == ["j"]
    result = await arun_eval(config(judge=JUDGE), opts(tmp_path), tasks=task)
    assert result.exit_code == 0
    records = read_records(result.run_dir / "m" / "two_turns" / "records.jsonl").records
    for record in records.values():
        assert list(record.requests) == ["turn1", "turn2", "judge:verdict"]
        verdict = record.requests["judge:verdict"]
        assert (verdict.role, verdict.turn) == ("judge", 1)
        assert "[[" in record.channels["verdict"]  # the reference server judged it
    # the judge's calls went to its own server: the wire logs tell them apart
    cost = result.report.results[0].cost
    assert cost.roles["judge"].actual.requests == len(WORDS)
    assert cost.actual.requests == 2 * len(WORDS)
    assert result.report.timings.requests == 3 * len(WORDS)


async def test_the_judge_is_pre_run_and_serving_checked_like_a_model(
    tmp_path: Path, data: Path
) -> None:
    options = RunOptions(
        out=tmp_path / "out", data_dir=data, serving_checks="fingerprint", plan_only=True
    )
    found = await arun_eval(config(judge=JUDGE), options, tasks={"two_turns": TwoTurns(judge=True)})
    checks = {c.check: c.outcome for c in found.setup.checks["j"]}
    assert checks == {"endpoint": "passed", "model": "passed"}
    assert "fingerprint" in json.dumps(found.setup.serving["j"])
    assert found.setup.provenance["j"].endpoint == "embedded"


async def test_a_judge_whose_endpoint_is_down_stops_before_the_first_sample(
    tmp_path: Path, data: Path
) -> None:
    down = "roles:\n  judge: {name: j, endpoint: 'http://127.0.0.1:9', model: x, kind: chat}"
    with pytest.raises(ConfigError) as info:
        await arun_eval(
            config(judge=down), opts(tmp_path), tasks={"two_turns": TwoTurns(judge=True)}
        )
    message = info.value.message
    assert message.startswith(
        "the model playing the role 'judge' ('j', set in the config's roles:) cannot be used, so "
        "no sample was run: "
    )
    assert "127.0.0.1:9" in message
    assert not (tmp_path / "out").exists()  # no run directory: nothing ran


async def test_a_resume_replays_journaled_calls_through_the_same_checks(
    tmp_path: Path, data: Path
) -> None:
    """A sample left without its record (a crash) runs again: its journaled calls are replayed,
    not sent; a journaled reply that no longer passes the checks fails the sample."""
    tasks = {"two_turns": TwoTurns()}
    first = await arun_eval(config(), opts(tmp_path, wire_log=True), tasks=tasks)
    unit = first.run_dir / "m" / "two_turns"
    records = unit / "records.jsonl"
    journal = lines(journal_path(records))
    assert sorted((j["sample"], j["key"]) for j in journal) == [
        (s, k) for s in ("s0", "s1", "s2") for k in ("turn1", "turn2")
    ]
    straight = read_records(records).records
    kept = records.read_text().splitlines()
    # s1 and s2 lose their records (a crash); s2's turn2 reply names another model in the journal
    records.write_text(
        "\n".join(line for line in kept if json.loads(line)["sample_id"] == "s0") + "\n"
    )
    damaged = [
        {**j, "body": j["body"].replace('"sieval-reference"', '"another-model"')}
        if (j["sample"], j["key"]) == ("s2", "turn2")
        else j
        for j in journal
    ]
    assert damaged != journal
    journal_path(records).write_text("".join(json.dumps(j) + "\n" for j in damaged))
    wire = first.run_dir / "m" / "wire.jsonl"
    sent_before = len(wire.read_text().splitlines())
    again = await arun_eval(
        config(), opts(tmp_path, wire_log=True, resume=first.run_dir), tasks=tasks
    )
    assert again.exit_code == 1  # s2 failed: its reply, lifted again, names another model
    assert len(wire.read_text().splitlines()) == sent_before  # nothing was sent again
    resumed = read_records(records).records
    assert resumed["s1"].status == "ok"
    for key in ("turn1", "turn2"):
        was, now = straight["s1"].requests[key], resumed["s1"].requests[key]
        same = ("output", "messages", "turn", "usage", "timings", "status", "finish", "ledger")
        assert [getattr(now, f) for f in same] == [getattr(was, f) for f in same]
    assert resumed["s1"].channels == straight["s1"].channels
    assert resumed["s1"].metrics == straight["s1"].metrics
    assert resumed["s2"].status == "failed"
    assert resumed["s2"].error is not None
    assert resumed["s2"].error["class"] == "ContractViolation"
    assert "reported model 'another-model'" in resumed["s2"].error["message"]


async def test_a_budget_stops_a_conversation_between_calls(tmp_path: Path, data: Path) -> None:
    """A token budget stops the run between two calls; the sample it stopped has no record, its
    answered calls are journaled, and a resume without the budget finishes it without sending
    them again."""
    # turn 1 may take ~25 tokens, turn 2 ~420: a budget of 200 admits every turn 1, no turn 2
    tasks = {"two_turns": TwoTurns(second_max_tokens=400)}
    budget = CostOptions(budget_tokens=200)
    stopped = await arun_eval(config(), opts(tmp_path, wire_log=True, cost=budget), tasks=tasks)
    assert stopped.stopped is not None and stopped.stopped.startswith("stopped: budget")
    unit = stopped.run_dir / "m" / "two_turns"
    done = read_records(unit / "records.jsonl").records
    journaled = {(j["sample"], j["key"]) for j in lines(journal_path(unit / "records.jsonl"))}
    assert all(r.status == "ok" for r in done.values())
    unfinished = {s for s, _ in journaled} - set(done)
    assert unfinished == {"s0", "s1", "s2"} and not done  # each stopped between its turns
    assert all(
        r.usage and r.status == 200 for rec in done.values() for r in rec.requests.values()
    )  # no call was cut
    # (a chat prompt's count is an estimate, so the spent figure may pass the budget: budget.py)
    assert stopped.report.budget.stopped == stopped.stopped
    wire = stopped.run_dir / "m" / "wire.jsonl"
    sent = [json.loads(line) for line in wire.read_text().splitlines()]
    finished = await arun_eval(
        config(), opts(tmp_path, wire_log=True, resume=stopped.run_dir), tasks=tasks
    )
    assert finished.exit_code == 0
    again = [json.loads(line) for line in wire.read_text().splitlines()][len(sent) :]
    asked = [_asked(line) for line in again]
    for sample, key in journaled:
        word = WORDS[int(sample[1:])]
        text = f"say {word}" if key == "turn1" else f"again {word}"
        assert not any(a == text for a in asked), f"{sample}/{key} was sent again"


def _asked(line: dict[str, Any]) -> str | None:
    """The last user message of a wire-log request line, if it holds one."""
    body = line.get("request_body")
    if not isinstance(body, dict):
        return None
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if not users:
        return None
    content = users[-1]["content"]
    return content if isinstance(content, str) else " ".join(p["text"] for p in content)


async def test_the_forecast_of_a_conversation_is_a_bound(tmp_path: Path, data: Path) -> None:
    tasks = {"two_turns": TwoTurns(judge=True)}
    dry = await arun_eval(
        config(judge=JUDGE), opts(tmp_path, cost=CostOptions(dry_run=True)), tasks=tasks
    )
    assert dry.forecast is not None
    own = dry.forecast.unit("m", "two_turns")
    judge = dry.forecast.unit("m", "two_turns", "judge")
    assert own is not None and judge is not None
    assert (own.bound, own.exact, own.requests) == (True, False, 2 * len(WORDS))
    assert (judge.bound, judge.answered_by, judge.requests) == (True, "j", len(WORDS))
    assert own.max_output_tokens == 2 * 12 * len(WORDS)
    shown = "\n".join(
        str(part) if isinstance(part, Text) else _plain(part)
        for part in render_forecast(dry.forecast, {"m": None, "j": None})
    )
    assert "≤ 6" in shown and "two_turns · judge (j)" in shown
    assert "a bound, not a count" in shown
    ran = await arun_eval(config(judge=JUDGE), opts(tmp_path), tasks=tasks)
    actual = ran.report.results[0].cost.actual
    assert actual.output_tokens <= own.max_output_tokens


def _plain(table: Any) -> str:
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()
