"""Budgets: ``--budget-tokens N`` and ``--budget-cost X`` stop a run cleanly once spent; parsed
here and nowhere else.

The rule, exactly: **a sample starts only when what the run has spent, plus the most every
sample in flight may still spend, plus the most this sample may spend, stays within every
budget.** A sample's most is its forecast: its prompt tokens (counted as the forecast counts
them: ``counting.PromptCounter``) plus each request's ``max_tokens`` times ``n``, at the model's
``price:`` for a cost. A sample that does not fit waits for the samples in flight (once recorded,
each counts what its replies reported instead of its most) and asks again; when nothing is in
flight and it still does not fit, the run stops: no further sample starts, the samples that were
in flight have finished and are recorded, and the run ends with exit 1 and ``stopped: budget``
in ``report.json``, with the figures (``Budget.summary``).

A task that is not static (a conversation, a tool loop, a judged answer: its later calls
depend on replies) is admitted **call by call** under the same rule, each call's most being its
own prompt and ``max_tokens``: such a run stops between two calls, never in the middle of one;
the sample it stopped is left unrecorded, its answered calls journaled, and a resume continues it
from there (``runner/context.py``). A role's calls (a judge's) count at the role model's price.

So where every prompt count is exact and every reply reports its usage, the spent figure never
passes a budget. An estimated count (a wire without a tokenize route) may be lower than the
server's: then the figure can pass a budget, by at most the estimate's error on the samples in
flight, and the run stops as soon as a recorded sample shows it (the report says by how much).

Spent is each reply's reported usage (prompt + output tokens); a reply that reported none counts
at its forecast (prompt count + maximum output), and the report says how many did
(``from_forecast``). A budget counts everything the run's records say was spent, earlier
sessions included (replies without usage there at their unit's forecast per request): ``--resume
RUN --budget-tokens N`` runs on until the whole run has spent N; after a budget stop, resume
with a larger budget, or with none to run to the end. Budgets are not stored in the run. A
budget is per process: a shard counts its own records, so N shards each given B may spend N x B.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET, UnsetType

from ..errors import ConfigError
from ..setting_names import form, setting
from ..store.records import RequestRecord, records_path
from .counting import PromptCounter, max_output
from .forecast import CostOptions, Costs
from .spent import Spent, spent_by_role

if TYPE_CHECKING:
    from ..ir.request import Request
    from ..model import Model
    from ..plan.plan import Plan, PlannedModel

__all__ = [
    "RULE",
    "Budget",
    "BudgetFigures",
    "BudgetSummary",
    "Held",
    "check_budget",
    "open_budget",
    "parse_budget_cost",
    "parse_budget_tokens",
]

RULE = (
    "a sample starts only when the spent figure, plus the most the samples in flight and it "
    "may take (prompt tokens as forecast plus max_tokens), stays within the budget; the samples "
    "in flight when it stops finish and are recorded; a task that is not static (a "
    "conversation) is admitted call by call, and stops between calls"
)
"""The rule, as ``report.json`` states it beside the figures."""


def _number(text: str) -> float:
    try:
        return float(text.replace("_", "").replace(",", ""))
    except ValueError:
        return math.nan


def parse_budget_tokens(text: str) -> int:
    """``--budget-tokens``: a whole number of tokens >= 1 (``50000``, ``50_000``, ``5e4``)."""
    value = _number(text)
    if not math.isfinite(value) or value < 1 or not value.is_integer():
        raise ConfigError(
            f"--budget-tokens {text!r}: give a whole number of tokens >= 1 (prompt and output "
            "tokens together, as the server reports them)",
            path="budget_tokens",
            received=text,
        )
    return int(value)


def parse_budget_cost(text: str) -> float:
    """``--budget-cost``: an amount > 0, in the models' ``price:`` currency."""
    value = _number(text)
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(
            f"--budget-cost {text!r}: give an amount > 0, in the currency of the models' price",
            path="budget_cost",
            received=text,
        )
    return value


def check_budget(options: CostOptions, models: Sequence[PlannedModel]) -> None:
    """Refuse a cost budget a model has no price for, or over prices in two currencies (before
    anything is sent or written)."""
    if options.budget_cost is None:
        return
    example = "IN,OUT[,CURRENCY]" if form() == "flags" else "{input: IN, output: OUT}"
    for pm in models:
        if pm.config.price is None:
            raise ConfigError(
                f"--budget-cost needs the price of every model, and model {pm.label!r} has "
                f"none: set {setting('price', example)} (per million input and output tokens), "
                "or give --budget-tokens instead",
                path="price",
            )
    currencies = sorted({pm.config.price.currency for pm in models if pm.config.price})
    if len(currencies) > 1:
        raise ConfigError(
            f"--budget-cost is one amount, but the models' prices are in {len(currencies)} "
            f"currencies ({', '.join(repr(c) for c in currencies)}); price them in one",
            path="price",
        )


class BudgetFigures(msgspec.Struct, kw_only=True):
    """One budget: what it allows, what was spent, and how much of that before this session."""

    budget: int | float
    spent: int | float
    """Tokens (an int) or a cost, as the budget counts."""
    spent_before: int | float
    currency: str | UnsetType = UNSET
    """A cost budget's currency (the models' ``price:``)."""


class BudgetSummary(msgspec.Struct, kw_only=True):
    """``report.json``'s ``budget`` (``Budget.summary``)."""

    rule: str
    """How the budget is kept (``RULE``)."""
    tokens: BudgetFigures | UnsetType = UNSET
    cost: BudgetFigures | UnsetType = UNSET
    from_forecast: int = 0
    """Replies without usage, counted at their forecast."""
    uncounted: int | UnsetType = UNSET
    """Such replies of earlier sessions with no forecast to count them at."""
    stopped: str | None = None
    """Why the budget stopped the run, or None."""


@dataclass
class Held:
    """A sample's place in the budget while it runs: its most, per request and in all."""

    label: str
    need: list[tuple[int, int]]
    """Per request (in the task's order): prompt tokens as counted, and its maximum output."""
    most: tuple[float, float]
    """Tokens and cost reserved."""


class Budget:
    """The run's spending against ``--budget-tokens`` / ``--budget-cost`` (see the module)."""

    def __init__(
        self,
        options: CostOptions,
        models: Sequence[PlannedModel],
        counters: Mapping[str, PromptCounter],
    ) -> None:
        self.limits = (options.budget_tokens, options.budget_cost)
        self.prices = {pm.label: pm.config.price for pm in models}
        self.currency = next((p.currency for p in self.prices.values() if p), "")
        self.counters = dict(counters)
        self.spent = [0.0, 0.0]
        self.before = [0.0, 0.0]
        self.reserved = [0.0, 0.0]
        self.in_flight = 0
        self.from_forecast = 0
        """Answered requests without usage, counted at their forecast."""
        self.uncounted = 0
        """Such requests of earlier sessions with no forecast to count them at."""
        self.stopped: str | None = None
        self._settled: asyncio.Event | None = None

    def _amounts(self, label: str, prompt: float, output: float) -> tuple[float, float]:
        price = self.prices.get(label)
        return prompt + output, price.cost(prompt, output) if price is not None else 0.0

    def count_before(
        self, label: str, spent: Spent, per_request: tuple[float, float] | None
    ) -> None:
        """Add what an earlier session recorded (``spent``, by the model ``label``); a reply
        without usage counts at ``per_request`` (the unit's forecast prompt and output per
        request), when known."""
        tokens, cost = self._amounts(label, spent.input_tokens, spent.output_tokens)
        if spent.without_usage and per_request is not None:
            extra = self._amounts(label, *per_request)
            tokens += extra[0] * spent.without_usage
            cost += extra[1] * spent.without_usage
            self.from_forecast += spent.without_usage
        elif spent.without_usage:
            self.uncounted += spent.without_usage
        for i, amount in enumerate((tokens, cost)):
            self.spent[i] += amount
            self.before[i] += amount

    def _fits(self, most: tuple[float, float]) -> bool:
        return all(
            limit is None or self.spent[i] + self.reserved[i] + most[i] <= limit * (1 + 1e-12)
            for i, limit in enumerate(self.limits)
        )

    async def admit(
        self, pm: PlannedModel, requests: Sequence[Request], model: Model, *, what: str = "sample"
    ) -> Held | None:
        """Hold the most ``requests`` may take (a static task's sample, or one call of a task
        that is not static; the model's request defaults applied), waiting for what is in
        flight when it does not fit yet; None when the run stops instead (``stopped`` says
        why)."""
        counter = self.counters.setdefault(
            pm.label, PromptCounter(pm.dialect.endpoint.tokenize, chat=pm.chat_template)
        )
        need = []
        for request in requests:
            prompt, _ = await counter.count(request, model)
            need.append((prompt, max_output(request) or 0))
        most = self._amounts(pm.label, sum(p for p, _ in need), sum(o for _, o in need))
        while self.stopped is None:
            if self._fits(most):
                self.in_flight += 1
                self.reserved = [r + m for r, m in zip(self.reserved, most, strict=True)]
                return Held(pm.label, need, most)
            if not self.in_flight:
                self.stopped = self._reason(
                    f"the next {what} may take up to {self._both(most)}", what
                )
                break
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()
        self._wake()
        return None

    def settle(self, held: Held, requests: Sequence[RequestRecord] | None) -> str | None:
        """What was held is done (``requests`` None: it was cancelled): its replies' usage
        replaces its most. The reason to stop when the spent figure passed a budget, else
        None."""
        self.in_flight -= 1
        self.reserved = [r - m for r, m in zip(self.reserved, held.most, strict=True)]
        if requests is not None:
            prompt = output = 0
            for request, (most_in, most_out) in zip(requests, held.need, strict=False):
                if request.status != 200:
                    continue  # never answered, or refused: the server reported nothing spent
                usage = request.usage
                if "input_tokens" not in usage or "output_tokens" not in usage:
                    self.from_forecast += 1
                prompt += usage.get("input_tokens", most_in)
                output += usage.get("output_tokens", most_out)
            for i, amount in enumerate(self._amounts(held.label, prompt, output)):
                self.spent[i] += amount
        self._wake()
        over = [
            i for i, limit in enumerate(self.limits) if limit is not None and self.spent[i] > limit
        ]
        if over and self.stopped is None:
            i = over[0]
            by = self.spent[i] - (self.limits[i] or 0)
            self.stopped = self._reason(
                f"over by {self._figure(i, by)}: a prompt count the samples were admitted on was "
                "an estimate, or a reply reported more than its forecast"
            )
        return self.stopped

    def _wake(self) -> None:
        if self._settled is not None:
            self._settled.set()
            self._settled = None

    def _figure(self, i: int, value: float) -> str:
        if i == 0:
            return f"{value:,.0f} tokens"
        return f"{value:,.4f}" + (f" {self.currency}" if self.currency else "")

    def _both(self, most: tuple[float, float]) -> str:
        return " and ".join(
            self._figure(i, most[i]) for i, limit in enumerate(self.limits) if limit is not None
        )

    def _reason(self, why: str, what: str = "sample") -> str:
        spent = "; ".join(
            f"spent {self._figure(i, self.spent[i])} of {self._figure(i, limit)} "
            f"(--budget-{'tokens' if i == 0 else 'cost'})"
            for i, limit in enumerate(self.limits)
            if limit is not None
        )
        return (
            f"stopped: budget: {spent}; {why}, so no further {what} was started; resume with a "
            "larger budget (or none) to go on"
        )

    def summary(self) -> BudgetSummary:
        """``report.json``'s ``budget``: each budget with what was spent (and before this
        session), how replies without usage were counted, and whether it stopped the run."""
        tokens, cost = self.limits
        return BudgetSummary(
            rule=RULE,
            tokens=UNSET
            if tokens is None
            else BudgetFigures(
                budget=tokens, spent=int(self.spent[0]), spent_before=int(self.before[0])
            ),
            cost=UNSET
            if cost is None
            else BudgetFigures(
                budget=cost,
                spent=self.spent[1],
                spent_before=self.before[1],
                currency=self.currency,
            ),
            from_forecast=self.from_forecast,
            uncounted=self.uncounted or UNSET,
            stopped=self.stopped,
        )


def open_budget(
    options: CostOptions,
    plan: Plan,
    run_dir: Path,
    shard: int | None,
    costs: Costs | None,
) -> Budget | None:
    """The run's budget, with what its records (a shard's: its own) say was spent before; None
    when no budget was given."""
    if not options.budgeted:
        return None
    budget = Budget(
        options, [*plan.models, *plan.role_models], costs.counters if costs is not None else {}
    )
    for pm in plan.models:
        for pt in plan.tasks:
            unit = costs.forecast.unit(pm.label, pt.name) if costs is not None else None
            per_request = (
                (unit.prompt_tokens / unit.requests, unit.max_output_tokens / unit.requests)
                if unit is not None and unit.requests
                else None
            )
            found = spent_by_role(records_path(run_dir, pm.dirname, pt.name, shard))
            for role, spent in found.items():
                if role is None:
                    budget.count_before(pm.label, spent, per_request)
                elif role in plan.roles:  # a judge's calls, at the judge's price
                    budget.count_before(plan.roles[role].label, spent, None)
    return budget
