"""The HTML report: one self-contained file, built from a run's *view* (``results/view.py``).

``render_html(view)`` returns the page as a string and does no I/O beyond reading this package's
own files (``report.html.j2``, ``report.css``, ``report.js``). The page opens from disk with no
network: styles, script and plots are inlined, and a Content-Security-Policy forbids every fetch.

What paints at once is static HTML rendered here: the summary table and the plots (matplotlib
figures written as inline SVG, one per plot). The samples follow near the end of the body as
gzip-compressed, base64'd JSON in a ``<script type="application/octet-stream">``, which
``report.js`` decodes (``DecompressionStream``) only after the first paint and shows a page of
at most ``PAGE_SIZE`` rows at a time.

Every string that comes from a record is untrusted (a prompt may hold ``</script>``):
the template autoescapes, the samples travel as base64 (no ``<`` can end their element), and the
script builds the sample browser with ``textContent``, never ``innerHTML``.

jinja2 and matplotlib are imported inside the functions that use them: ``sieval`` starts without
paying for them.
"""

from __future__ import annotations

import base64
import gzip
import math
import re
import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from importlib.resources import files
from io import StringIO
from typing import TYPE_CHECKING, Any

import msgspec

from ..text import censored_line, magnitude

if TYPE_CHECKING:
    import jinja2
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["PAGE_SIZE", "render_html"]

PAGE_SIZE = 100
"""Rows of the sample list shown at once (``report.js`` reads it from the page)."""

_GZIP_LEVEL = 9
"""On a 14,000-sample MMLU run level 9 takes ~0.1 s longer than zlib's default 6 for ~1% less;
level 1 doubles the size."""

_WIDTH_IN = 6.4
"""Width of every figure in inches (the page lays them out two abreast on a wide screen)."""

_PALETTE = ("#3465a4", "#cc5a00", "#4e9a06", "#75507b", "#c4a000", "#06989a", "#a40000")


def render_html(view: Mapping[str, Any], *, page_size: int = PAGE_SIZE) -> str:
    """The report page of ``view`` (the dict ``build_view`` returns), as one HTML document whose
    sample list shows ``page_size`` rows at a time."""
    template = _environment().get_template("report.html.j2")
    summary = [_summary_row(row) for row in view.get("summary", [])]
    samples = list(view.get("samples", []))
    return template.render(
        view=view,
        run=_run_facts(view.get("run") or {}),
        summary=summary,
        models=_unique(row["model"] for row in summary),
        tasks=_unique(row["task"] for row in summary),
        plots=list(_plots(view)),
        budget=_budget_text(view.get("budget")),
        compare=view.get("compare"),
        compare_json=_pretty(view["compare"]) if view.get("compare") else None,
        fmt=_number,
        sample_count=len(samples),
        sample_data=_pack(samples),
        page_size=page_size,
        css=_asset("report.css"),
        js=_asset("report.js"),
    )


# -- template and assets ------------------------------------------------------------------------


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _read(name)),
        autoescape=True,  # every string from a record is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _read(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


@cache
def _asset(name: str) -> Any:
    """A stylesheet or script of this package, inlined as is (it is ours, not a record's)."""
    from markupsafe import Markup

    text = _read(name)
    closing = "</style" if name.endswith(".css") else "</script"
    if closing in text.lower():  # would end the element early: a bug in the asset, not data
        raise ValueError(f"{name} contains {closing!r}")
    return Markup(text)


# -- the summary --------------------------------------------------------------------------------


def _summary_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with the figures formatted as the table shows them."""
    ci = _interval(row.get("ci"))
    failures = row.get("failures") or {}
    return {
        **row,
        "ci": ci,
        "protocol": row.get("protocol") or "",
        "dialect": row.get("dialect") or "—",
        "estimator": row.get("estimator") or "",
        "value_text": _number(row.get("value")),
        "se_text": _number(row.get("se")),
        "ci_text": _interval_text(ci),
        "failures_text": ", ".join(f"{name} {count}" for name, count in failures.items()),
        "censored_text": _censored_text(row),
        "marks": list(row.get("marks") or []),
        "marks_text": ", ".join(m["mark"] for m in row.get("marks") or []),
        "cost_row": _cost_row(row.get("cost")),
        "metric_rows": [
            {
                "name": name,
                "value": _number(m.get("value")),
                "se": _number(m.get("se")),
                "ci": _interval_text(_interval(m.get("ci"))),
            }
            for name, m in [*(row.get("metrics") or {}).items(), *_bounds(row)]
        ],
    }


def _censored_text(row: Mapping[str, Any]) -> str:
    """The unit's censored answers in one line (``censored_line``), or empty."""
    from ...results.document import Censored

    censored = row.get("censored")
    if not isinstance(censored, Mapping):
        return ""
    return censored_line(msgspec.convert(censored, Censored), row["headline"]) or ""


def _bounds(row: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The headline's bounds over its censored answers, as rows of the unit's metrics."""
    censored = row.get("censored")
    if not isinstance(censored, Mapping):
        return []
    return [
        (f"{row['headline']}, censored {words}", censored.get(key) or {})
        for key, words in (("as_wrong", "counted wrong"), ("left_out", "left out"))
    ]


def _budget_text(budget: Any) -> str:
    """What a budget allowed and spent, and why it stopped the run, in one sentence."""
    if not isinstance(budget, Mapping):
        return ""
    said = []
    for name in ("tokens", "cost"):
        entry = budget.get(name)
        if isinstance(entry, Mapping) and name == "tokens":
            said.append(f"spent {entry['spent']:,} of {entry['budget']:,} tokens")
        elif isinstance(entry, Mapping):
            unit = f" {entry.get('currency') or ''}".rstrip()
            said.append(f"spent {entry['spent']:,.4f} of {entry['budget']:,.4f}{unit}")
    stopped = budget.get("stopped")
    return "; ".join(said) + (f". {stopped}" if stopped else ".")


def _cost_row(cost: Any) -> dict[str, str] | None:
    """A unit's forecast beside what it spent, as the cost table shows them (``~`` marks an
    estimated prompt count; a forecast's output and cost are maxima)."""
    if not isinstance(cost, Mapping):
        return None
    forecast = cost.get("forecast") or {}
    actual = cost.get("actual") or {}
    price = cost.get("price") or {}
    currency = f" {price['currency']}" if price.get("currency") else ""

    def tokens(value: Any, mark: str = "") -> str:
        return "—" if value is None else f"{mark}{int(value):,}"

    def money(value: Any) -> str:
        return "—" if value is None else f"{value:,.4f}{currency}"

    estimate = "~" if forecast and not forecast.get("exact", True) else ""
    return {
        "prompt_forecast": tokens(forecast.get("prompt_tokens"), estimate),
        "prompt_spent": tokens(actual.get("input_tokens")),
        "output_forecast": tokens(forecast.get("max_output_tokens"), "≤ " if forecast else ""),
        "output_spent": tokens(actual.get("output_tokens")),
        "cost_forecast": "—" if forecast.get("cost") is None else "≤ " + money(forecast["cost"]),
        "cost_spent": money(actual.get("cost")),
        "method": str(forecast.get("method") or "no forecast was made"),
        "without_usage": str(actual.get("without_usage") or 0),
        "spent_raw": f"{actual.get('input_tokens', '')} {actual.get('output_tokens', '')}",
    }


def _interval(ci: Any) -> list[float] | None:
    """``[lo, hi]``, or None when either end is unknown."""
    if not ci or len(ci) != 2 or any(x is None for x in ci):
        return None
    return [ci[0], ci[1]]


def _interval_text(ci: list[float] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return "—"
    scale = max(abs(ci[0]), abs(ci[1]))
    return f"[{magnitude(ci[0], 4, scale)}, {magnitude(ci[1], 4, scale)}]"


def _number(value: Any) -> str:
    """A figure as the page prints it: four decimals, a large one by its magnitude
    (``text.magnitude``: ``3.3572e+11``), ``—`` when there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return magnitude(float(value))


def _run_facts(run: Mapping[str, Any]) -> dict[str, Any]:
    started = run.get("started")
    return {
        "dir": run.get("dir"),
        "identity": run.get("identity"),
        "sieval_version": run.get("sieval_version"),
        "resumed": bool(run.get("resumed")),
        "started_text": (
            time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)) if started else "—"
        ),
    }


def _unique(items: Iterator[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _pretty(value: Any) -> str:
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode()


# -- the samples --------------------------------------------------------------------------------


def _pack(samples: Sequence[Mapping[str, Any]]) -> str:
    """The samples as base64 of gzip'd JSON: no character of it can end its ``<script>``.

    They are packed grouped by (model, task, group), with ``position`` giving each one's place in
    the view, which the page restores. gzip finds repeats only within 32 KiB: a k-shot prompt
    repeats the shots of its group, and an MMLU run's records come in completion order with the
    subjects interleaved, so grouping shrinks a 14,000-sample run's data about fourfold.
    msgspec writes NaN and infinities as ``null``, which ``JSON.parse`` accepts."""
    order = sorted(
        range(len(samples)),
        key=lambda i: (
            str(samples[i].get("model")),
            str(samples[i].get("task")),
            str(samples[i].get("group") or ""),
            i,
        ),
    )
    packed = {"position": order, "samples": [_slim(samples[i]) for i in order]}
    raw = msgspec.json.encode(packed)
    return base64.b64encode(gzip.compress(raw, compresslevel=_GZIP_LEVEL, mtime=0)).decode()


def _slim(sample: Mapping[str, Any]) -> Mapping[str, Any]:
    """``sample`` with each body field that repeats its ``prompt`` (a completion wire's first
    request) set to null and named in the request's ``as_prompt``, which the page fills back in
    place: a 14,000-sample MMLU run then parses as 73 MB of JSON instead of 116."""
    prompt = sample.get("prompt")
    requests = sample.get("requests")
    if not isinstance(prompt, str) or not requests:
        return sample
    slim = []
    for request in requests:
        body = request.get("body")
        same = [k for k, v in body.items() if v == prompt] if isinstance(body, dict) else []
        if same:
            body = {k: None if k in same else v for k, v in body.items()}
            request = {**request, "body": body, "as_prompt": same}
        slim.append(request)
    return {**sample, "requests": slim}


# -- the plots ----------------------------------------------------------------------------------


def _plots(view: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Each plot as ``{id, title, caption, svg}``; a plot with nothing to show is left out."""
    summary = view.get("summary", [])
    requests = view.get("requests", [])
    margins = view.get("margins", [])
    several = len(_unique(row["model"] for row in summary)) > 1
    makers = [
        ("plot-metric", "Headline metric per task", _metric_plot, summary),
        ("plot-failures", "Failed samples by error class", _failures_plot, summary),
        ("plot-latency", "Latency per request", _latency_plot, requests),
        ("plot-input-tokens", "Input tokens per request", _tokens_plot("input_tokens"), requests),
        (
            "plot-output-tokens",
            "Output tokens per request",
            _tokens_plot("output_tokens"),
            requests,
        ),
        (
            "plot-margins",
            "Scoring margin: gold choice minus the best other",
            _margins_plot,
            margins,
        ),
        ("plot-lengths", "Score by context length", _lengths_plot, view.get("lengths", [])),
    ]
    for number, (ident, title, maker, rows) in enumerate(makers):
        made = maker(rows, several)
        if made is None:
            continue
        figure, caption = made
        yield {"id": ident, "title": title, "caption": caption, "svg": _svg(figure, number)}


def _label(row: Mapping[str, Any], several: bool) -> str:
    return f"{row['model']} / {row['task']}" if several else str(row["task"])


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(
        {
            "svg.fonttype": "none",  # text stays text: smaller, selectable, the page's font
            "font.family": "sans-serif",
            "font.size": 8,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.axisbelow": True,
            "grid.color": "#dddddd",
            "grid.linewidth": 0.6,
        }
    ):
        yield


def _figure(rows: int) -> Figure:
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global figure state

    return Figure(figsize=(_WIDTH_IN, 0.9 + 0.28 * max(rows, 1)), layout="constrained")


def _svg(figure: Figure, number: int) -> Any:
    """``figure`` as inline SVG: no XML prolog, DOCTYPE or metadata (their URLs are namespace
    names, never fetched, but a file with no URL at all is simpler to check), and ids salted per
    figure so two plots on one page never share one."""
    import matplotlib
    from markupsafe import Markup

    out = StringIO()
    with _style(), matplotlib.rc_context({"svg.hashsalt": f"sieval-plot-{number}"}):
        figure.savefig(out, format="svg", metadata={"Date": None}, bbox_inches=None)
    text = out.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text, count=2)
    text = re.sub(r'\s+version="1\.1"', "", text, count=1)
    text = text.replace("<svg ", '<svg role="img" ', 1)
    return Markup(text)  # matplotlib escapes the labels it writes (task and model names)


def _metric_plot(summary: Sequence[Mapping[str, Any]], several: bool) -> tuple[Figure, str] | None:
    rows = [r for r in summary if r.get("value") is not None]
    if not rows:
        return None
    with _style():
        figure = _figure(len(rows))
        ax = figure.add_subplot()
        ys = list(range(len(rows)))[::-1]
        for y, row in zip(ys, rows, strict=True):
            value, ci = row["value"], _interval(row.get("ci"))
            color = _PALETTE[0]
            if ci:
                ax.errorbar(
                    value,
                    y,
                    xerr=[[value - ci[0]], [ci[1] - value]],
                    fmt="o",
                    color=color,
                    ecolor=color,
                    capsize=3,
                    markersize=4,
                    linewidth=1,
                )
            else:
                ax.plot(value, y, "o", color=color, markersize=4)
            ax.annotate(
                f"{value:.3f}",
                (value, y),
                xytext=(0, 5),
                textcoords="offset points",
                ha="center",
                fontsize=7,
                color="#444444",
            )
        ax.set_yticks(ys, [f"{_label(r, several)} ({r['headline']})" for r in rows])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel("headline metric over scored samples (bar: 95% interval)")
    estimators = _unique(str(r.get("estimator")) for r in rows if r.get("estimator"))
    caption = "Each task's headline metric over its scored samples"
    caption += f"; interval: {', '.join(estimators)}." if estimators else "."
    return figure, caption


def _lengths_plot(tables: Sequence[Mapping[str, Any]], several: bool) -> tuple[Figure, str] | None:
    """Each task's score and the average (bold, its 95% band) against the context length, the
    effective length's threshold dashed: one panel per model."""
    if not tables:
        return None
    with _style():
        figure = _figure(8 * len(tables))
        for i, table in enumerate(tables):
            ax = figure.add_subplot(len(tables), 1, i + 1)
            xs = table["lengths"]
            for j, row in enumerate(table["rows"]):
                points = [(x, c) for x, c in zip(xs, row["cells"], strict=True) if c is not None]
                if not points:
                    continue
                average = row["task"] == "average"
                ax.plot(
                    [x for x, _ in points],
                    [c[0] for _, c in points],
                    "o-",
                    color="#000000" if average else _PALETTE[j % len(_PALETTE)],
                    linewidth=2 if average else 0.8,
                    markersize=4 if average else 2,
                    label=row["task"],
                )
                if average and all(c[1] is not None for _, c in points):
                    ax.fill_between(
                        [x for x, _ in points],
                        [c[1] for _, c in points],
                        [c[2] for _, c in points],
                        color="#000000",
                        alpha=0.12,
                        linewidth=0,
                    )
            ax.axhline(table["threshold"], color="#888888", linestyle="--", linewidth=0.8)
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs, [str(x) for x in xs])
            ax.set_ylim(-3, 103)
            ax.set_ylabel("score (%)")
            ax.set_title(str(table["model"]), fontsize=8)
            ax.legend(fontsize=6, ncol=2, loc="lower left")
        ax.set_xlabel("context length (tokens)")
    said = "; ".join(
        f"{t['model']}: effective length "
        + (str(t["effective"]) if t["effective"] is not None else "none")
        for t in tables
    )
    caption = (
        f"RULER's tasks at each length; dashed: the threshold ({tables[0]['threshold']}%); {said}."
    )
    return figure, caption


def _failures_plot(
    summary: Sequence[Mapping[str, Any]], several: bool
) -> tuple[Figure, str] | None:
    rows = [r for r in summary if r.get("failures")]
    if not rows:
        return None
    classes = _unique(name for r in rows for name in r["failures"])
    with _style():
        figure = _figure(len(rows) + (1 if len(classes) > 1 else 0))
        ax = figure.add_subplot()
        ys = list(range(len(rows)))[::-1]
        left = [0.0] * len(rows)
        for i, name in enumerate(classes):
            counts = [float(r["failures"].get(name, 0)) for r in rows]
            ax.barh(ys, counts, left=left, color=_PALETTE[i % len(_PALETTE)], label=name)
            left = [a + b for a, b in zip(left, counts, strict=True)]
        for y, total, row in zip(ys, left, rows, strict=True):
            share = total / max(row["samples"]["total"], 1)
            ax.annotate(
                f"{int(total)} ({share:.1%})",
                (total, y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
        ax.set_yticks(ys, [_label(r, several) for r in rows])
        ax.set_xlabel("failed samples")
        ax.set_xlim(0, max(left) * 1.2)
        ax.grid(axis="y", visible=False)
        ax.legend(
            loc="lower left",
            bbox_to_anchor=(0, 1),
            ncol=min(len(classes), 4),
            fontsize=7,
            frameon=False,
        )
    return figure, "Failed samples per task by error class (a failure is never scored)."


def _boxes(series: Sequence[tuple[str, Sequence[float]]], xlabel: str, *, log: bool) -> Figure:
    with _style():
        figure = _figure(len(series))
        ax = figure.add_subplot()
        ys = list(range(len(series)))[::-1]
        ax.boxplot(
            [values for _, values in series],
            positions=ys,
            **_horizontal(),
            whis=(5, 95),
            showfliers=False,  # 14,000 outlier markers would weigh more than the rest
            widths=0.55,
            patch_artist=True,
            boxprops={"facecolor": "#dbe5f1", "edgecolor": _PALETTE[0], "linewidth": 0.8},
            medianprops={"color": _PALETTE[1], "linewidth": 1.2},
            whiskerprops={"color": _PALETTE[0], "linewidth": 0.8},
            capprops={"color": _PALETTE[0], "linewidth": 0.8},
        )
        ax.set_yticks(ys, [name for name, _ in series])
        ax.set_ylim(-0.7, len(series) - 0.3)
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
    return figure


def _horizontal() -> dict[str, Any]:
    """Horizontal boxes: ``orientation`` since matplotlib 3.10, ``vert`` (deprecated) before."""
    import matplotlib

    major, minor = (int(part) for part in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}


def _wide(series: Sequence[tuple[str, Sequence[float]]]) -> bool:
    """Whether the values span enough orders of magnitude to want a log axis."""
    low = min((min(v) for _, v in series), default=0)
    high = max((max(v) for _, v in series), default=0)
    return low > 0 and high / low > 50


def _latency_plot(
    requests: Sequence[Mapping[str, Any]], several: bool
) -> tuple[Figure, str] | None:
    series = [(_label(r, several), r["latency_s"]) for r in requests if r.get("latency_s")]
    if not series:
        return None
    medians = "; ".join(f"{name} {statistics.median(v) * 1000:.0f} ms" for name, v in series)
    figure = _boxes(series, "seconds per request", log=_wide(series))
    return figure, f"Box: quartiles and median; whiskers: 5th-95th percentile. Medians: {medians}."


def _tokens_plot(field: str) -> Any:
    def plot(requests: Sequence[Mapping[str, Any]], several: bool) -> tuple[Figure, str] | None:
        series = [(_label(r, several), r[field]) for r in requests if r.get(field)]
        if not series:
            return None
        medians = "; ".join(f"{name} {statistics.median(v):g}" for name, v in series)
        figure = _boxes(series, "tokens per request (as the server reported)", log=_wide(series))
        return (
            figure,
            f"Box: quartiles and median; whiskers: 5th-95th percentile. Medians: {medians}.",
        )

    return plot


_UNITS = {"acc": "nats", "acc_uncond": "nats", "acc_norm": "nats per character"}
"""The unit of a choice's score under each headline (log-likelihoods are natural logs)."""


def _scale(span: float) -> int:
    """The power of ten the margin axis is counted in: 0 unless the margins are tiny (the
    reference model's differ in the sixth decimal), then the axis says so in its label instead of
    matplotlib's easily missed ``1e−6`` offset in the corner."""
    if span <= 0 or span >= 0.01:
        return 0
    return math.floor(math.log10(span))


def _margins_plot(margins: Sequence[Mapping[str, Any]], several: bool) -> tuple[Figure, str] | None:
    """One histogram per (model, task) of the gold choice's score minus the best other choice's
    (``results/view.py``): above 0 the gold one was ahead by that much, below 0 behind."""
    rows = [m for m in margins if m.get("values")]
    if not rows:
        return None
    low = min(min(m["values"]) for m in rows)
    high = max(max(m["values"]) for m in rows)
    power = _scale(max(abs(low), abs(high)))
    factor = 10.0**-power
    span = max(abs(low), abs(high)) * factor or 1.0
    units = {_UNITS.get(str(m.get("metric")), "score") for m in rows}
    unit = units.pop() if len(units) == 1 else "each task's score"
    counted = f" × 10^{power}".replace("-", "−") if power else ""
    with _style():
        figure = _figure(0)
        figure.set_figheight(0.6 + 1.1 * len(rows))
        axes: list[Axes] = list(figure.subplots(len(rows), 1, sharex=True, squeeze=False)[:, 0])
        for i, (ax, row) in enumerate(zip(axes, rows, strict=True)):
            values = [v * factor for v in row["values"]]
            ahead = sum(1 for v in values if v > 0)
            ax.hist(
                values,
                bins=50,
                range=(-span, span),
                color=_PALETTE[i % len(_PALETTE)],
                histtype="stepfilled",
                alpha=0.85,
            )
            ax.axvline(0, color="#444444", linewidth=0.8, linestyle="--")
            ax.ticklabel_format(axis="x", style="plain", useOffset=False)
            ax.set_title(
                f"{_label(row, several)} ({row['metric']}): gold ahead in {ahead} of "
                f"{len(values)} ({ahead / len(values):.0%})",
                fontsize=8,
                loc="left",
            )
            ax.set_ylabel("samples")
        axes[-1].set_xlabel(
            f"score of the gold choice minus the best other choice's, in {unit}{counted}"
        )
    caption = (
        "Per scored sample, in the headline's score: right of 0 the gold choice won by that much, "
        "left of 0 it lost by that much."
    )
    if power:
        caption += f" The axis counts in units of 10^{power} {unit}.".replace("-", "−")
    return figure, caption
