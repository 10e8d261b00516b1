"""``--apply-chat-template`` (lm-eval's ``--apply_chat_template``, issue 41): on a completion wire
a task's chat prompt is rendered by the server's own chat template (its ``/tokenize`` with
``messages``) and sent as those token ids, so the prompt is byte for byte the one the chat route
builds: the embedded reference server's chat route answers the same, token for token. Recorded
in the identity and the protocol (absent when off); a scoring task and a server without the
route are refused before any request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from runs import DATA
from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.errors import ConfigError
from sieval.export import export_run
from sieval.ir.request import ChatInput
from sieval.model import Model
from sieval.reference.chat_template import render_messages
from sieval.reference.lm import get_model
from sieval.tasks.base import ModelFacts, TaskConfig
from sieval.tasks.registry import TASKS
from sieval.transport import HttpReply, HttpRequest
from sieval.transport.fake import FakeTransport

TASK = "gsm8k_0shot_gen"
SYSTEM = "Answer briefly."
RUN_DIRS: dict[Path, Path] = {}
"""Each ``run``'s run directory, by its ``out``."""


def sieval(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})
    return result.exit_code, " ".join(result.output.split())


def run(out: Path, *flags: str, task: str = TASK) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 2-sample run on the embedded server: its report and the model exchanges sent."""
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", task, "--limit", "2", "--data-dir", str(DATA),
        "--out", str(out), "--wire-log", "--no-preflight", "--serving-checks", "off", *flags,
    )  # fmt: skip
    assert code == 0, said
    (run_dir,) = out.iterdir()
    RUN_DIRS[out] = run_dir
    (wire,) = run_dir.glob("*/wire.jsonl")
    exchanges = [json.loads(line) for line in wire.read_text().splitlines()]
    sent = [x for x in exchanges if not x["url"].endswith("/tokenize")]
    return json.loads((run_dir / "report.json").read_text()), sent


def answer(exchange: dict[str, Any]) -> str:
    reply = exchange["reply_body"]
    if "choices" not in reply:  # SGLang's /generate
        return str(reply["text"])
    choice = reply["choices"][0]
    return choice["text"] if "text" in choice else choice["message"]["content"]


@pytest.mark.parametrize("kind", ["completion", "sglang"])
def test_the_prompt_is_the_templates_rendering_and_answers_as_the_chat_route(
    tmp_path: Path, kind: str
) -> None:
    dialect = {"completion": "openai_completions", "sglang": "sglang_native"}[kind]
    report, templated = run(
        tmp_path / "templated", "--dialect", dialect, "--apply-chat-template",
        "--system-instruction", SYSTEM,
    )  # fmt: skip
    plain, chat = run(tmp_path / "chat", "--kind", "chat", "--system-instruction", SYSTEM)
    assert len(templated) == len(chat) == 2
    for ours, theirs in zip(templated, chat, strict=True):
        assert [m["role"] for m in theirs["request_body"]["messages"]] == ["system", "user"]
        # the template's own rendering (one BOS: the template's, none added to a prompt of ids)
        expected = rendered(theirs)
        body = ours["request_body"]
        sent = body["prompt"] if kind == "completion" else body["input_ids"]
        assert sent == expected and sent.count(sent[0]) == 1
        if kind == "completion":  # the chat route counted the same prompt
            assert ours["reply_body"]["usage"] == theirs["reply_body"]["usage"]
        assert answer(ours) == answer(theirs)  # greedy: the same prompt, the same answer
    config = report["run"]["inputs"]["tasks"][TASK]["config"]
    assert config["apply_chat_template"] is True
    assert "apply_chat_template" not in plain["run"]["inputs"]["tasks"][TASK]["config"]
    (unit,) = report["results"]
    assert "apply_chat_template: the chat prompt rendered by the server's own" in unit["protocol"]
    (other,) = plain["results"]
    assert "apply_chat_template" not in other["protocol"]
    # the lm-eval export names the tasks the template rendered (none in the chat run)
    for out, expected in ((tmp_path / "templated", [TASK]), (tmp_path / "chat", None)):
        written = export_run(RUN_DIRS[out], "lm-eval", out / "lm_eval")
        (results,) = [p for p in written if p.name.startswith("results_")]
        exported = json.loads(results.read_text())
        assert exported["sieval"].get("apply_chat_template") == expected
        assert exported["chat_template"] is None  # lm-eval's holds the template: never copied


def rendered(chat: dict[str, Any]) -> list[int]:
    """The reference template's rendering of a chat exchange's messages, as token ids."""
    messages = [
        {"role": m["role"], "content": "".join(p["text"] for p in m["content"])}
        for m in chat["request_body"]["messages"]
    ]
    return get_model().tokenize(render_messages(messages), add_bos=True)


def test_the_shots_as_turns_go_through_the_template(tmp_path: Path) -> None:
    task = "mmlu_kshot_clp:num_fewshot=2:subjects=astronomy:top_k=19"
    flags = ("--fewshot-as-multiturn",)
    _, templated = run(tmp_path / "t", *flags, "--apply-chat-template", task=task)
    _, chat = run(tmp_path / "c", *flags, "--kind", "chat", task=task)
    roles = [m["role"] for m in chat[0]["request_body"]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [x["request_body"]["prompt"] for x in templated] == [rendered(x) for x in chat]


def test_the_flag_on_a_chat_wire_changes_nothing_and_says_so(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--kind", "chat", "--task", TASK, "--limit", "1",
        "--apply-chat-template", "--data-dir", str(DATA), "--out", str(tmp_path),
        "--no-preflight", "--serving-checks", "off",
    )  # fmt: skip
    assert code == 0, said
    assert "--apply-chat-template (gsm8k_0shot_gen) changes nothing for model" in said
    (run_dir,) = tmp_path.iterdir()
    (unit,) = json.loads((run_dir / "report.json").read_text())["results"]
    assert "apply_chat_template" not in unit["protocol"]


def test_a_scoring_task_is_refused_before_a_run(tmp_path: Path) -> None:
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", "arc_easy_kshot_ppl", "--limit", "1",
        "--apply-chat-template", "--data-dir", str(DATA), "--out", str(tmp_path),
        "--no-preflight",
    )  # fmt: skip
    assert code != 0
    assert "--apply-chat-template renders a chat prompt to generate from" in said
    assert "a continuation's log-likelihood after its context" in said
    assert not list(tmp_path.glob("**/records.jsonl"))


def test_a_server_without_the_route_is_refused_naming_the_fix() -> None:
    def handler(request: HttpRequest) -> HttpReply:
        return HttpReply(status=404, headers={}, body=b'{"detail": "Not Found"}')

    fake = FakeTransport(handler)
    model = Model(
        dialect="openai_completions", base_url="http://x", model_id="m", transport=fake,
        chat_template=True,
    )  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        asyncio.run(model.check_chat_template())
    said = refused.value.message
    assert "POST /tokenize" in said and "answered HTTP 404" in said
    assert "a chat wire with kind: chat" in said and "drop apply_chat_template" in said
    assert [r.url for r in fake.calls] == ["http://x/tokenize"]  # asked once, nothing else sent
    assert not Model(dialect="openai_chat", base_url="http://x", model_id="m").chat_template


def test_the_forecast_counts_the_templated_prompts_exactly(tmp_path: Path) -> None:
    task = TASKS[TASK]
    config = TaskConfig(name=TASK, n=2)
    chat = ModelFacts(input_kind="chat")
    expected = 0
    for sample in list(task.load(DATA, config))[:2]:
        (request,) = task.requests(sample, config, chat).values()
        assert isinstance(request.input, ChatInput)
        messages = [
            {"role": m.role, "content": "".join(p.text for p in m.content)}  # type: ignore[union-attr]
            for m in request.input.messages
        ]
        expected += len(get_model().tokenize(render_messages(messages), add_bos=True))
    code, said = sieval(
        "eval", "--endpoint", "embedded", "--task", TASK, "--limit", "2", "--apply-chat-template",
        "--data-dir", str(DATA), "--out", str(tmp_path), "--dry-run",
    )  # fmt: skip
    assert code == 0, said
    assert f"│ {TASK} │ 2 │ 2 │ {expected} │ 512 │" in said  # no "~": counted, not estimated
    assert "exact: POST /tokenize (2 distinct prompts asked" in said
