"""The two tasks that are not static: MT-Bench's two turns (no judge) and the bank tool loop,
their planning (the first turn as sent, the rest as a bound) and a solve against the embedded
reference server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest

from sieval.dialects.registry import get_dialect
from sieval.errors import ConfigError
from sieval.ir.request import ChatInput
from sieval.model import Model
from sieval.plan.plan import model_facts
from sieval.runner.preflight import embedded_server
from sieval.tasks.bank_tools import SAMPLES, Bank
from sieval.tasks.base import TaskConfig
from sieval.tasks.context import DirectContext
from sieval.tasks.registry import TASKS

MT = TASKS["mt_bench_answers"]
BANK = TASKS["bank_tools"]


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with embedded_server() as found:
        yield found


def test_mt_bench_asks_as_fastchat_does(data_dir: Path) -> None:
    config = TaskConfig(name="mt_bench_answers")
    samples = {s.id: s for s in MT.load(data_dir, config)}
    assert len(samples) == 80 and not MT.static and MT.requests(samples["81"], config) is None
    writing, math = samples["81"], samples["111"]
    assert (writing.group, math.group) == ("writing", "math")
    first, second = MT.calls(writing, config, model_facts(get_dialect("openai_chat")))
    assert (first.name, first.exact, second.name, second.exact) == ("turn1", True, "turn2", False)
    assert (first.request.sampling.temperature, first.request.sampling.seed) == (0.7, 1234)
    assert first.request.sampling.max_tokens == 1024 == second.unseen_tokens
    (m1, _) = MT.calls(math, config)
    (no_seed, _) = MT.calls(writing, config, model_facts(get_dialect("openai_responses")))
    assert no_seed.request.sampling.seed is msgspec.UNSET  # the Responses wire has none
    assert m1.request.sampling.temperature == 0.0 and m1.request.sampling.seed is msgspec.UNSET
    assert isinstance(second.request.input, ChatInput)
    roles = [m.role for m in second.request.input.messages]
    assert roles == ["user", "assistant", "user"]  # turn 2 after a stand-in for the answer


async def test_mt_bench_asks_turn_two_after_the_model_s_own_answer(
    url: str, data_dir: Path
) -> None:
    config = TaskConfig(name="mt_bench_answers", options={"max_tokens": 32})
    sample = next(iter(MT.load(data_dir, config)))
    async with Model(dialect="openai_chat", base_url=url, model_id="sieval-reference") as model:
        ctx = DirectContext(model, sample, config, model_facts(model.dialect))
        result = await MT.solve(sample, ctx)
    first = ctx.calls["turn1"].result().choices[0].text
    sent = ctx.calls["turn2"].request.input
    assert isinstance(sent, ChatInput)
    assert [p.text for p in sent.messages[1].content] == [first]  # type: ignore[union-attr]
    assert result.channels["answers"][0] == first
    assert result.metrics["turn1_chars"] == len(first)
    assert result.metrics["complete"] == float(
        all(result.channels["answers"]) and "length" not in result.channels["finish_reasons"]
    )


@pytest.mark.parametrize(
    "dialect", ["openai_chat", "openai_responses", "anthropic_messages", "google_genai"]
)
async def test_a_turn_cut_at_its_budget_is_cut_on_every_wire(
    url: str, data_dir: Path, dialect: str
) -> None:
    # each wire says "cut" in its own word (length, max_output_tokens, max_tokens, MAX_TOKENS):
    # reading only "length" scored the same cut answers complete on three wires of four
    config = TaskConfig(name="mt_bench_answers", options={"max_tokens": 3})
    sample = next(iter(MT.load(data_dir, config)))
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        ctx = DirectContext(model, sample, config, model_facts(model.dialect))
        result = await MT.solve(sample, ctx)
    assert [ctx.calls[t].result().usage.output_tokens for t in ("turn1", "turn2")] == [3, 3]
    assert (result.metrics["turn1_cut"], result.metrics["turn2_cut"]) == (1.0, 1.0)
    assert result.metrics["complete"] == 0.0


ORACLE = {
    "copy-deposit": [("deposit", "savings", 40)],
    "copy-two-calls": [("withdraw", "checking", 10), ("deposit", "savings", 10)],
    "deposit": [("deposit", "savings", 40)],
    "withdraw": [("withdraw", "checking", 30)],
    "transfer": [("transfer", "checking", "savings", 25)],
    "two-calls": [("withdraw", "checking", 10), ("deposit", "savings", 10)],
    "overdraft": [],
    "balance-only": [],
    "three-accounts": [("transfer", "travel", "checking", 120)],
    "words-deposit": [("deposit", "savings", 15)],
    "words-move": [("transfer", "checking", "savings", 60)],
    "words-even": [("transfer", "checking", "savings", 30)],
    "words-overdraft": [("withdraw", "checking", 80)],
    "words-empty": [("transfer", "savings", "checking", 5)],
    "words-two-steps": [("deposit", "checking", 20), ("transfer", "checking", "savings", 60)],
    "words-check-first": [("transfer", "savings", "checking", 5)],
}
"""What each request asks, worked out by hand: running it on the start state gives the end."""


def test_each_bank_sample_s_end_state_is_its_request_carried_out() -> None:
    assert [row["id"] for row in SAMPLES] == list(ORACLE)
    for row in SAMPLES:
        bank = Bank(row["start"])
        for name, *args in ORACLE[row["id"]]:
            _, failed = bank.run(name, dict(zip(_PARAMS[name], args, strict=True)))
            assert not failed
        assert bank.accounts == row["end"], row["id"]


_PARAMS = {
    "deposit": ("account", "amount"),
    "withdraw": ("account", "amount"),
    "transfer": ("source", "target", "amount"),
}


@pytest.mark.parametrize("dialect", ["openai_chat", "openai_responses", "anthropic_messages"])
async def test_the_bank_task_ends_right_where_the_request_spells_out_the_calls(
    url: str, dialect: str
) -> None:
    config = TaskConfig(name="bank_tools")
    spelled = [
        s for s in BANK.load(Path(), config) if s.id.startswith("copy") or "=" in s.data["request"]
    ]
    assert len(spelled) == 9
    async with Model(dialect=dialect, base_url=url, model_id="sieval-reference") as model:
        for sample in spelled:
            ctx = DirectContext(model, sample, config, model_facts(model.dialect))
            result = await BANK.solve(sample, ctx)
            assert result.metrics["end_state"] == 1.0, (dialect, sample.id)
            assert result.channels["stop_reason"] == "answered"
            assert list(ctx.calls) == [f"turn{i}" for i in range(1, len(ctx.calls) + 1)]


def test_an_option_the_task_does_not_read_is_refused(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"^task bank_tools has no option turn; it accepts: "
                       r"max_tokens, turns$"):  # fmt: skip
        list(BANK.load(data_dir, TaskConfig(name="bank_tools", options={"turn": 3})))
    with pytest.raises(ConfigError, match=r"^task mt_bench_answers is 0-shot; drop num_fewshot$"):
        list(MT.load(data_dir, TaskConfig(name="mt_bench_answers", num_fewshot=2)))
