"""Cost before I/O: the requests and tokens a run will send, and what they cost, counted before
its first model request (``sieval plan``, ``sieval eval --dry-run``, and a run that has a price
or a budget).

Per (model, task): the samples, the requests, the prompt tokens, and the most output tokens the
requests may generate: each request's ``max_tokens`` times its ``n`` (a scoring request's 1), a
maximum, never a guess of what the model will say. With a ``price:`` on the model the cost is the
prompt tokens at the input price plus that maximum at the output price, per million tokens: a
maximum too.

A task that is not static (a conversation, a tool loop, a judge) has later calls that depend on
replies: its forecast is a **bound**, the calls it may make (its turns) times what each may take,
said to be a bound wherever it is shown (``UnitForecast.bound``): the first turn counted as sent,
each later turn as the request standing for it plus the tokens it may add unseen (the earlier
answers at their ``max_tokens``, tool results at their cap: ``PlannedCall``). A role's calls (a
judge's) are a unit of their own (``role``), counted through the role model's tokenize route and
priced at its price.

Prompt tokens are exact through the model's tokenize route where its wire has one, else an
estimate marked as one wherever it is shown, with its method (``counting.py``). Only tokenize
routes are asked (and the pre-flight's read-only routes): no model request is sent. The
counters keep each distinct prompt's count (by its hash, a few bytes a prompt), so a budget
(``budget.py``) asks nothing again while the run goes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import ConfigError
from ..plan.config import Price
from ..store.files import write_atomic
from .counting import TOKENIZE_CONCURRENCY, PromptCounter, calibrated, calls_of, max_output
from .rate import ServerRate

if TYPE_CHECKING:
    from ..model import Model
    from ..plan.plan import Plan, PlannedModel, PlannedTask
    from ..tasks.base import ModelFacts, PlannedCall

__all__ = [
    "FORECAST_FILE",
    "CostOptions",
    "Costs",
    "Counting",
    "Forecast",
    "UnitForecast",
    "forecast_run",
    "read_forecast",
    "write_forecast",
]

FORECAST_FILE = "forecast.json"
FORECAST_VERSION = 1

PROGRESS_EVERY_S = 5.0
"""How often a long count says how far it is."""


@dataclass(frozen=True)
class CostOptions:
    """What the command line asks of costs; ``forecast`` None: forecast when a model has a
    ``price:`` or a budget is set (``--dry-run`` always forecasts)."""

    dry_run: bool = False
    """Forecast and stop: no model request, no run directory (``sieval eval --dry-run``)."""
    forecast: bool | None = None
    budget_tokens: int | None = None
    """``--budget-tokens``: prompt + output tokens the run may spend (``budget.Budget``)."""
    budget_cost: float | None = None
    """``--budget-cost``: what the run may spend, in the models' ``price:`` currency."""
    rate_probe: bool | None = None
    """Whether the forecast measures each server's rate for its time (``rate.py``):
    ``--rate-probe/--no-rate-probe``; None: a model with no price on a local server."""

    @property
    def budgeted(self) -> bool:
        return self.budget_tokens is not None or self.budget_cost is not None

    def wanted(self, models: Sequence[PlannedModel], long: bool = False) -> bool:
        """Whether the run forecasts its cost before its first request (``long``: a task of the
        run says its runs are long, ``Task.long_runs``: forecast unless ``--no-forecast``)."""
        if self.dry_run:
            return True
        if self.forecast is not None:
            return self.forecast
        return long or self.budgeted or any(pm.config.price is not None for pm in models)


class UnitForecast(msgspec.Struct, kw_only=True):
    """One (model, task) of a forecast: token counts only (a cost is the price times these,
    computed where it is shown, so a resume with a new price shows the new cost)."""

    model: str
    task: str
    samples: int
    requests: int
    prompt_tokens: int
    exact_requests: int
    """Requests whose prompt tokens were counted exactly; the others were estimated."""
    max_output_tokens: int
    """The most output tokens the requests may generate (``max_tokens`` times ``n``)."""
    unbounded_requests: int = 0
    """Requests with no ``max_tokens``: their output has no maximum, and is not in the one above."""
    method: str = ""
    """How the prompt tokens were counted (``Counting.method``)."""
    role: str | None = None
    """The role whose calls these are (a judge's, counted and priced as its model's); None: the
    evaluated model's."""
    bound: bool = False
    """The task is not static: every figure is the most its calls may take (their turns times
    what each may hold), not a count of what will be sent."""
    answered_by: str | None = None
    """With ``role``: the label of the model playing it (whose price costs these calls)."""
    longest_prompt: int = 0
    """The most prompt tokens of one request (exact when ``longest_exact``)."""
    longest_exact: bool = True
    longest_sample: str = ""
    """The sample whose request has that prompt."""
    context: int | None = None
    """The server's maximum model length (prompt and output tokens), when it says one."""
    seconds: float | None = None
    """The time its requests take one at a time at the server's measured rate (``rate.py``:
    the output at its maximum), or None with no rate."""

    @property
    def overflows(self) -> bool:
        """The longest prompt leaves no room for one output token: the run would refuse it."""
        return self.context is not None and self.longest_prompt + 1 > self.context

    @property
    def exact(self) -> bool:
        return self.exact_requests == self.requests and not self.bound

    def cost(self, price: Price | None) -> float | None:
        """The most the unit may cost (its prompt tokens and its maximum output), or None."""
        return None if price is None else price.cost(self.prompt_tokens, self.max_output_tokens)


class Counting(msgspec.Struct, kw_only=True):
    """How one model's prompts were counted, and what the counting took."""

    model: str
    method: str
    """``exact: POST /tokenize`` or the estimate's method (``estimate: bytes / 4``, or
    ``estimate: 0.262 tokens a byte, measured on 32 prompts through POST /tokenize of 'm'``)."""
    requests: int
    tokenized: int
    """Distinct prompts asked of the tokenize route (each once)."""
    seconds: float
    """The wall time of the count."""


class Forecast(msgspec.Struct, kw_only=True):
    """``forecast.json``: the forecast of a run, per (model, task), and how it was counted."""

    forecast_version: int = FORECAST_VERSION
    units: list[UnitForecast] = []
    counting: list[Counting] = []
    created: float = 0.0
    rates: list[ServerRate] = []
    """Each model's measured server rate (or why it has none): what ``seconds`` is at."""

    def unit(self, model: str, task: str, role: str | None = None) -> UnitForecast | None:
        return next(
            (u for u in self.units if u.model == model and u.task == task and u.role == role),
            None,
        )

    def rate(self, model: str) -> ServerRate | None:
        return next((r for r in self.rates if r.model == model), None)


@dataclass
class Costs:
    """A run's forecast, and the counters that made it (kept for the budget)."""

    forecast: Forecast
    counters: dict[str, PromptCounter] = field(default_factory=dict)


class _Progress:
    """A stage line every ``PROGRESS_EVERY_S`` while a long count runs."""

    def __init__(self, label: str, total: int, stage: Callable[[str], None]) -> None:
        self.label, self.total, self.stage = label, total, stage
        self.samples = 0
        self.started = self.last = time.perf_counter()

    def sample_done(self, counter: PromptCounter) -> None:
        self.samples += 1
        now = time.perf_counter()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self.stage(
                f"counting {self.label}'s prompt tokens: sample {self.samples:,} of "
                f"{self.total:,}, {counter.tokenized:,} distinct prompts tokenized, "
                f"{now - self.started:.0f} s"
            )


async def _forecast_unit(
    pm: PlannedModel,
    pt: PlannedTask,
    facts: ModelFacts,
    counter: PromptCounter,
    model: Model,
    progress: _Progress,
    *,
    context: int | None = None,
    role: str | None = None,
    answering: PlannedModel | None = None,
) -> UnitForecast:
    """The forecast of ``pm`` on ``pt``: the evaluated model's calls, or (``role``) the calls
    the model ``answering`` gets in that role, counted through ``counter``."""
    totals = {"requests": 0, "prompt": 0, "exact": 0, "output": 0, "unbounded": 0, "known": 0}
    longest: list[Any] = [0, True, ""]  # tokens, exact, sample id

    def add(counted: tuple[int, bool], call: PlannedCall, sample_id: str) -> None:
        totals["prompt"] += (counted[0] + call.unseen_tokens) * call.times
        exact = counted[1] and call.exact and not call.unseen_tokens
        if exact and call.times == 1:
            totals["exact"] += 1
        if counted[0] + call.unseen_tokens > longest[0]:
            longest[:] = [counted[0] + call.unseen_tokens, exact, sample_id]

    queue: asyncio.Queue[tuple[PlannedCall, str] | None] = asyncio.Queue(
        maxsize=4 * TOKENIZE_CONCURRENCY
    )

    async def worker() -> None:
        while (item := await queue.get()) is not None:
            add(await counter.count(item[0].request, model), *item)

    workers = [asyncio.ensure_future(worker()) for _ in range(TOKENIZE_CONCURRENCY)]
    try:
        for sample in pt.samples:
            for call in calls_of(answering or pm, pt, facts, sample, role):
                totals["requests"] += call.times
                most = max_output(call.request)
                totals["output"] += (most or 0) * call.times
                totals["unbounded"] += (most is None) * call.times
                ready = counter.now(call.request)
                if call.prompt_tokens is not None:  # counted as sent by the task (RULER's)
                    totals["known"] += call.times
                    add((call.prompt_tokens, True), call, sample.id)
                elif ready is not None:
                    add(ready, call, sample.id)
                else:
                    await queue.put((call, sample.id))
            progress.sample_done(counter)
        for _ in workers:
            await queue.put(None)
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
    return UnitForecast(
        model=pm.label,
        task=pt.name,
        samples=len(pt.samples),
        requests=totals["requests"],
        prompt_tokens=totals["prompt"],
        exact_requests=totals["exact"],
        max_output_tokens=totals["output"],
        unbounded_requests=totals["unbounded"],
        method=_method(counter, totals["known"], totals["requests"]),
        longest_prompt=longest[0],
        longest_exact=longest[1],
        longest_sample=longest[2],
        context=context,
        role=role,
        bound=not pt.task.static,
        answered_by=answering.label if role is not None and answering is not None else None,
    )


KNOWN = "exact: counted as sent when the task was generated (POST /tokenize)"
"""The method of prompts the task counted through the server's tokenizer (``PlannedCall``'s
``prompt_tokens``: RULER's, on a chat wire through the chat template too)."""


def _method(counter: PromptCounter, known: int, requests: int) -> str:
    if known and known == requests:
        return KNOWN
    return f"{counter.method}; {known:,} {KNOWN}" if known else counter.method


async def forecast_run(
    plan: Plan,
    facts: Mapping[str, ModelFacts],
    models: Mapping[str, Model],
    stage: Callable[[str], None],
    contexts: Mapping[str, int | None] | None = None,
) -> Costs:
    """The run's forecast, counted through each model's tokenize route where it has one (only
    tokenize routes are asked, through ``models``: one per model label, the roles' models too,
    its caller's to close), with a stage line per model saying what it found and how long the
    count took. ``contexts``: each model label's maximum model length, where its server says one
    (a unit whose longest prompt leaves no room says so: ``UnitForecast.overflows``)."""
    every = [*plan.models, *plan.role_models]
    counters: dict[str, PromptCounter] = {}
    for pm in every:
        route = pm.dialect.endpoint.tokenize
        counters[pm.label] = (
            PromptCounter(route, chat=pm.chat_template)
            if route
            else await calibrated(pm, plan, facts[pm.label], models)
        )
    forecast = Forecast(created=time.time())
    for pm in plan.models:
        counter = counters[pm.label]
        samples = sum(len(pt.samples) for pt in plan.tasks)
        stage(f"forecasting {pm.label}: counting the prompt tokens of {samples:,} samples")
        progress = _Progress(pm.label, samples, stage)
        context = (contexts or {}).get(pm.label)
        units = [
            await _forecast_unit(
                pm, pt, facts[pm.label], counter, models[pm.label], progress, context=context
            )
            for pt in plan.tasks
        ]
        for pt in plan.tasks:  # the roles' calls, each through the model that answers them
            for role in pt.task.roles:
                judge = plan.roles[role]
                units.append(
                    await _forecast_unit(
                        pm,
                        pt,
                        facts[pm.label],
                        counters[judge.label],
                        models[judge.label],
                        progress,
                        context=(contexts or {}).get(judge.label),
                        role=role,
                        answering=judge,
                    )
                )
        seconds = time.perf_counter() - progress.started
        forecast.units.extend(units)
        methods = list(dict.fromkeys(u.method for u in units if u.requests))
        forecast.counting.append(
            Counting(
                model=pm.label,
                method=methods[0] if len(methods) == 1 else counter.method,
                requests=sum(u.requests for u in units),
                tokenized=counter.tokenized,
                seconds=round(seconds, 3),
            )
        )
        stage(_said(pm, units, forecast.counting[-1], plan.roles))
    return Costs(forecast=forecast, counters=counters)


def _said(
    pm: PlannedModel,
    units: Sequence[UnitForecast],
    counting: Counting,
    roles: Mapping[str, PlannedModel],
) -> str:
    prompt = sum(u.prompt_tokens for u in units)
    exact = all(u.exact for u in units)
    bound = any(u.bound for u in units)
    priced = [(u, roles[u.role].config.price if u.role else pm.config.price) for u in units]
    cost = ""
    if any(price is not None for _, price in priced):
        most = sum(price.cost(u.prompt_tokens, u.max_output_tokens) for u, price in priced if price)
        currency = next((p.currency for _, p in priced if p is not None and p.currency), "")
        cost = f", at most {most:,.4f}{' ' + currency if currency else ''}"
    asked = (
        f"{counting.tokenized:,} distinct prompts through the tokenize route, "
        f"{TOKENIZE_CONCURRENCY} at a time, in {counting.seconds:.1f} s"
        if counting.tokenized
        else f"in {counting.seconds:.1f} s"
    )
    tail = (
        "; a bound, not a count: tasks that are not static may send up to their turns"
        if bound
        else ""
    )
    return (
        f"forecast for {pm.label}: {'at most ' if bound else ''}{counting.requests:,} requests, "
        f"{'' if exact else '~'}{prompt:,} prompt tokens ({counting.method}), at most "
        f"{sum(u.max_output_tokens for u in units):,} output tokens{cost}; counted {asked}{tail}"
    )


def write_forecast(run_dir: Path, forecast: Forecast) -> None:
    write_atomic(
        run_dir / FORECAST_FILE,
        msgspec.json.format(msgspec.json.encode(forecast), indent=2) + b"\n",
    )


def read_forecast(run_dir: Path) -> Forecast | None:
    """The run's ``forecast.json``, or None when it has none (a run made without a forecast);
    ``ConfigError`` naming the file when it is not one."""
    path = run_dir / FORECAST_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror})", path=str(path)) from None
    try:
        return msgspec.json.decode(data, type=Forecast)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(
            f"{path}: not a sieval forecast ({exc}); remove it (the report then shows the "
            "actual figures alone)",
            path=str(path),
        ) from None
