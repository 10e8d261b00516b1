"""Few-shot as a multi-turn conversation (lm-eval's ``--fewshot_as_multiturn``, issue 41): on a
chat wire each shot is a user turn and an assistant turn, the description the system message; the
same shots as text are exactly those turns joined by the task's delimiters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.errors import ConfigError
from sieval.ir.request import ChatInput, CompletionInput
from sieval.tasks.base import ModelFacts, TaskConfig
from sieval.tasks.registry import TASKS

CHAT = ModelFacts(input_kind="chat")


def texts(chat: ChatInput) -> list[tuple[str, str]]:
    return [(m.role, "".join(p.text for p in m.content)) for m in chat.messages]  # type: ignore[union-attr]


@pytest.mark.parametrize("k", [1, 3])
def test_the_turns_are_the_shots_of_the_one_message(k: int) -> None:
    task = TASKS["mmlu_kshot_clp"]
    plain = TaskConfig(name=task.name, num_fewshot=k, options={"subjects": "astronomy"})
    turned = TaskConfig(
        name=task.name, num_fewshot=k, options={"subjects": "astronomy"}, fewshot_as_multiturn=True
    )
    one = next(iter(task.load(DATA, plain)))
    many = next(iter(task.load(DATA, turned)))
    assert one.data["shot_ids"] == many.data["shot_ids"]  # the same shots, drawn alike
    (single,) = texts(task.requests(one, plain, CHAT)["letter"].input)  # type: ignore[arg-type]
    turns = texts(task.requests(many, turned, CHAT)["letter"].input)  # type: ignore[arg-type]
    roles = [r for r, _ in turns]
    assert roles == ["system"] + ["user", "assistant"] * k + ["user"]
    assert (
        turns[0][1]
        == "The following are multiple choice questions (with answers) about astronomy.\n\n"
    )
    assert all(t.endswith("Answer:") for r, t in turns if r == "user")
    assert all(t in "ABCD" and len(t) == 1 for r, t in turns if r == "assistant")
    # mmlu's delimiters: " " between a shot's text and its answer, "\n\n" after each shot
    shots = "".join(turns[i][1] + " " + turns[i + 1][1] + "\n\n" for i in range(1, 2 * k, 2))
    assert single == ("user", turns[0][1] + shots + turns[-1][1])


def test_a_raw_text_prompt_is_refused_naming_the_setting() -> None:
    task = TASKS["gsm8k_kshot_base_gen"]
    config = TaskConfig(name=task.name, num_fewshot=2, fewshot_as_multiturn=True)
    sample = next(iter(task.load(DATA, config)))
    with pytest.raises(
        ConfigError, match="fewshot_as_multiturn sends the shots as chat turns"
    ) as e:
        task.requests(sample, config)
    assert "kind: chat" in str(e.value)
    zero = TaskConfig(name=task.name, num_fewshot=0, fewshot_as_multiturn=True)
    sent = task.requests(next(iter(task.load(DATA, zero))), zero)["gen"].input
    assert isinstance(sent, CompletionInput)  # no shots: nothing to turn, the raw text is sent
    assert sent.text.startswith("Question: ")


def sieval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})
    return result.exit_code, " ".join(result.output.split())


def test_the_flag_sends_turns_and_is_recorded(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--kind", "chat", "--task",
        "mmlu_kshot_clp:num_fewshot=2:subjects=astronomy:top_k=19", "--limit", "1",
        "--fewshot-as-multiturn", "--data-dir", str(DATA), "--out", str(tmp_path), "--wire-log",
        "--no-preflight",
    )  # fmt: skip
    assert code == 0, said
    (run,) = tmp_path.iterdir()
    (wire,) = run.glob("*/wire.jsonl")
    bodies = [json.loads(x)["request_body"] for x in wire.read_text().splitlines()]
    sent = [b for b in bodies if b.get("messages")]
    assert sent and all(
        [m["role"] for m in b["messages"]]
        == ["system", "user", "assistant", "user", "assistant", "user"]
        for b in sent
    )
    report = json.loads((run / "report.json").read_text())
    task = report["run"]["inputs"]["tasks"]["mmlu_kshot_clp"]
    assert task["config"]["fewshot_as_multiturn"] is True
    (unit,) = report["results"]
    assert "fewshot_as_multiturn: each shot a user turn and an assistant turn" in unit["protocol"]


def test_the_flag_on_a_completion_wire_stops_before_a_run(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "gsm8k_kshot_base_gen:num_fewshot=2",
        "--limit", "1", "--fewshot-as-multiturn", "--data-dir", str(DATA), "--out", str(tmp_path),
        "--no-preflight",
    )  # fmt: skip
    assert code != 0
    assert "--fewshot-as-multiturn sends the shots as chat turns" in said
    assert "--kind chat" in said
    assert not list(tmp_path.glob("*/records.jsonl")) and not list(
        tmp_path.glob("*/*/records.jsonl")
    )
