"""sieval's BFCL agentic answer check (``scoring/bfcl_agentic.py``, the memory tasks' grader)
equals bfcl-eval 2026.3.23's own (``eval_runner._evaluate_single_agentic_entry`` and its
``agentic_checker``, run in the oracle venv by ``bfcl_agentic_oracle_driver.py``): the same
verdict and ``error_type`` on the same outputs, both columns. The outputs: planted from every
memory question's possible answers (the answer exact, inside a sentence, in BFCL's answer
format, upper-cased, punctuated, joined by hyphens, inside a longer word, a wrong answer, an
empty reply, a call before and after the answer, calls only, a text before the answer, the
answer then an empty reply) and the embedded reference server's
replies to the ``bfcl_memory`` tasks (both columns). The counts are in
docs/evidence/bfcl-checker-parity.md."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sieval.errors import ConfigError
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.reference.server import start_in_thread
from sieval.scoring.bfcl_agentic import answer_of, check_answer, standardised
from sieval.scoring.bfcl_env import oracle_python
from sieval.scoring.bfcl_multi_turn import prompt_calls
from sieval.tasks._bfcl import _oracle_data
from sieval.tasks.base import TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS

DRIVER = Path(__file__).with_name("bfcl_agentic_oracle_driver.py")
FC_CALL = [{"memory_retrieve": "{}"}]
PROMPT_CALL = "[memory_retrieve()]"


@pytest.fixture(scope="module")
def oracle() -> tuple[str, Path]:
    data = _oracle_data()
    try:
        python = oracle_python()
    except ConfigError:
        python = None
    if data is None or python is None:
        pytest.skip(
            "bfcl-eval 2026.3.23 is not installed: run scripts/bfcl-oracle.sh (scripts/test does)"
        )
    return str(python), data


def planted(data: Path) -> list[dict[str, Any]]:
    """Each memory question's outputs (see the module), both columns."""
    items = []
    for line in (data / "possible_answer" / "BFCL_v4_memory.json").read_text().splitlines():
        row = json.loads(line)
        p = str(row["ground_truth"][0])
        texts = {
            "exact": p,
            "sentence": f"Based on my notes, the answer is {p}, as you told me.",
            "format": str({"answer": p, "context": "from the memory"}),
            "upper": p.upper(),
            "punctuated": f"({p}).",
            "hyphens": p.replace(" ", "-"),
            "inside_a_word": f"x{p}s",
            "wrong": "{'answer': 'I do not know', 'context': 'I do not know'}",
            "empty": "",
        }
        for column, call in (("fc", FC_CALL), ("prompt", PROMPT_CALL)):
            for kind, text in texts.items():
                items.append({"kind": kind, "column": column, "result": [text]})
            items.append({"kind": "call_then_answer", "column": column, "result": [call, p]})
            items.append({"kind": "answer_then_call", "column": column, "result": [p, call]})
            items.append({"kind": "calls_only", "column": column, "result": [call, call]})
            items.append({"kind": "two_texts", "column": column, "result": ["Let me see.", p]})
            items.append({"kind": "answer_then_empty", "column": column, "result": [p, ""]})
        for item in items[-28:]:
            item["id"] = f"{row['id']}:{item['column']}:{item['kind']}"
            item["possible"] = row["ground_truth"]
    return items


async def _embedded_replies() -> list[dict[str, Any]]:
    """The reference server's replies to two notetaker questions in each column (its steps as
    BFCL stores them)."""
    running = await asyncio.to_thread(start_in_thread, port=0, max_model_len=1_000_000)
    items = []
    try:
        for name, dialect, column in (
            ("bfcl_memory", "openai_chat", "fc"),
            ("bfcl_memory_prompt", "openai_completions", "prompt"),
        ):
            task = TASKS[name]
            options = {"categories": "memory_rec_sum", "scenarios": "notetaker", "questions": 2}
            cfg = TaskConfig(name=name, options=options)
            (sample,) = task.load(Path("/nonexistent"), cfg)
            async with Model(
                dialect=dialect, base_url=running.url, model_id="sieval-reference"
            ) as model:
                ctx = DirectContext(model, sample, cfg, model_facts(model.dialect))
                result = await task.solve(sample, ctx)
            for question in result.channels["questions"]:
                steps = [
                    [{k: json.dumps(v) for k, v in c.items()} for c in s["calls"]]
                    if column == "fc" and s.get("calls")
                    else s["text"]
                    for s in question["steps"]
                ]
                items.append(
                    {
                        "id": f"{question['id']}:{column}:embedded",
                        "kind": "embedded",
                        "column": column,
                        "result": steps,
                        "possible": question["possible"],
                        "task_verdict": question["reason"],
                    }
                )
    finally:
        await asyncio.to_thread(running.stop)
    return items


def mine(item: dict[str, Any]) -> tuple[bool, str | None]:
    steps = []
    for step in item["result"]:
        if item["column"] == "fc":
            steps.append(("", True) if isinstance(step, list) else (str(step), False))
        else:
            steps.append((str(step), bool(prompt_calls(str(step))[0])))
    verdict = check_answer(answer_of(steps), item["possible"])
    return verdict.valid, verdict.error_type


def theirs(python: str, items: list[dict[str, Any]]) -> dict[str, tuple[bool, str | None]]:
    sent = "".join(json.dumps(i) + "\n" for i in items)
    done = subprocess.run(
        [python, str(DRIVER)], input=sent, capture_output=True, text=True, check=True
    )
    out = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        out[row["id"]] = (row["valid"], row["error_type"])
    return out


def compare(python: str, items: list[dict[str, Any]]) -> tuple[Counter[tuple[str, ...]], list]:
    oracle = theirs(python, items)
    counts: Counter[tuple[str, ...]] = Counter()
    differ = []
    for item in items:
        got = mine(item)
        if got != oracle[item["id"]]:
            differ.append((item["id"], got, oracle[item["id"]]))
        counts[(item["column"], item["kind"], "pass" if got[0] else str(got[1]))] += 1
    return counts, differ


def test_the_check_agrees_with_bfcl_eval_on_planted_and_embedded_outputs(
    oracle: tuple[str, Path],
) -> None:
    python, data = oracle
    embedded = asyncio.run(_embedded_replies())
    # the task graded the embedded replies as this check does
    assert all(mine(i)[1] == i["task_verdict"] for i in embedded)
    items = planted(data) + embedded
    counts, differ = compare(python, items)
    assert differ == []
    verdicts = {v for (_, _, v) in counts}
    assert verdicts == {"pass", "agentic:answer_not_found", "agentic:no_last_message"}
    for column in ("fc", "prompt"):
        assert counts[(column, "exact", "pass")] == 155
        assert counts[(column, "calls_only", "agentic:no_last_message")] == 155
        assert counts[(column, "empty", "agentic:no_last_message")] == 155
        assert counts[(column, "embedded", "agentic:answer_not_found")] == 2
        # the last text is graded, not the first
        assert counts[(column, "two_texts", "pass")] == 155
        assert counts[(column, "answer_then_empty", "agentic:no_last_message")] == 155


def test_the_oracle_is_the_real_checker_it_fails_a_planted_wrong_answer(
    oracle: tuple[str, Path],
) -> None:
    python, _ = oracle
    item = {"id": "x", "column": "fc", "result": ["Tacoma"], "possible": ["Seattle"]}
    right = {**item, "id": "y", "result": ["It is seattle."]}
    assert theirs(python, [item, right]) == {
        "x": (False, "agentic:answer_not_found"),
        "y": (True, None),
    }


def test_standardisation_drops_bfcl_s_punctuation_and_matches_whole_words() -> None:
    assert standardised("April 1, 2024 (Mon.) *^_-/") == "april 1 2024 mon "
    assert standardised("It's") == 'it"s'
    # whitespace is kept (bfcl-eval's docstrings say it is ignored; its code keeps it)
    assert check_answer("on April 1 2024.", ["April 1, 2024"]).valid
    assert not check_answer("on April 1,2024.", ["April 1, 2024"]).valid
    assert not check_answer("in 1350", ["35"]).valid  # a number inside a longer one
    assert check_answer("thirty-five", ["thirty five"]).error_type == "agentic:answer_not_found"
    assert answer_of([("first", False), ("", True)]) == "first"
    assert answer_of([("", True)]) is None
