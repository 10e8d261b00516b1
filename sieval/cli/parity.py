"""``sieval parity``: the same tasks through two dialects against one server, then a control."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from ..audit.parity import CallDiff, ParityResult, run_parity
from ..errors import ConfigError, StorageError
from ..plan.config import load_config
from ..runner import RunOptions, make_progress
from . import common
from .app import app
from .inert import shown


def _metric(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _diff(d: CallDiff) -> str:
    return f"{d.max_abs_diff:.3g}" + ("" if d.texts_equal else ", texts differ")


def render_parity(result: ParityResult) -> Table:
    a, b, _ = result.dialects
    table = Table(title=f"sieval parity: pass 1 = {a}, pass 2 = {b}, pass 3 = {a} (control)")
    for column in (
        "task",
        "metric",
        "pass 1",
        "pass 2",
        "pass 3",
        "failed",
        "calls",
        "input logprobs",
        "sampled/top-k",
        "max |diff| 1v2",
        "texts 1v2",
        "1v3 (control)",
        "2v3",
        "identical",
    ):
        table.add_column(column)
    for t in result.tasks:
        d, c, j = t.versus_b, t.control, t.adjacent
        table.add_row(
            t.task,
            t.headline,
            *(_metric(m) for m in t.metrics),
            "/".join(str(f) for f in t.failed),
            str(d.calls),
            str(d.input_logprobs),
            f"{d.sampled_logprobs}/{d.top_k_logprobs}",
            f"{d.max_abs_diff:.3g}",
            "equal" if d.texts_equal else "DIFFER",
            _diff(c),
            _diff(j),
            "yes" if t.identical else "NO",
        )
    return table


def render_agreement(result: ParityResult) -> Table:
    """Pass 1 against pass 2: same predictions, and the |diff| distribution of the logprobs."""
    table = Table(title="pass 1 vs pass 2: agreement and |logprob diff| distribution")
    for column in ("task", "same prediction", "compared", "p50", "p90", "p99", "max"):
        table.add_column(column, justify="right" if column != "task" else "left")
    for t in result.tasks:
        d = t.versus_b
        q = d.quantiles()
        table.add_row(
            t.task,
            f"{d.same_prediction}/{d.samples}",
            str(len(d.diffs)),
            *(f"{q[k]:.3g}" for k in ("p50", "p90", "p99", "max")),
        )
    return table


@app.command("parity")
def parity_command(
    config: Path = typer.Argument(..., help="A config with one model (its endpoint) and tasks."),
    dialects: str = typer.Option(
        "openai_completions,vllm_native", "--dialects", help="Two dialect ids, comma-separated."
    ),
    model: list[str] = typer.Option([], "--model", help="The model to use, if several."),
    task: list[str] = typer.Option([], "--task", help="Run only this task (repeatable)."),
    limit: int | None = typer.Option(None, "--limit", help="At most N samples per task."),
    out: Path | None = typer.Option(None, "--out", help="Create the run directories in DIR."),
    data_dir: Path | None = typer.Option(None, "--data-dir", help="Dataset directory."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the comparison here."),
    warmup: bool = typer.Option(
        False, "--warmup", help="Run dialect A once first, uncompared (warms server caches)."
    ),
    endpoints: str | None = typer.Option(
        None, "--endpoints", help="Two base URLs, A's and B's (two servers), comma-separated."
    ),
) -> None:
    """Run the tasks through two dialects and a control pass; exit 0 only when identical."""
    console = Console(stderr=True, soft_wrap=True)
    try:
        result = run_parity(
            load_config(config),
            [d.strip() for d in dialects.split(",") if d.strip()],
            RunOptions(
                out=out,
                data_dir=data_dir,
                limit=limit,
                models=tuple(model),
                tasks=tuple(task),
            ),
            tasks=common.task_registry(),
            progress=make_progress(console),
            warmup=warmup,
            endpoints=[e.strip() for e in (endpoints or "").split(",") if e.strip()],
        )
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    Console(width=200).print(render_parity(result))
    Console().print(render_agreement(result))
    for t in result.tasks:
        for where in t.versus_b.mismatches:
            console.print(shown(f"{t.task}: differs at {where}", style="yellow"), highlight=False)
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_json(), indent=2))
    for run in result.runs:
        console.print(f"run directory: {run.run_dir}", highlight=False)
    raise typer.Exit(0 if result.identical else 1)
