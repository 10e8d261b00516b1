"""How a forecast and a run's spending are shown: ``sieval eval --dry-run`` and ``sieval plan``
print the forecast, ``sieval report`` the forecast beside what was spent, ``sieval eval`` one line
a model at its end.

An estimated prompt count is marked ``~`` in every cell that holds one, and its method is named
below the table; output tokens and costs of a forecast are maxima (``≤``). The forecast of a task
that is not static (a conversation, a tool loop, a judge) is a bound in every figure, marked
``≤`` and said below the table; a role's calls (a judge's) are a row of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from msgspec import UnsetType
from rich.table import Table
from rich.text import Text

from ..cost.rate import duration, rate_line
from .inert import shown as as_text
from .text import MISSING

if TYPE_CHECKING:
    from ..cost.forecast import Forecast
    from ..cost.rate import ServerRate
    from ..plan.config import Price
    from ..plan.plan import Plan
    from ..results.document import Report

__all__ = [
    "money",
    "render_budget",
    "render_costs",
    "render_forecast",
    "spent_lines",
    "time_lines",
]


def money(value: float | None, currency: str = "") -> str:
    if value is None:
        return MISSING
    return f"{value:,.4f}" + (f" {currency}" if currency else "")


def _tokens(value: float | None, exact: bool = True) -> str:
    if value is None:
        return MISSING
    return f"{'' if exact else '~'}{int(value):,}"


def _currency(prices: Sequence[Price]) -> str:
    found = {p.currency for p in prices}
    return found.pop() if len(found) == 1 else ""


def refusals(forecast: Forecast, plan: Plan | None) -> list[tuple[bool, str]]:
    """What the run would refuse before its first request: each (model, task) whose longest
    prompt leaves no room in the server's context, with the fix as the run was started;
    ``(exact, line)``, an estimated count saying it may not fit."""
    from ..runner.checks import fewer_shots

    tasks = {pt.name: pt for pt in plan.tasks} if plan is not None else {}
    several = len(tasks) > 1
    out: list[tuple[bool, str]] = []
    for u in forecast.units:
        if not u.overflows or u.task not in tasks or u.role is not None:
            continue  # a role's prompts hold the answers it judges: fewer shots are no fix
        counted = f"{u.longest_prompt:,}" if u.longest_exact else f"~{u.longest_prompt:,}"
        verb = "does not fit" if u.longest_exact else "may not fit"
        pt = tasks[u.task]
        fix = fewer_shots(pt, f"{u.longest_sample}/-", several, u.longest_prompt, u.context)
        out.append(
            (
                u.longest_exact,
                f"{u.model}/{u.task}: the longest prompt ({u.longest_sample}, {counted} tokens) "
                f"{verb} the server's context of {u.context:,} tokens; {fix}",
            )
        )
    return out


def render_forecast(forecast: Forecast, prices: Mapping[str, Price | None]) -> list[Table | Text]:
    """Per model, a table of its tasks: samples, requests, prompt tokens, the most output
    tokens, and with a price the most it may cost; below it, how the prompts were counted."""
    out: list[Table | Text] = []
    for counting in forecast.counting:
        units = [u for u in forecast.units if u.model == counting.model]
        price = prices.get(counting.model)
        unit_of_money = f" ({price.currency})" if price is not None and price.currency else ""
        table = Table(title=as_text(f"forecast · {counting.model}"))
        table.add_column("task", no_wrap=True)
        for name in ("samples", "requests", "prompt\ntokens", "output\ntokens ≤"):
            table.add_column(name, justify="right", no_wrap=True)
        if price is not None:
            table.add_column(f"cost ≤{unit_of_money}", justify="right", no_wrap=True)
        rate = forecast.rate(counting.model)
        timed = rate is not None and rate.known
        if timed:
            table.add_column("time\n≈", justify="right", no_wrap=True)
        for u in units:
            at_most = "≤ " if u.bound else ""
            cells = [
                f"{u.samples:,}",
                f"{at_most}{u.requests:,}",
                at_most + _tokens(u.prompt_tokens, u.exact),
                _tokens(u.max_output_tokens) + ("+" if u.unbounded_requests else ""),
            ]
            if price is not None:
                own = prices.get(u.answered_by) if u.answered_by else price
                cells.append(money(u.cost(own)))
            if timed:
                cells.append(duration(u.seconds) if u.seconds is not None else MISSING)
            name = u.task if u.role is None else f"{u.task} · {u.role} ({u.answered_by})"
            table.add_row(as_text(name), *cells)
        if len(units) > 1:
            exact = all(u.exact for u in units)
            cells = [
                f"{sum(u.samples for u in units):,}",
                f"{sum(u.requests for u in units):,}",
                _tokens(sum(u.prompt_tokens for u in units), exact),
                _tokens(sum(u.max_output_tokens for u in units)),
            ]
            if price is not None:
                cells.append(money(sum(u.cost(price) or 0.0 for u in units)))
            if timed:
                cells.append(duration(sum(u.seconds or 0.0 for u in units)))
            table.add_row(Text("total", style="bold"), *cells, end_section=True)
        out.append(table)
        how = (
            f"{counting.tokenized:,} distinct prompts asked, in {counting.seconds:.1f} s"
            if counting.tokenized
            else f"in {counting.seconds:.1f} s"
        )
        mark = "" if counting.method.startswith("exact") else "~ "
        out.append(Text(f"{mark}prompt tokens: {counting.method} ({how})", style="dim"))
        if rate is not None:
            out.append(Text(time_said(rate, forecast.created), style="dim" if timed else "yellow"))
        if any(u.bound for u in units):
            out.append(
                Text(
                    "≤: a bound, not a count: a task that is not static (a conversation, a tool "
                    "loop, a judge) sends at most its turns, each at most what its earlier "
                    "answers and tool results may add",
                    style="dim",
                )
            )
        if any(u.unbounded_requests for u in units):
            unbounded = sum(u.unbounded_requests for u in units)
            out.append(
                Text(
                    f"+ {unbounded:,} requests set no max_tokens: their output has no maximum "
                    "and is not counted",
                    style="yellow",
                )
            )
    if forecast.units:
        out.append(
            Text(
                "output tokens ≤: the most the requests may generate (max_tokens × n); cost ≤: "
                "the prompt tokens and that maximum at the model's price, per million tokens",
                style="dim",
            )
        )
    return out


def time_said(rate: ServerRate, now: float) -> str:
    """What the time column is at and assumes, or why the forecast has no time."""
    if not rate.known:
        return rate.note
    said = (
        f"time ≈: at {rate_line(rate, now)}; the requests one at a time (a batching server "
        "answers several at once faster), the output at its maximum"
    )
    return f"{said}; {rate.note}" if rate.note else said


def time_lines(forecast: Forecast | None, report: Report) -> list[Text]:
    """At a run's end, per model with a forecast time: how long the session's requests took
    beside it (a fresh run's only: a resumed session runs part of what was forecast)."""
    if forecast is None or report.run.resumed:
        return []
    wall = report.timings.wall_s
    out = []
    for rate in forecast.rates:
        units = [u for u in forecast.units if u.model == rate.model and u.seconds is not None]
        if not units or wall <= 0:
            continue
        said = sum(u.seconds or 0.0 for u in units)
        several = " (the run's, all models together)" if len(forecast.rates) > 1 else ""
        out.append(
            as_text(
                f"{rate.model}: the requests took {duration(wall)}{several}, forecast about "
                f"{duration(said)} ({wall / said:.2f} of it) at {rate.prefill or 0:,.0f} prompt "
                "tokens/s, one request at a time"
            )
        )
    return out


def render_costs(report: Report) -> list[Table | Text]:
    """Per model, a row a task: its forecast over what its records say was spent (two lines a
    cell, to read at 80 columns); nothing for a report written before costs were reported."""
    results = [(r, r.cost) for r in report.results if not isinstance(r.cost, UnsetType)]
    out: list[Table | Text] = []
    for model in dict.fromkeys(r.model for r, _ in results):
        mine = [(r, cost) for r, cost in results if r.model == model]
        prices = [cost.price for _, cost in mine if cost.price]
        currency = _currency(prices)
        table = Table(title=as_text(f"cost · {model}"))
        table.add_column("task", no_wrap=True)
        table.add_column("", style="dim", no_wrap=True)
        table.add_column("prompt\ntokens", justify="right", no_wrap=True)
        table.add_column("output\ntokens", justify="right", no_wrap=True)
        if prices:
            table.add_column(f"cost{f' ({currency})' if currency else ''}", justify="right")
        estimated = False
        forecasted = any(cost.forecast for _, cost in mine)
        for result, cost in mine:
            forecast, actual = cost.forecast, cost.actual
            exact = forecast.exact if forecast else True
            estimated = estimated or not exact
            most = forecast.max_output_tokens if forecast else None
            at_most = "≤ " if forecast and forecast.bound else ""
            cells = [
                f"{at_most}{_tokens(forecast.prompt_tokens if forecast else None, exact)}\n"
                f"{_tokens(actual.input_tokens)}",
                f"{'≤ ' if most is not None else ''}{_tokens(most)}\n"
                f"{_tokens(actual.output_tokens)}",
            ]
            if prices:
                most_cost = forecast.cost if forecast else None
                cells.append(
                    f"{'≤ ' if most_cost is not None else ''}{money(most_cost)}\n"
                    f"{money(actual.cost)}"
                )
            if not forecasted:  # no forecast row of dashes: what was spent alone
                cells = [cell.split("\n", 1)[1] for cell in cells]
            label = "forecast\nspent" if forecasted else "spent"
            table.add_row(as_text(result.task), label, *cells)
        out.append(table)
        methods = sorted({cost.forecast.method for _, cost in mine if cost.forecast})
        if methods:
            mark = "~ " if estimated else ""
            out.append(Text(f"{mark}forecast prompt tokens: {', '.join(methods)}", style="dim"))
        else:
            out.append(
                Text(
                    "no forecast was made for this run (sieval eval --dry-run forecasts one; a "
                    "run forecasts with a price: or a budget, or --forecast)",
                    style="dim",
                )
            )
        retries = sum(cost.actual.retries for _, cost in mine)
        if retries:
            out.append(
                Text(
                    f"{retries:,} attempt{'s were' if retries > 1 else ' was'} sent again (after "
                    "a timeout, a 429 or a 5xx): the server may have computed "
                    f"{'them' if retries > 1 else 'it'} too, which no usage reports",
                    style="yellow",
                )
            )
        without = sum(cost.actual.without_usage for _, cost in mine)
        if without:
            out.append(
                Text(
                    f"{without:,} repl{'ies' if without > 1 else 'y'} reported no usage (or part "
                    "of it): what was not reported is not in the figures spent",
                    style="yellow",
                )
            )
    return out


def render_budget(report: Report) -> list[Text]:
    """What a budget allowed and what was spent, and whether it stopped the run."""
    budget = report.budget
    if isinstance(budget, UnsetType):
        return []
    lines = []
    for name, entry in (("tokens", budget.tokens), ("cost", budget.cost)):
        if isinstance(entry, UnsetType):
            continue
        if name == "tokens":
            figures = f"{int(entry.spent):,} of {int(entry.budget):,} tokens"
            before = f"{int(entry.spent_before):,} tokens"
        else:
            currency = entry.currency if isinstance(entry.currency, str) else ""
            figures = f"{money(entry.spent, currency)} of {money(entry.budget, currency)}"
            before = money(entry.spent_before, currency)
        earlier = f", {before} of it before this session" if entry.spent_before else ""
        lines.append(Text(f"budget: spent {figures}{earlier} (--budget-{name})"))
    if budget.from_forecast:
        lines.append(
            Text(
                f"budget: {budget.from_forecast:,} replies reported no usage and were counted "
                "at their forecast",
                style="dim",
            )
        )
    return lines


def spent_lines(report: Report) -> list[Text]:
    """One line a model at a run's end, when it has a forecast or a price: what it spent beside
    the forecast."""
    lines = []
    results = [(r.model, r.cost) for r in report.results if not isinstance(r.cost, UnsetType)]
    for model in dict.fromkeys(m for m, _ in results):
        mine = [cost for m, cost in results if m == model]
        forecasts = [c.forecast for c in mine if c.forecast]
        prices = [c.price for c in mine if c.price]
        if not forecasts and not prices:
            continue
        spent_in = sum(c.actual.input_tokens for c in mine)
        spent_out = sum(c.actual.output_tokens for c in mine)
        currency = _currency(prices)
        text = f"{model}: spent {spent_in:,} prompt + {spent_out:,} output tokens"
        if prices:
            text += f", {money(sum(c.actual.cost or 0.0 for c in mine), currency)}"
        if forecasts:
            exact = all(f.exact for f in forecasts)
            prompt = _tokens(sum(f.prompt_tokens for f in forecasts), exact)
            most = sum(f.max_output_tokens for f in forecasts)
            bound = "≤ " if any(f.bound for f in forecasts) else ""
            text += f" (forecast {bound}{prompt} prompt, ≤ {most:,} output"
            if prices:
                text += f", ≤ {money(sum(f.cost or 0.0 for f in forecasts), currency)}"
            text += ")"
        lines.append(as_text(text))
    return lines
