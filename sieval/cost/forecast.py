"""Cost before I/O: the requests and tokens a run will send, and what they cost, counted before
its first model request (``sieval plan``, ``sieval eval --dry-run``, and a run that has a price
or a budget).

Per (model, task): the samples, the requests, the prompt tokens, and the most output tokens the
requests may generate: each request's ``max_tokens`` times its ``n`` (a scoring request's 1), a
maximum, never a guess of what the model will say. With a ``price:`` on the model the cost is the
prompt tokens at the input price plus that maximum at the output price, per million tokens: a
maximum too.

Prompt tokens are exact through the model's tokenize route where its wire has one, else an
estimate marked as one wherever it is shown, with its method (``counting.py``). Only tokenize
routes are asked (and the pre-flight's read-only routes): no model request is sent. The
counters keep each distinct prompt's count (by its hash, a few bytes a prompt), so a budget
(``budget.py``) asks nothing again while the run goes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ..errors import ConfigError
from ..ir.request import Request
from ..model import Model
from ..plan.config import Price
from ..store.files import write_atomic
from ..transport import Limits, Timeouts
from .counting import TOKENIZE_CONCURRENCY, PromptCounter, calibrated, max_output, requests_of

if TYPE_CHECKING:
    from ..plan.plan import Plan, PlannedModel, PlannedTask
    from ..runner.setup import Setup
    from ..tasks.base import ModelFacts

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
    """``--budget-tokens``: prompt + output tokens the run may spend (``stopping.Budget``)."""
    budget_cost: float | None = None
    """``--budget-cost``: what the run may spend, in the models' ``price:`` currency."""

    @property
    def budgeted(self) -> bool:
        return self.budget_tokens is not None or self.budget_cost is not None

    def wanted(self, models: Sequence[PlannedModel]) -> bool:
        """Whether the run forecasts its cost before its first request."""
        if self.dry_run:
            return True
        if self.forecast is not None:
            return self.forecast
        return self.budgeted or any(pm.config.price is not None for pm in models)


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

    @property
    def exact(self) -> bool:
        return self.exact_requests == self.requests

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

    def unit(self, model: str, task: str) -> UnitForecast | None:
        return next((u for u in self.units if u.model == model and u.task == task), None)


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
) -> UnitForecast:
    totals = {"requests": 0, "prompt": 0, "exact": 0, "output": 0, "unbounded": 0}

    def add(counted: tuple[int, bool]) -> None:
        totals["prompt"] += counted[0]
        totals["exact"] += counted[1]

    queue: asyncio.Queue[Request | None] = asyncio.Queue(maxsize=4 * TOKENIZE_CONCURRENCY)

    async def worker() -> None:
        while (request := await queue.get()) is not None:
            add(await counter.count(request, model))

    workers = [asyncio.ensure_future(worker()) for _ in range(TOKENIZE_CONCURRENCY)]
    try:
        for sample in pt.samples:
            for request in requests_of(pm, pt, facts, sample):
                totals["requests"] += 1
                most = max_output(request)
                totals["output"] += most or 0
                totals["unbounded"] += most is None
                ready = counter.now(request)
                if ready is not None:
                    add(ready)
                else:
                    await queue.put(request)
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
        method=counter.method,
    )


def _short_model(pm: PlannedModel, setup: Setup) -> Model:
    """A model for tokenize requests only, like the pre-run checks' own, on the endpoint's pool."""
    cfg = pm.config
    timeout = min(60.0, cfg.timeout_s)
    timeouts = Timeouts(total=timeout, connect=min(10.0, timeout), read=timeout)
    transport = setup.transports.get(pm.label) or setup.endpoints[pm.label].transport(
        limits=Limits(retries=cfg.retries, max_reply_bytes=cfg.max_reply_bytes), timeouts=timeouts
    )
    return Model(
        dialect=pm.dialect,
        base_url=setup.urls[pm.label],
        model_id=cfg.model,
        api_key=pm.api_key,
        auth=pm.auth,
        timeouts=timeouts,
        transport=transport,
    )


async def forecast_run(plan: Plan, setup: Setup, stage: Callable[[str], None]) -> Costs:
    """The run's forecast, counted through each model's tokenize route where it has one (only
    tokenize routes are asked), with a stage line per model saying what it found and how long
    the count took."""
    facts = setup.facts
    models = {pm.label: _short_model(pm, setup) for pm in plan.models}
    try:
        counters: dict[str, PromptCounter] = {}
        for pm in plan.models:
            route = pm.dialect.endpoint.tokenize
            counters[pm.label] = (
                PromptCounter(route)
                if route
                else await calibrated(pm, plan, facts[pm.label], models)
            )
        forecast = Forecast(created=time.time())
        for pm in plan.models:
            counter = counters[pm.label]
            samples = sum(len(pt.samples) for pt in plan.tasks)
            stage(f"forecasting {pm.label}: counting the prompt tokens of {samples:,} samples")
            progress = _Progress(pm.label, samples, stage)
            units = [
                await _forecast_unit(pm, pt, facts[pm.label], counter, models[pm.label], progress)
                for pt in plan.tasks
            ]
            seconds = time.perf_counter() - progress.started
            forecast.units.extend(units)
            forecast.counting.append(
                Counting(
                    model=pm.label,
                    method=counter.method,
                    requests=sum(u.requests for u in units),
                    tokenized=counter.tokenized,
                    seconds=round(seconds, 3),
                )
            )
            stage(_said(pm, units, forecast.counting[-1]))
        return Costs(forecast=forecast, counters=counters)
    finally:
        for label, model in models.items():
            if label not in setup.transports:  # a shared test transport outlives the forecast
                await model.aclose()


def _said(pm: PlannedModel, units: Sequence[UnitForecast], counting: Counting) -> str:
    prompt = sum(u.prompt_tokens for u in units)
    exact = all(u.exact for u in units)
    price = pm.config.price
    cost = ""
    if price is not None:
        most = sum(price.cost(u.prompt_tokens, u.max_output_tokens) for u in units)
        cost = f", at most {most:,.4f}{' ' + price.currency if price.currency else ''}"
    asked = (
        f"{counting.tokenized:,} distinct prompts through the tokenize route, "
        f"{TOKENIZE_CONCURRENCY} at a time, in {counting.seconds:.1f} s"
        if counting.tokenized
        else f"in {counting.seconds:.1f} s"
    )
    return (
        f"forecast for {pm.label}: {counting.requests:,} requests, "
        f"{'' if exact else '~'}{prompt:,} prompt tokens ({counting.method}), at most "
        f"{sum(u.max_output_tokens for u in units):,} output tokens{cost}; counted {asked}"
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
