"""``--gen-kwargs`` overrides what a task sets, as lm-eval's ``--gen_kwargs`` and Inspect's
``--temperature`` do (issue 41): ``temperature=0.7,max_gen_toks=64`` on a greedy 256-token task
sends 0.7 and 64 (read from the wire log, what went to the server), and one line says what it
overrode. A config's ``request_defaults`` still only fill what a task leaves unset."""

from __future__ import annotations

import json
from pathlib import Path

from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.ir.defaults import overridden, with_defaults, with_overrides
from sieval.ir.request import Request, Sampling


def sieval(*args: str, width: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    return result.exit_code, " ".join(result.output.split())


def test_an_override_wins_where_a_default_does_not() -> None:
    task = Request.completion("Q:", sampling=Sampling(temperature=0.0, max_tokens=256))
    wanted = {"sampling.temperature": 0.7, "sampling.max_tokens": 64, "options.min_p": 0.1}
    sent = with_overrides(task, wanted)
    assert (sent.sampling.temperature, sent.sampling.max_tokens) == (0.7, 64)
    assert sent.options == {"min_p": 0.1}
    kept = with_defaults(task, wanted)  # a default fills only what is unset
    assert (kept.sampling.temperature, kept.sampling.max_tokens) == (0.0, 256)
    assert overridden(task, wanted) == [
        ("sampling.temperature", 0.0, 0.7),
        ("sampling.max_tokens", 256, 64),
    ]  # min_p the task never set: not an override
    assert overridden(task, {"sampling.temperature": 0.0}) == []  # the same value


def test_gen_kwargs_override_a_task_and_say_so(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "gsm8k_kshot_base_gen", "--limit", "1",
        "--gen-kwargs", "temperature=0.7,max_gen_toks=64", "--data-dir", str(DATA),
        "--out", str(tmp_path), "--wire-log", "--no-preflight",
    )  # fmt: skip
    assert code == 0, said
    line = (
        "--gen-kwargs overrides what gsm8k_kshot_base_gen sets: sampling.temperature 0.0 -> 0.7, "
        "sampling.max_tokens 256 -> 64"
    )
    assert said.count(line) == 2  # as the run starts, and among the summary's warnings
    (run,) = tmp_path.iterdir()
    (wire,) = run.glob("*/wire.jsonl")
    bodies = [json.loads(x)["request_body"] for x in wire.read_text().splitlines()]
    sent = [b for b in bodies if "prompt" in b]
    assert sent and all(b["temperature"] == 0.7 and b["max_tokens"] == 64 for b in sent)
    report = json.loads((run / "report.json").read_text())
    assert line in report["warnings"]
    identity = report["run"]["inputs"]["models"]["sieval-reference"]
    assert identity["request_overrides"] == {
        "sampling.max_tokens": 64,
        "sampling.temperature": 0.7,
    }


def test_a_sampled_0shot_task_takes_a_temperature(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--kind", "chat", "--task", "gsm8k_0shot_gen",
        "--limit", "1", "--gen-kwargs", "temperature=1.0", "--data-dir", str(DATA),
        "--out", str(tmp_path), "--dry-run",
    )  # fmt: skip
    assert code == 0, said
    assert "--gen-kwargs overrides what gsm8k_0shot_gen sets: sampling.temperature 0.0 -> 1.0" in (
        said
    )


def test_a_system_instruction_goes_first() -> None:
    from sieval.ir.defaults import with_system
    from sieval.ir.request import ChatInput, Message, TextPart

    user = Message(role="user", content=(TextPart(text="Q?"),))
    alone = with_system(Request(input=ChatInput(messages=(user,))), "Be brief.")
    assert isinstance(alone.input, ChatInput)
    assert [m.role for m in alone.input.messages] == ["system", "user"]
    assert alone.input.messages[0].content == (TextPart(text="Be brief."),)
    own = Message(role="system", content=(TextPart(text="You grade."),))
    both = with_system(Request(input=ChatInput(messages=(own, user))), "Be brief.")
    assert isinstance(both.input, ChatInput) and len(both.input.messages) == 2
    assert both.input.messages[0].content == (
        TextPart(text="Be brief.\n\n"),
        TextPart(text="You grade."),
    )


def test_system_instruction_on_a_chat_wire_and_refused_on_a_completion_wire(
    tmp_path: Path,
) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--kind", "chat", "--task", "gsm8k_0shot_gen",
        "--limit", "1", "--system-instruction", "Answer briefly.", "--data-dir", str(DATA),
        "--out", str(tmp_path), "--wire-log", "--no-preflight",
    )  # fmt: skip
    assert code == 0, said
    (run,) = tmp_path.iterdir()
    (wire,) = run.glob("*/wire.jsonl")
    bodies = [json.loads(x)["request_body"] for x in wire.read_text().splitlines()]
    chats = [b for b in bodies if "messages" in b]
    assert chats and all(b["messages"][0]["role"] == "system" for b in chats)
    assert all(b["messages"][0]["content"][0]["text"] == "Answer briefly." for b in chats)
    report = json.loads((run / "report.json").read_text())
    model = report["run"]["inputs"]["models"]["sieval-reference"]
    assert model["system_instruction"] == "Answer briefly."
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy", "--limit", "1",
        "--system-instruction", "Answer briefly.", "--data-dir", str(DATA),
    )  # fmt: skip
    assert code == 2 and "--system-instruction needs a chat wire" in said
    assert "run it with --kind chat" in said
