"""``sieval eval``: parse, call the runner, render.

Two forms: ``sieval eval CONFIG`` (a config file records a run), or one line without YAML::

    sieval eval --endpoint URL --model ID [--dialect D] --task a,b [--limit N] [--api-key-env VAR]

Exit codes: 0 every sample scored; 1 the run finished but some samples failed (they are recorded
and counted in report.json, never scored) or ``--max-failures`` stopped it; 2 bad input (config,
arguments, data, capability mismatch, unreachable endpoint, a failed pre-run check, resume
mismatch), detected before any directory is created; 130 interrupted (the run directory and the
command that resumes it are printed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from ..errors import ConfigError
from . import common
from .app import app

__all__ = ["EXIT_INTERRUPTED", "one_line_config"]

EXIT_INTERRUPTED = 130


def _names(values: list[str]) -> tuple[str, ...]:
    """Repeated and comma-separated values: ``--task a,b --task c`` -> ``(a, b, c)``."""
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


def one_line_config(endpoint: str, model: str, tasks: tuple[str, ...], **fields: Any) -> Any:
    """The config the one-line form stands for (one model, the named tasks)."""
    from ..runner.config import parse_config

    entry = {"endpoint": endpoint, "model": model, **{k: v for k, v in fields.items() if v}}
    if not tasks:
        raise ConfigError("the one-line form needs --task NAME[,NAME...] (see 'sieval tasks')")
    import yaml

    text = yaml.safe_dump({"models": [entry], "tasks": [{"name": t} for t in tasks]})
    return parse_config(text, source="the command line")


@app.command("eval")
def eval_command(
    config: Path | None = typer.Argument(
        None, help="The YAML config (models: and tasks:); omit it with --endpoint or --resume."
    ),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="One-line form: the server's base URL (or 'embedded')."
    ),
    model: list[str] = typer.Option(
        [], "--model", help="One-line form: the model id. With a config: run only this model."
    ),
    dialect: str | None = typer.Option(None, "--dialect", help="One-line form: the dialect id."),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="One-line form: the env var holding the API key."
    ),
    task: list[str] = typer.Option(
        [], "--task", "--tasks", help="Tasks to run (repeatable, or comma-separated)."
    ),
    limit: int | None = typer.Option(None, "--limit", help="At most N samples per task."),
    resume: Path | None = typer.Option(
        None, "--resume", help="Complete this run directory (its config is stored in it)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Create the run directory in DIR."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Dataset directory (else SIEVAL_DATA_DIR)."
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", help="Global cap on requests in flight."
    ),
    max_failures: float | None = typer.Option(
        None, "--max-failures", help="Stop after more than N failed samples (or a fraction < 1)."
    ),
    no_preflight: bool = typer.Option(
        False, "--no-preflight", help="Skip the pre-run checks (model id, top-k, context, BOS)."
    ),
    wire_log: bool = typer.Option(False, "--wire-log", help="Log every exchange (redacted)."),
    run: Path | None = typer.Option(
        None, "--run", help="Run one shard of this run directory (made by 'sieval plan')."
    ),
    shard: str | None = typer.Option(
        None, "--shard", help="With --run: k/N, k, or slurm|indexed|env (k from the scheduler)."
    ),
) -> None:
    """Evaluate models on tasks; exit 0 ok, 1 failed samples, 2 bad input, 130 interrupted."""
    console = Console(stderr=True, soft_wrap=True, highlight=False)
    if run is not None or shard is not None:
        from .shard import run_shard_command

        run_shard_command(run, shard, data_dir=data_dir, wire_log=wire_log, console=console)
    tasks = _names(task)
    created: list[Path] = []
    try:
        cfg, models = _config(config, endpoint, model, dialect, api_key_env, tasks, resume)
        from ..runner import RunOptions, make_progress, run_eval

        result = run_eval(
            cfg,
            RunOptions(
                out=out,
                resume=resume,
                data_dir=data_dir,
                limit=limit,
                concurrency=concurrency,
                models=models,
                tasks=tasks if config is not None or resume is not None else (),
                wire_log=wire_log,
                preflight=not no_preflight,
                max_failures=max_failures,
                on_run_dir=created.append,
                on_stage=lambda text: console.print(f"[dim]{text}[/]"),
            ),
            tasks=common.task_registry(),
            progress=make_progress(console),
        )
    except ConfigError as exc:
        raise common.fail(exc.message) from None
    except KeyboardInterrupt:
        if created:
            console.print(
                f"[yellow]interrupted[/]: what finished is recorded in {created[0]}; resume with\n"
                f"  sieval eval --resume {created[0]}"
            )
        else:
            console.print("[yellow]interrupted[/] before the run directory was created")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _render(result, console)
    raise typer.Exit(result.exit_code)


def _config(
    config: Path | None,
    endpoint: str | None,
    model: list[str],
    dialect: str | None,
    api_key_env: str | None,
    tasks: tuple[str, ...],
    resume: Path | None,
) -> tuple[Any, tuple[str, ...]]:
    """The config and the model labels to run, from whichever form the command line used."""
    from ..runner.config import load_config
    from ..runner.rundir import load_run_config

    if endpoint is not None:
        if config is not None:
            raise ConfigError("give a CONFIG or --endpoint, not both")
        if len(model) > 1 or (not model and endpoint != "embedded"):
            raise ConfigError("the one-line form needs exactly one --model ID")
        model_id = model[0] if model else ""  # embedded: the reference server's own model
        return (
            one_line_config(endpoint, model_id, tasks, dialect=dialect, api_key_env=api_key_env),
            (),
        )
    if config is not None:
        return load_config(config), tuple(model)
    if resume is not None:
        return load_run_config(resume), tuple(model)
    raise ConfigError(
        "nothing to evaluate: give a CONFIG file, or --endpoint URL --model ID --task NAME, or "
        "--resume RUN_DIR (try: sieval eval examples/quickstart.yaml)"
    )


def _render(result: Any, console: Console) -> None:
    from .report import render_failures, render_finishes, render_report

    out = Console(highlight=False)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    for table in render_report(result.report, brief=True):
        out.print(table)
    for line in render_finishes(result.report):
        out.print(f"finished: {line}")
    for line in render_failures(result.report):
        console.print(f"[yellow]failed:[/] {line}")
    if result.stopped:
        console.print(
            f"[red]{result.stopped}[/]; resume with: sieval eval --resume {result.run_dir}"
        )
    out.print(f"run directory: {result.run_dir}", soft_wrap=True)  # one line, to copy
    if result.failed:
        console.print(
            f"[yellow]{result.failed} sample(s) failed[/]: recorded with their error class, "
            "counted in report.json, never scored"
        )
