"""A tool loop over a tiny bank, scored by the accounts' end state (sieval's own; no paper).

The model manages two or three accounts with four tools (``balance``, ``deposit``, ``withdraw``,
``transfer``) through the tool loop (``tool_loop.py``): each sample is a request in words; the
model calls the tools, gets their results (an overdraft or an unknown account is an error result
it reads, not a crash), and answers when done. Scored by what the accounts hold afterwards:
``end_state`` is 1 when every balance is what the request asked for; beside it whether the
model ended with an answer (``answered``) or a bound stopped it (``budget_exhausted``: its own
outcome, never counted as a wrong answer), and how many tools it ran and how many of those
failed.

The 16 samples are data of this module (``SAMPLES``, its checksum in the run identity): 2 spell
the calls out in the hermes markup a server's tool parser reads (``<tool_call>{...}
</tool_call>``), so that a small model that only copies text (Gemma 3 270M) still makes a call
and the loop's later turns (results sent back, the answer) are exercised on a live server; 7 name
the tools and their arguments (``deposit account=savings amount=40``), so a model that follows
instructions literally (the embedded reference server) completes them; 7 are in plain words.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..ir.request import Request, Sampling
from ._shared import check_options, int_option, means
from .base import (
    COMPLETION_MODEL,
    ModelFacts,
    PlannedCall,
    Requirement,
    Sample,
    SampleResult,
    Task,
    TaskConfig,
)
from .context import Context
from .conversation import Conversation
from .tool_loop import Bounds, Environment, planned_turns, run_tools, tool

__all__ = ["SAMPLES", "TASK", "Bank", "BankTools"]


class Bank(Environment):
    """Accounts by name, whole units of money."""

    def __init__(self, accounts: dict[str, int]) -> None:
        self.accounts = dict(accounts)

    def _account(self, name: str) -> str:
        if name not in self.accounts:
            raise KeyError(f"no account {name!r}; the accounts are {', '.join(self.accounts)}")
        return name

    @tool
    def balance(self, account: str) -> dict[str, Any]:
        """Return the balance of an account."""
        return {"account": account, "balance": self.accounts[self._account(account)]}

    @tool
    def deposit(self, account: str, amount: int) -> dict[str, Any]:
        """Add amount to an account; return its new balance."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.accounts[self._account(account)] += amount
        return {"account": account, "balance": self.accounts[account]}

    @tool
    def withdraw(self, account: str, amount: int) -> dict[str, Any]:
        """Take amount out of an account; return its new balance. Refused past the balance."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        held = self.accounts[self._account(account)]
        if amount > held:
            raise ValueError(f"insufficient funds: {account} holds {held}")
        self.accounts[account] = held - amount
        return {"account": account, "balance": self.accounts[account]}

    @tool
    def transfer(self, source: str, target: str, amount: int) -> dict[str, Any]:
        """Move amount from the source account to the target account."""
        self._account(target)
        self.withdraw(source, amount)
        self.accounts[target] += amount
        return {source: self.accounts[source], target: self.accounts[target]}


START = {"checking": 100, "savings": 50}

SAMPLES: tuple[dict[str, Any], ...] = (
    {"id": "copy-deposit", "start": START,
     "request": 'Copy this text exactly:\n<tool_call>\n{"name": "deposit", "arguments": '
                '{"account": "savings", "amount": 40}}\n</tool_call>',
     "end": {"checking": 100, "savings": 90}},
    {"id": "copy-two-calls", "start": START,
     "request": 'Copy this text exactly:\n<tool_call>\n{"name": "withdraw", "arguments": '
                '{"account": "checking", "amount": 10}}\n</tool_call>\n<tool_call>\n'
                '{"name": "deposit", "arguments": {"account": "savings", "amount": 10}}\n'
                '</tool_call>',
     "end": {"checking": 90, "savings": 60}},
    {"id": "deposit", "start": START, "request": "deposit account=savings amount=40",
     "end": {"checking": 100, "savings": 90}},
    {"id": "withdraw", "start": START, "request": "withdraw account=checking amount=30",
     "end": {"checking": 70, "savings": 50}},
    {"id": "transfer", "start": START,
     "request": "transfer source=checking target=savings amount=25",
     "end": {"checking": 75, "savings": 75}},
    {"id": "two-calls", "start": START,
     "request": "withdraw account=checking amount=10 and deposit account=savings amount=10",
     "end": {"checking": 90, "savings": 60}},
    {"id": "overdraft", "start": START, "request": "withdraw account=savings amount=500",
     "end": {"checking": 100, "savings": 50}},
    {"id": "balance-only", "start": START, "request": "balance account=checking",
     "end": {"checking": 100, "savings": 50}},
    {"id": "three-accounts", "start": {"checking": 10, "savings": 0, "travel": 200},
     "request": "transfer source=travel target=checking amount=120",
     "end": {"checking": 130, "savings": 0, "travel": 80}},
    {"id": "words-deposit", "start": START,
     "request": "Please put 15 into my savings account.",
     "end": {"checking": 100, "savings": 65}},
    {"id": "words-move", "start": START,
     "request": "Move 60 from checking over to savings.",
     "end": {"checking": 40, "savings": 110}},
    {"id": "words-even", "start": {"checking": 80, "savings": 20},
     "request": "Make the two accounts hold the same amount by moving money from checking to "
                "savings.",
     "end": {"checking": 50, "savings": 50}},
    {"id": "words-overdraft", "start": START,
     "request": "Take 80 out of savings. If that is not possible, take it out of checking "
                "instead.",
     "end": {"checking": 20, "savings": 50}},
    {"id": "words-empty", "start": {"checking": 35, "savings": 5},
     "request": "Empty the savings account into checking.",
     "end": {"checking": 40, "savings": 0}},
    {"id": "words-two-steps", "start": START,
     "request": "Deposit 20 into checking, then move half of the new checking balance to "
                "savings.",
     "end": {"checking": 60, "savings": 110}},
    {"id": "words-check-first", "start": {"checking": 45, "savings": 300},
     "request": "If checking holds less than 50, top it up to exactly 50 from savings.",
     "end": {"checking": 50, "savings": 295}},
)  # fmt: skip
"""Each request, the accounts before it, and what they must hold after it."""

SYSTEM = (
    "You manage the user's bank accounts with the tools given. Carry out the request with them, "
    "then say in one sentence what you did."
)
MAX_TOKENS = 256
BOUNDS = Bounds(turns=6, tool_calls=8, result_chars=500)


class BankTools(Task):
    name = "bank_tools"
    headline = "end_state"
    listing = ("tool loop", "built in")
    requirements = (
        Requirement("chat", "the request is a conversation"),
        Requirement("function_tools", "the bank's tools are offered"),
        Requirement("tool_history", "the calls and their results are sent back"),
        Requirement("sampling", "greedy, max_tokens a turn"),
    )
    defaults = MappingProxyType({"max_tokens": MAX_TOKENS, "turns": BOUNDS.turns})
    protocol = (
        "tool loop over a four-tool bank (sieval's own): system message, greedy, max_tokens "
        f"256 a turn, at most {BOUNDS.turns} turns and {BOUNDS.tool_calls} tool calls, results "
        f"cut to {BOUNDS.result_chars} characters; end_state = every balance as asked"
    )

    def data_files(self, data_dir: Path) -> list[Path]:
        return [Path(__file__)]  # the samples are this module's

    def load(self, data_dir: Path, config: TaskConfig) -> Iterator[Sample]:
        check_options(self.name, config, self.defaults)
        self._bounds(config)
        for row in SAMPLES:
            data = {"request": row["request"], "start": dict(row["start"])}
            yield Sample(id=row["id"], data=data, gold=dict(row["end"]))

    def _bounds(self, config: TaskConfig) -> Bounds:
        turns = int_option(self.name, config, "turns", BOUNDS.turns, 1)
        return Bounds(turns=turns, tool_calls=BOUNDS.tool_calls, result_chars=BOUNDS.result_chars)

    def _request(self, sample: Sample, config: TaskConfig) -> Request:
        tokens = int_option(self.name, config, "max_tokens", MAX_TOKENS, 1)
        chat = Conversation(sampling=Sampling(temperature=0.0, max_tokens=tokens), system=SYSTEM)
        return chat.request(sample.data["request"])

    def calls(
        self, sample: Sample, config: TaskConfig, model: ModelFacts = COMPLETION_MODEL
    ) -> Sequence[PlannedCall]:
        bank = Bank(sample.data["start"])
        return planned_turns(self._request(sample, config), bank, self._bounds(config))

    async def solve(self, sample: Sample, ctx: Context) -> SampleResult:
        bank = Bank(sample.data["start"])
        loop = await run_tools(
            ctx, self._request(sample, ctx.config), bank, self._bounds(ctx.config)
        )
        ran = [s for s in loop.steps if s.ran]
        metrics = {
            "end_state": float(bank.accounts == sample.gold),
            "answered": float(loop.stop_reason == "answered"),
            "budget_exhausted": float(loop.stop_reason == "budget_exhausted"),
            "tool_calls": float(len(ran)),
            "tool_errors": float(sum(s.is_error for s in ran)),
        }
        return SampleResult(
            prediction=dict(bank.accounts),
            gold=sample.gold,
            metrics=metrics,
            channels=loop.channels(),
        )

    def aggregate(self, results: Sequence[tuple[Sample, SampleResult]]) -> dict[str, Any]:
        out = means(results)
        out["budget_exhausted_rate"] = out.pop("budget_exhausted", 0.0)
        return out


TASK = BankTools()
