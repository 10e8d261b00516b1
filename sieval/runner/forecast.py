"""Cost before I/O: the requests and tokens a run will send, and what they cost, counted before
its first model request (``sieval plan``, ``sieval eval --dry-run``, and a run that has a price
or a budget).

Per (model, task): the samples, the requests, the prompt tokens, and the most output tokens the
requests may generate: each request's ``max_tokens`` times its ``n`` (a scoring request's 1), a
maximum, never a guess of what the model will say. With a ``price:`` on the model the cost is the
prompt tokens at the input price plus that maximum at the output price, per million tokens: a
maximum too.

Prompt tokens are **exact** where the model's wire has a tokenize route (``Endpoint.tokenize``:
vLLM's and SGLang's ``/tokenize``, the route the ``context`` check asks, with the special tokens a
server adds to a text prompt), each distinct prompt asked once, ``TOKENIZE_CONCURRENCY`` at a
time; a prompt of token ids (rolling windows) is its length. Elsewhere they are an **estimate**,
marked as one wherever it is shown, with its method: the prompt's UTF-8 bytes times a ratio
measured on ``CALIBRATION_PROMPTS`` of the model's own prompts through the tokenize route of
another model of the run (``calibrated``), else ``bytes / 4``. A chat prompt's estimate counts
the text of its messages, not the template the server wraps around them.

Only tokenize routes are asked (and the pre-flight's read-only routes): no model request is
sent. ``PromptCounter`` keeps each distinct prompt's count (by its hash, a few bytes a prompt) so
a budget (``stopping.Budget``) asks nothing again while the run goes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET

from ..errors import ConfigError, SievalError
from ..ir.defaults import with_defaults
from ..ir.request import CompletionInput, Request, TextPart, ToolCallPart, ToolResultPart
from ..model import Model
from ..transport import Limits, Timeouts
from .config import Price
from .files import write_atomic

if TYPE_CHECKING:
    from ..tasks.base import ModelFacts, Sample
    from ..transport import Transport
    from .plan import Plan, PlannedModel, PlannedTask

__all__ = [
    "CALIBRATION_PROMPTS",
    "ESTIMATE_BYTES_PER_TOKEN",
    "FORECAST_FILE",
    "TOKENIZE_CONCURRENCY",
    "CostOptions",
    "Costs",
    "Counting",
    "Forecast",
    "PromptCounter",
    "UnitForecast",
    "forecast_run",
    "max_output",
    "prompt_text",
    "read_forecast",
    "requests_of",
    "write_forecast",
]

FORECAST_FILE = "forecast.json"
FORECAST_VERSION = 1

ESTIMATE_BYTES_PER_TOKEN = 4.0
"""The estimate without any tokenizer to calibrate it: a token per 4 bytes of UTF-8 text."""
CALIBRATION_PROMPTS = 32
"""How many of a model's distinct prompts measure its tokens per byte, when it is calibrated."""
TOKENIZE_CONCURRENCY = 8
"""Tokenize requests in flight at once, per model."""
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


def prompt_text(request: Request) -> str:
    """The text a request's prompt is made of: a completion's text (and suffix), or a chat's
    text parts, tool calls and results (as JSON); images count nothing."""
    given = request.input
    if isinstance(given, CompletionInput):
        text = given.text if isinstance(given.text, str) else ""
        return text + (given.suffix if isinstance(given.suffix, str) else "")
    parts: list[str] = []
    for message in given.messages:
        for part in message.content:
            if isinstance(part, TextPart):
                parts.append(part.text)
            elif isinstance(part, ToolCallPart):
                parts.append(part.name + msgspec.json.encode(part.arguments).decode())
            elif isinstance(part, ToolResultPart):
                parts.append(msgspec.json.encode(part.result).decode())
    return "\n".join(parts)


def max_output(request: Request) -> int | None:
    """The most output tokens ``request`` may generate (``max_tokens`` times ``n``), or None
    when it sets no maximum."""
    limit = request.sampling.max_tokens
    return None if limit is UNSET else int(limit) * request.sampling.n


class PromptCounter:
    """A model's prompt tokens, each distinct prompt counted once: through ``route`` (a
    tokenize route) where the prompt is text the route can count, else estimated at ``ratio``
    tokens a byte (``how`` names the estimate)."""

    def __init__(
        self,
        route: str | None,
        *,
        ratio: float = 1 / ESTIMATE_BYTES_PER_TOKEN,
        how: str = f"bytes / {ESTIMATE_BYTES_PER_TOKEN:g}",
    ) -> None:
        self.route = route
        self.ratio = ratio
        self.how = how
        self.tokenized = 0
        self._known: dict[int, int] = {}
        self._pending: dict[int, asyncio.Task[int | None]] = {}
        self._gate: asyncio.Semaphore | None = None
        self._broken = False

    @property
    def method(self) -> str:
        """How this counter counts text prompts, as every view names it."""
        if self.route is not None and not self._broken:
            return f"exact: POST {self.route}"
        return f"estimate: {self.how}"

    def estimate(self, text: str) -> int:
        return round(len(text.encode("utf-8")) * self.ratio)

    def now(self, request: Request) -> tuple[int, bool] | None:
        """The count when no route need be asked (a token prompt, a known or estimated one)."""
        given = request.input
        if isinstance(given, CompletionInput) and isinstance(given.token_ids, tuple):
            return len(given.token_ids), True
        text = prompt_text(request)
        if not self._countable(request):
            return self.estimate(text), False
        known = self._known.get(hash(text))
        return (known, True) if known is not None else None

    async def count(self, request: Request, model: Model) -> tuple[int, bool]:
        """``(prompt tokens, exact)`` of ``request``, asking ``model``'s tokenize route at most
        once per distinct prompt (a prompt the route does not count is estimated)."""
        ready = self.now(request)
        if ready is not None:
            return ready
        text = prompt_text(request)
        key = hash(text)
        task = self._pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self._ask(model, text))
            self._pending[key] = task
            task.add_done_callback(lambda done: self._settle(key, done))
        counted = await asyncio.shield(task)
        return (counted, True) if counted is not None else (self.estimate(text), False)

    def _countable(self, request: Request) -> bool:
        given = request.input
        return (
            self.route is not None
            and not self._broken
            and isinstance(given, CompletionInput)
            and isinstance(given.text, str)
            and given.suffix is UNSET
        )

    def _settle(self, key: int, done: asyncio.Task[int | None]) -> None:
        self._pending.pop(key, None)
        if not done.cancelled() and done.exception() is None:
            counted = done.result()
            if counted is not None:
                self._known[key] = counted

    async def _ask(self, model: Model, text: str) -> int | None:
        """The route's count of ``text`` (special tokens added, as to a text prompt), or None;
        a route that answers its first question with anything but a count is not asked again."""
        if self._gate is None:
            self._gate = asyncio.Semaphore(TOKENIZE_CONCURRENCY)
        async with self._gate:
            if self._broken or self.route is None:
                return None
            body = {"model": model.model_id, "prompt": text, "add_special_tokens": True}
            try:
                status, data = await model.fetch(self.route, body)
            except SievalError:
                status, data = 0, None
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if status == 200 and isinstance(tokens, list):
            self.tokenized += 1
            return len(tokens)
        if not self.tokenized:
            self._broken = True  # no such route here: estimate, rather than ask every prompt
        return None


def requests_of(
    pm: PlannedModel, pt: PlannedTask, facts: ModelFacts, sample: Sample
) -> list[Request]:
    """A sample's requests for this model, with the model's request defaults applied (as
    ``Model.call`` applies them: a default ``max_tokens`` is the request's maximum)."""
    defaults = pm.config.request_defaults
    return [
        with_defaults(request, defaults)
        for request in pt.task.requests(sample, pt.config, facts).values()
    ]


def _requests(pm: PlannedModel, pt: PlannedTask, facts: ModelFacts) -> Iterator[Request]:
    """Every request of the task for this model, in sample order."""
    for sample in pt.samples:
        yield from requests_of(pm, pt, facts, sample)


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


def _short_model(pm: PlannedModel, url: str, transport: Transport | None) -> Model:
    """A model for tokenize requests only, like the pre-run checks' own."""
    cfg = pm.config
    timeout = min(60.0, cfg.timeout_s)
    return Model(
        dialect=pm.dialect,
        base_url=url,
        model_id=cfg.model,
        api_key=pm.api_key,
        limits=Limits(concurrency=TOKENIZE_CONCURRENCY, retries=cfg.retries),
        auth=pm.auth,
        timeouts=Timeouts(total=timeout, connect=min(10.0, timeout), read=timeout),
        transport=transport,
    )


async def _calibrated(
    pm: PlannedModel,
    plan: Plan,
    facts: ModelFacts,
    models: Mapping[str, Model],
) -> PromptCounter:
    """An estimating counter for a model whose wire has no tokenize route: its tokens per byte
    measured on its first distinct prompts through another model's route (one at the same
    endpoint first), else ``bytes / 4``."""
    others = sorted(
        (p for p in plan.models if p.dialect.endpoint.tokenize and p.label != pm.label),
        key=lambda p: p.config.base_url != pm.config.base_url,
    )
    texts: list[str] = []
    for pt in plan.tasks:
        for request in _requests(pm, pt, facts):
            text = prompt_text(request)
            if text and text not in texts:
                texts.append(text)
            if len(texts) >= CALIBRATION_PROMPTS:
                break
        if len(texts) >= CALIBRATION_PROMPTS:
            break
    for other in others:
        model, route = models[other.label], str(other.dialect.endpoint.tokenize)
        counted = 0
        for text in texts:
            body = {"model": model.model_id, "prompt": text, "add_special_tokens": False}
            try:
                status, data = await model.fetch(route, body)
            except SievalError:
                break
            tokens = data.get("tokens") if isinstance(data, dict) else None
            if status != 200 or not isinstance(tokens, list):
                break
            counted += len(tokens)
        else:
            size = sum(len(t.encode("utf-8")) for t in texts)
            if size:
                ratio = counted / size
                return PromptCounter(
                    None,
                    ratio=ratio,
                    how=f"{ratio:.3f} tokens a byte, measured on {len(texts)} prompts through "
                    f"POST {route} of {other.label!r}",
                )
    return PromptCounter(None)


async def forecast_run(
    plan: Plan,
    urls: Mapping[str, str],
    transports: Mapping[str, Transport],
    facts: Mapping[str, ModelFacts],
    stage: Callable[[str], None],
) -> Costs:
    """The run's forecast, counted through each model's tokenize route where it has one (only
    tokenize routes are asked), with a stage line per model saying what it found and how long
    the count took."""
    models = {
        pm.label: _short_model(pm, urls[pm.label], transports.get(pm.label)) for pm in plan.models
    }
    try:
        counters: dict[str, PromptCounter] = {}
        for pm in plan.models:
            route = pm.dialect.endpoint.tokenize
            counters[pm.label] = (
                PromptCounter(route)
                if route
                else await _calibrated(pm, plan, facts[pm.label], models)
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
            if label not in transports:  # a shared test transport outlives the forecast
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
