"""Small conversational tasks over the fake data (``fakes.write_data``), for the embedded reference
server's chat wire: two turns, the second after the model's answer, and (``judge=True``) a
verdict asked of the model playing the ``judge`` role.

With ``SIEVAL_TEST_HANG=<sample id>`` in the environment, that sample's ``solve`` writes
``SIEVAL_TEST_MARK`` (a file path) once its first turn is answered and then waits forever: a
test kills the process there, between two turns.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from sieval.ir.request import Request, Sampling
from sieval.tasks.base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Requirement,
    Sample,
    SampleResult,
    Task,
    TaskConfig,
)
from sieval.tasks.context import Context
from sieval.tasks.conversation import Conversation, message

DATA_FILE = "fake.txt"
"""``fakes.DATA_FILE``: the words ``fakes.write_data`` writes."""
HANG = "SIEVAL_TEST_HANG"
MARK = "SIEVAL_TEST_MARK"
SAMPLING = Sampling(temperature=0.0, max_tokens=12)
JUDGE_PROMPT = (
    "Rate the answer from 1 to 10 and write the rating as [[rating]].\n"
    "[Question]\nsay {word}\n[The Start of Assistant's Answer]\n{answer}\n"
    "[The End of Assistant's Answer]"
)


class TwoTurns(Task):
    protocol = "two turns over a word (a test task)"
    headline = "answered"
    requirements = (Requirement("chat", "a conversation"),)

    def __init__(
        self, name: str = "two_turns", *, judge: bool = False, second_max_tokens: int = 12
    ) -> None:
        self.name = name
        self.roles = ("judge",) if judge else ()
        self.second = Sampling(temperature=0.0, max_tokens=second_max_tokens)

    def data_files(self, data_dir: Path) -> list[Path]:
        return [data_dir / DATA_FILE]

    def load(self, data_dir: Path, config: TaskConfig) -> list[Sample]:
        words = (data_dir / DATA_FILE).read_text().split()
        return [Sample(id=f"s{i}", data={"word": w}, gold=None) for i, w in enumerate(words)]

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        word = sample.data["word"]
        chat = Conversation(sampling=SAMPLING)
        later = Conversation(
            sampling=self.second,
            messages=[message("user", f"say {word}"), message("assistant", "x")],
        )
        calls = [
            PlannedCall("turn1", chat.request(f"say {word}")),
            PlannedCall("turn2", later.request(f"again {word}"), exact=False, unseen_tokens=12),
        ]
        if self.roles:
            judged = _judge_request(word, "x")
            calls.append(
                PlannedCall("verdict", judged, role="judge", exact=False, unseen_tokens=12)
            )
        return calls

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        word = sample.data["word"]
        chat = Conversation(sampling=SAMPLING)
        first = await chat.ask(ctx, "turn1", f"say {word}")
        if os.environ.get(HANG) == sample.id:
            Path(os.environ[MARK]).write_text(sample.id)
            await asyncio.Event().wait()  # killed here, between the turns
        chat.sampling = self.second
        second = await chat.ask(ctx, "turn2", f"again {word}")
        metrics = {"answered": float(bool(first.text and second.text))}
        channels = {"answers": [first.text, second.text]}
        if self.roles:
            verdict = await ctx.role("judge").call("verdict", _judge_request(word, second.text))
            channels["verdict"] = verdict.result().choices[0].text
        return SampleResult(prediction=second.text, gold=None, metrics=metrics, channels=channels)


def _judge_request(word: str, answer: str) -> Request:
    text = JUDGE_PROMPT.format(word=word, answer=answer)
    return Conversation(sampling=Sampling(temperature=0.0, max_tokens=120)).request(text)
