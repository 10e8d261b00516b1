"""``sieval eval``: parse, call the runner, render.

Two forms: ``sieval eval CONFIG`` (a config file records a run), or one line without YAML that
can say everything a config says (``oneline.py``)::

    sieval eval --endpoint URL --model ID --task a,b:top_k=19 [--num-fewshot K] [--limit N] ...

Errors name the setting to change the way the run was started: ``--num-fewshot N`` for the one-
line form, ``num_fewshot: N`` for a config (``sieval/settings.py``).

Exit codes: 0 every sample scored; 1 the run finished but some samples failed (they are recorded
and counted in report.json, never scored) or ``--max-failures`` stopped it; 2 bad input (config,
arguments, data, capability mismatch, unreachable endpoint, a failed pre-run check, resume
mismatch), detected before any directory is created, or a run file that cannot be used (a
directory where records belong, a read-only run directory, another process writing the run); 3
stopped because a run file could not be written (a full disk): everything recorded is kept,
``--resume`` completes it; 130 interrupted (the run directory and the command that resumes it
are printed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import ConfigError, StorageError
from . import common, text
from .app import app
from .inert import markup
from .oneline import OneLine, config_yaml, names

__all__ = ["EXIT_INTERRUPTED", "ONE_LINE_ONLY"]

EXIT_INTERRUPTED = 130

ONE_LINE_ONLY = {
    "--name": "name",
    "--kind": "kind",
    "--dialect": "dialect",
    "--api-key-env": "api_key_env",
    "--api-key-file": "api_key_file",
    "--auth": "auth",
    "--num-fewshot": "num_fewshot",
    "--seed": "seed",
    "--task-option": "options",
    "--gen-kwargs": "request_defaults",
    "--retries": "retries",
    "--timeout": "timeout_s",
    "--max-reply-mib": "max_reply_mib",
    "--price": "price",
}
"""The flags of the one-line form a config says in its own keys (refused beside a CONFIG)."""

_ONE = "One-line form: "


@app.command("eval")
def eval_command(
    config: Path | None = typer.Argument(
        None,
        metavar="CONFIG",
        help="The YAML config (models: and tasks:); omit it with --endpoint or --resume.",
    ),
    endpoint: list[str] = typer.Option(
        [],
        "--endpoint",
        metavar="URL",
        help=_ONE + "the server's base URL (a trailing /v1 is dropped), or 'embedded'; "
        "repeated: replicas of one model.",
    ),
    allow_mixed_replicas: bool = typer.Option(
        False,
        "--allow-mixed-replicas",
        help=_ONE + "run on replicas whose serving fingerprints differ (the report says so).",
    ),
    model: list[str] = typer.Option(
        [],
        "--model",
        metavar="ID",
        help=_ONE + "the model id sent on the wire. With a config: run only this model.",
    ),
    task: list[str] = typer.Option(
        [],
        "--task",
        "--tasks",
        metavar="NAME[:K=V]",
        help="Tasks to run (repeatable, or comma-separated). One-line form: NAME:KEY=VALUE sets "
        "the task's n, num_fewshot, seed or an option (mmlu_kshot_clp:top_k=19).",
    ),
    num_fewshot: int | None = typer.Option(
        None, "--num-fewshot", "--num_fewshot", metavar="K", help=_ONE + "shots per prompt."
    ),
    task_option: list[str] = typer.Option(
        [],
        "--task-option",
        metavar="KEY=VALUE",
        help=_ONE + "a task option for every task that has it (top_k=19; 'sieval tasks').",
    ),
    gen_kwargs: list[str] = typer.Option(
        [],
        "--gen-kwargs",
        "--gen_kwargs",
        metavar="K=V,...",
        help=_ONE + "request defaults, filling what a task leaves unset: temperature=0,"
        "max_tokens=64 (sampling fields, lm-eval's max_gen_toks/until, or leaves: options.min_p).",
    ),
    dialect: str | None = typer.Option(
        None, "--dialect", metavar="ID", help=_ONE + "the dialect ('sieval dialects')."
    ),
    kind: str | None = typer.Option(
        None,
        "--kind",
        metavar="completion|chat",
        help=_ONE + "the input kind; picks the dialect when --dialect is not given.",
    ),
    name: str | None = typer.Option(
        None, "--name", metavar="LABEL", help=_ONE + "the model's label (default: the model id)."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", metavar="VAR", help=_ONE + "the env var holding the API key."
    ),
    api_key_file: str | None = typer.Option(
        None, "--api-key-file", metavar="PATH", help=_ONE + "a file holding the API key."
    ),
    auth: str | None = typer.Option(
        None,
        "--auth",
        metavar="SCHEME",
        help=_ONE + "how the key is sent: default, bearer, x-api-key or x-goog-api-key.",
    ),
    seed: int | None = typer.Option(
        None, "--seed", metavar="N", help=_ONE + "the seed of the tasks' shot draws."
    ),
    retries: int | None = typer.Option(
        None,
        "--retries",
        metavar="N",
        help=_ONE + "extra attempts after connect errors, timeouts, 429, 5xx (default 4).",
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help=_ONE + "the budget per request (default 600).",
    ),
    max_reply_mib: float | None = typer.Option(
        None,
        "--max-reply-mib",
        metavar="MIB",
        help=_ONE + "the most one reply may hold, in MiB (default 64); a larger one fails its "
        "sample.",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        metavar="N",
        help="Requests in flight at once (one-line form: the model's; with a config: the cap "
        "over every model).",
    ),
    limit: int | None = typer.Option(
        None, "--limit", metavar="N", help="At most N samples a task."
    ),
    write_config: Path | None = typer.Option(
        None,
        "--write-config",
        metavar="FILE",
        help="Write the config this command stands for to FILE and stop (run it with "
        "'sieval eval FILE').",
    ),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        metavar="RUN_DIR",
        help="Complete this run directory (its config is stored in it).",
    ),
    out: Path | None = typer.Option(
        None, "--out", metavar="DIR", help="Create the run directory in DIR."
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", metavar="DIR", help="Dataset directory (else SIEVAL_DATA_DIR)."
    ),
    max_failures: str = typer.Option(
        "auto",
        "--max-failures",
        metavar="auto|off|N|X",
        help="Stop early: auto, when the first samples of a task all fail for one reason; off; "
        "after more than N failed samples; or over a fraction X < 1 of them.",
    ),
    no_preflight: bool = typer.Option(
        False,
        "--no-preflight",
        help="Skip the pre-run checks (model id, top-k, context, BOS) and the serving checks.",
    ),
    serving_checks: str = typer.Option(
        "auto",
        "--serving-checks",
        metavar="auto|all|off|NAMES",
        help="The serving checks before the run: auto (what the tasks depend on), all, off, or "
        "some of fingerprint, determinism, batch_invariance, cache_invariance, seed_repeat, "
        "server_defaults.",
    ),
    accept_numerics_change: bool = typer.Option(
        False,
        "--accept-numerics-change",
        help="With --resume: continue on a server whose serving fingerprint changed (the run "
        "records both).",
    ),
    price: str | None = typer.Option(
        None,
        "--price",
        metavar="IN,OUT[,CURRENCY]",
        help=_ONE + "the model's price per million input and output tokens (0.15,0.60,USD).",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Forecast each task's requests, prompt tokens, most output tokens and cost, and "
        "stop: no model request is sent, no run directory is written.",
    ),
    forecast: bool | None = typer.Option(
        None,
        "--forecast/--no-forecast",
        help="Count the run's tokens before it starts, to report them beside what it spent "
        "(default: when a model has a price or a budget is given).",
    ),
    budget_tokens: str | None = typer.Option(
        None,
        "--budget-tokens",
        metavar="N",
        help="Stop cleanly before a sample could take the tokens spent (prompt + output, as "
        "the server reports them, earlier sessions included) past N.",
    ),
    budget_cost: str | None = typer.Option(
        None,
        "--budget-cost",
        metavar="X",
        help="The same for the cost, in the models' price currency (needs a price per model).",
    ),
    rerun_censored: float | None = typer.Option(
        None,
        "--rerun-censored",
        metavar="FACTOR",
        help="After the run (or on --resume of a finished one): run each censored sample (cut by "
        "max_tokens before it answered) again with max_tokens times FACTOR; recorded as re-runs, "
        "the first answers kept.",
    ),
    wire_log: bool = typer.Option(False, "--wire-log", help="Log every exchange (redacted)."),
    export: list[str] = typer.Option(
        [],
        "--export",
        metavar="FORMAT",
        help="When the run ends, also write it as FORMAT (repeatable): lm-eval, inspect, eee, "
        "wandb or mlflow, in RUN_DIR/exports/FORMAT/ (see 'sieval export').",
    ),
    allow_unsafe_code: bool = typer.Option(
        False,
        "--allow-unsafe-code",
        help="Let code tasks run the model's code UNSANDBOXED, as your user, when no sandbox "
        "can run here (bubblewrap, podman or docker); said loudly in the run and its report.",
    ),
    run: Path | None = typer.Option(
        None,
        "--run",
        metavar="RUN_DIR",
        help="Run one shard of this run directory (made by 'sieval plan').",
    ),
    shard: str | None = typer.Option(
        None,
        "--shard",
        metavar="K/N",
        help="With --run: k/N, k, or slurm|indexed|env (k from the scheduler).",
    ),
) -> None:
    """Evaluate models on tasks; exit 0 ok, 1 failed samples, 2 bad input, 3 disk full,
    130 interrupted."""
    from ..settings import named_as

    console = text.console(stderr=True)
    if run is not None or shard is not None:
        from .shard import run_shard_command

        if rerun_censored is not None:
            raise common.fail(
                "--rerun-censored re-runs a whole run's censored samples: once the shards are "
                "finalized, run sieval eval --resume RUN_DIR --rerun-censored FACTOR"
            )
        run_shard_command(
            run, shard, config=config, data_dir=data_dir, wire_log=wire_log, console=console,
            budgets=(budget_tokens, budget_cost), allow_unsafe_code=allow_unsafe_code,
        )  # fmt: skip
    one_line = None
    if endpoint:
        one_line = OneLine(
            endpoint=endpoint[0] if len(endpoint) == 1 else list(endpoint),
            allow_mixed_replicas=allow_mixed_replicas,
            model=model[0] if len(model) == 1 else "", tasks=task, name=name,
            kind=kind, dialect=dialect, api_key_env=api_key_env, api_key_file=api_key_file,
            auth=auth, num_fewshot=num_fewshot, seed=seed, task_options=task_option,
            gen_kwargs=gen_kwargs, retries=retries, timeout=timeout, max_reply_mib=max_reply_mib,
            concurrency=concurrency,
            limit=limit, data_dir=data_dir, out=out, price=price,
        )  # fmt: skip
    given = {
        "--name": name, "--kind": kind, "--dialect": dialect, "--api-key-env": api_key_env,
        "--api-key-file": api_key_file, "--auth": auth, "--num-fewshot": num_fewshot,
        "--seed": seed, "--task-option": task_option or None, "--gen-kwargs": gen_kwargs or None,
        "--retries": retries, "--timeout": timeout, "--max-reply-mib": max_reply_mib,
        "--price": price, "--allow-mixed-replicas": allow_mixed_replicas or None,
    }  # fmt: skip
    created: list[Path] = []
    # errors name flags for a one-line run and config keys otherwise (sieval/settings.py)
    with named_as("flags" if one_line is not None else "config"):
        try:
            from ..runner import RunOptions
            from ..runner.stopping import parse_max_failures
            from ..serving import parse_selection

            if dry_run and resume is not None:
                raise ConfigError(
                    "--dry-run forecasts a new run; a stopped run's report shows its forecast "
                    f"beside what it spent: sieval report {resume}"
                )
            cfg, models, tasks = _config(config, one_line, model, task, resume, given)
            stop_rule = parse_max_failures(max_failures)
            parse_selection(serving_checks)  # refused before anything runs
            if export and not dry_run:
                from .export import check_formats

                check_formats(export)  # a typo or a missing library, before any request
            cost = cost_options(dry_run, forecast, budget_tokens, budget_cost)
            if write_config is not None:
                _write_config(write_config, one_line, console)
            options = RunOptions(
                out=out,
                resume=resume,
                data_dir=data_dir,
                limit=limit if one_line is None else None,  # the one-line config holds n
                concurrency=concurrency if one_line is None else None,
                models=models,
                tasks=tasks,
                wire_log=wire_log,
                preflight=not no_preflight,
                serving_checks=serving_checks,
                accept_numerics_change=accept_numerics_change,
                allow_unsafe_code=allow_unsafe_code,
                max_failures=stop_rule,
                cost=cost,
                rerun_censored=rerun_censored,
                on_run_dir=created.append,
                on_stage=lambda line: console.print(_stage(line)),
            )
            result = _run(cfg, options, console, created)
        except (ConfigError, StorageError) as exc:
            raise common.fail(exc.message, code=common.exit_code(exc)) from None
    if dry_run:
        _render_forecast(result)
        raise typer.Exit(common.EXIT_OK)
    _render(result, console)
    if export:
        _export(result.run_dir, export, console)
    raise typer.Exit(result.exit_code)


def _export(run_dir: Path, formats: list[str], console: Console) -> None:
    """``--export``: the finished run written in each format (``sieval export``)."""
    from .export import export_formats

    try:
        lines = export_formats(run_dir, formats)
    except (ConfigError, StorageError) as exc:
        raise common.fail(
            f"the run is complete, but its export failed: {exc.message}; once fixed: "
            f"sieval export {run_dir} --to {' --to '.join(formats)}",
            code=common.exit_code(exc),
        ) from None
    for line in lines:
        console.print(f"export {escape(line)}")


def cost_options(
    dry_run: bool, forecast: bool | None, budget_tokens: str | None, budget_cost: str | None
) -> Any:
    """The cost flags as ``CostOptions`` (each budget parsed once, naming its flag)."""
    from ..cost.budget import parse_budget_cost, parse_budget_tokens
    from ..cost.forecast import CostOptions

    return CostOptions(
        dry_run=dry_run,
        forecast=forecast,
        budget_tokens=parse_budget_tokens(budget_tokens) if budget_tokens is not None else None,
        budget_cost=parse_budget_cost(budget_cost) if budget_cost is not None else None,
    )


def _render_forecast(result: Any) -> None:
    """``--dry-run``'s output: the forecast, and that nothing ran."""
    from .costs import render_forecast

    out = text.console()
    prices = {pm.label: pm.config.price for pm in result.plan.models}
    for part in render_forecast(result.forecast, prices):
        out.print(part)
    out.print("dry run: no model request was sent and no run directory was written")


def _config(
    config: Path | None,
    one_line: OneLine | None,
    model: list[str],
    task: list[str],
    resume: Path | None,
    given: dict[str, Any],
) -> tuple[Any, tuple[str, ...], tuple[str, ...]]:
    """The config, and the model labels and tasks to run of it, from whichever form the command
    line used."""
    from ..plan.config import load_config
    from ..plan.plan import resolve_task
    from ..settings import setting
    from ..store.rundir import load_run_config

    if one_line is not None:
        if config is not None:
            raise ConfigError("give a CONFIG or --endpoint, not both")
        if len(model) > 1 or (not model and one_line.endpoint != "embedded"):
            raise ConfigError("the one-line form needs exactly one --model ID")
        registry = common.task_registry()
        cfg = one_line.config(registry)
        for entry in cfg.tasks:
            resolve_task(entry.name, registry)
        return cfg, (), ()
    for flag, value in given.items():
        if value is not None:
            raise ConfigError(
                f"{flag} belongs to the one-line form (sieval eval --endpoint URL --model ID "
                f"--task NAME {flag} ...); a config sets {setting(ONE_LINE_ONLY[flag])} in its "
                "model or task entries"
            )
    tasks = names(task)
    if any(":" in t or "=" in t for t in tasks):
        raise ConfigError(
            "--task NAME:KEY=VALUE belongs to the one-line form; a config sets a task's options "
            "in its entry (- {name: mmlu_kshot_clp, options: {top_k: 19}})"
        )
    if config is not None:
        return load_config(config), tuple(model), tasks
    if resume is not None:
        return load_run_config(resume), tuple(model), tasks
    raise ConfigError(
        "nothing to evaluate: give a CONFIG file, or --endpoint URL --model ID --task NAME, or "
        "--resume RUN_DIR (try: sieval eval examples/quickstart.yaml)"
    )


def _write_config(path: Path, one_line: OneLine | None, console: Console) -> None:
    """Save the one-line form's config as YAML and stop (exit 0); nothing runs."""
    if one_line is None:
        raise ConfigError("--write-config saves a one-line run (--endpoint ...) as a config file")
    if path.exists():
        raise ConfigError(f"--write-config {str(path)!r} exists; name a new file")
    try:
        path.write_text(config_yaml(one_line.mapping(common.task_registry())))
    except OSError as exc:
        raise ConfigError(
            f"--write-config {str(path)!r}: cannot write it ({exc.strerror})"
        ) from exc
    console.print(f"wrote {escape(str(path))}; run it with: sieval eval {escape(str(path))}")
    raise typer.Exit(common.EXIT_OK)


def _run(cfg: Any, options: Any, console: Console, created: list[Path]) -> Any:
    from ..runner import make_progress, run_eval

    progress = make_progress(console)
    try:
        return run_eval(cfg, options, tasks=common.task_registry(), progress=progress)
    except KeyboardInterrupt:
        progress.close()
        if created:
            run_dir = escape(str(created[0]))
            console.print(
                f"[yellow]interrupted[/]: what finished is recorded in {run_dir}\n"
                f"  look at it:  sieval report {run_dir}\n"
                f"  resume it:   sieval eval --resume {run_dir}"
            )
        else:
            console.print("[yellow]interrupted[/] before the run directory was created")
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _render(result: Any, console: Console) -> None:
    """What a run prints at its end, the summary last (the details: ``sieval report``), so the
    end of a run fits a 40-row screen."""
    from rich.text import Text

    from .inert import shown
    from .report import render_failures, render_finishes, render_summary

    out = text.console()
    for warning in result.warnings:
        console.print(Text("warning: ", style="yellow") + shown(warning))
    for line in render_failures(result.report):
        console.print(Text("failed: ", style="yellow") + line)
    for line in render_finishes(result.report):
        out.print(Text("finished: ") + line)
    out.print(render_summary(result.report))
    from .costs import render_budget, spent_lines

    for line in spent_lines(result.report):
        out.print(Text("cost: ") + line)
    for line in render_budget(result.report):
        console.print(line)
    run_dir = escape(str(result.run_dir))
    if result.stopped:
        console.print(
            f"[red]{markup(result.stopped)}[/]\n  resume with: sieval eval --resume {run_dir}"
        )
    if result.failed:
        console.print(
            f"[yellow]{result.failed} sample(s) failed[/]: recorded with their error class, "
            "counted in report.json, never scored"
        )
    out.print(f"details: sieval report {run_dir}", soft_wrap=True)
    out.print(f"samples: sieval samples {run_dir} --wrong", soft_wrap=True)
    out.print(f"run directory: {run_dir}", soft_wrap=True)  # one line, to copy


def _stage(line: str) -> str:
    """A stage line as printed: dim, but a serving check's warning stands out (yellow)."""
    if line.startswith("warning: "):
        return f"[yellow]warning:[/] {markup(line.removeprefix('warning: '))}"
    return f"[dim]{markup(line)}[/]"
