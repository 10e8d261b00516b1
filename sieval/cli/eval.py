"""``sieval eval``: parse, call the runner, render.

Two forms: ``sieval eval CONFIG`` (a config file records a run), or one line without YAML that
can say everything a config says (``oneline.py``)::

    sieval eval --endpoint URL --model ID --task a,b:top_k=19 [--num-fewshot K] [--limit N] ...

Errors name the setting to change the way the run was started: ``--num-fewshot N`` for the one-
line form, ``num_fewshot: N`` for a config (``sieval/setting_names.py``).

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

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import ConfigError, StorageError
from . import common, text
from .app import app
from .inert import markup
from .oneline import OneLine, config_yaml, names, parse_limit

if TYPE_CHECKING:  # the runner is imported when a run starts, not when the CLI does
    from ..cost.forecast import CostOptions
    from ..plan.config import EvalConfig
    from ..runner.engine import RunOptions, RunResult
    from ..tasks.catalogue import Registry

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
    "--gen-kwargs": "request_overrides",
    "--retries": "retries",
    "--timeout": "timeout_s",
    "--max-reply-mib": "max_reply_mib",
    "--price": "price",
    "--samples": "samples",
    "--system-instruction": "system_instruction",
    "--fewshot-as-multiturn": "fewshot_as_multiturn",
    "--apply-chat-template": "apply_chat_template",
    "--server-defaults": "server_defaults",
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
        help=_ONE + "set over what a task sets, as lm-eval's: temperature=0.7,max_tokens=64 "
        "(sampling fields, lm-eval's max_gen_toks/until, or leaves: options.min_p); the run says "
        "what it overrode.",
    ),
    system_instruction: str | None = typer.Option(
        None,
        "--system-instruction",
        "--system_instruction",
        metavar="TEXT",
        help=_ONE + "a system message first in every chat request (chat wires).",
    ),
    fewshot_as_multiturn: bool = typer.Option(
        False,
        "--fewshot-as-multiturn",
        "--fewshot_as_multiturn",
        help=_ONE + "each shot a user and an assistant turn, as lm-eval's (chat wires).",
    ),
    apply_chat_template: bool = typer.Option(
        False,
        "--apply-chat-template",
        "--apply_chat_template",
        help=_ONE + "on a completion wire, the chat prompt rendered by the server's chat "
        "template (its /tokenize), as lm-eval's.",
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
    limit: str | None = typer.Option(
        None,
        "--limit",
        metavar="N",
        help="At most N samples a task, or a fraction of each task's rows (0.1), as lm-eval's.",
    ),
    samples: list[str] = typer.Option(
        [],
        "--samples",
        metavar="ID,...",
        help=_ONE + "only these sample ids (as 'sieval samples' shows them), in every task.",
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
    include_path: list[Path] = typer.Option(
        [],
        "--include-path",
        "--include_path",
        metavar="DIR",
        help="A folder of task files (lm-eval YAML, Python) searched beside the stock tasks "
        "(repeatable; also include_path: in a config, SIEVAL_INCLUDE_PATH). --task may also name "
        "a task file.",
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
    server_defaults: str | None = typer.Option(
        None,
        "--server-defaults",
        metavar="unknown|neutral",
        help=_ONE + "neutral: the server was started with no sampling defaults of its own (vLLM "
        "--generation-config vllm); a field the wire cannot send is then taken as neutral, not "
        "marked exposed.",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Forecast each task's requests, prompt tokens, most output tokens, cost and time, "
        "and stop: no run directory is written, no model request is sent but the rate probe's "
        "(--no-rate-probe: none).",
    ),
    forecast: bool | None = typer.Option(
        None,
        "--forecast/--no-forecast",
        help="Count the run's tokens before it starts, to report them beside what it spent "
        "(default: when a model has a price, a budget is given, or a task's runs are long: "
        "RULER's).",
    ),
    rate_probe: bool | None = typer.Option(
        None,
        "--rate-probe/--no-rate-probe",
        help="Measure the server's prompt and generation rates with a few short greedy requests "
        "to forecast the run's time (default: for a model with no price on a local server; a "
        "rate measured on the same server in the last 30 min is used again).",
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
    cache: Path | None = typer.Option(
        None,
        "--cache",
        metavar="DIR",
        help="Keep replies in DIR and answer a request sent before from it, keyed by the exact "
        "body and the server's serving fingerprint (never across a numerics change).",
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
    from ..setting_names import named_as

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
            gen_kwargs=gen_kwargs, system_instruction=system_instruction, retries=retries,
            fewshot_as_multiturn=fewshot_as_multiturn, apply_chat_template=apply_chat_template,
            timeout=timeout, max_reply_mib=max_reply_mib,
            concurrency=concurrency,
            limit=None, samples=samples, data_dir=data_dir, out=out, price=price,
            server_defaults=server_defaults,
        )  # fmt: skip
    given = {
        "--name": name, "--kind": kind, "--dialect": dialect, "--api-key-env": api_key_env,
        "--api-key-file": api_key_file, "--auth": auth, "--num-fewshot": num_fewshot,
        "--seed": seed, "--task-option": task_option or None, "--gen-kwargs": gen_kwargs or None,
        "--retries": retries, "--timeout": timeout, "--max-reply-mib": max_reply_mib,
        "--price": price, "--samples": samples or None,
        "--system-instruction": system_instruction, "--server-defaults": server_defaults,
        "--fewshot-as-multiturn": fewshot_as_multiturn or None,
        "--apply-chat-template": apply_chat_template or None,
        "--allow-mixed-replicas": allow_mixed_replicas or None,
    }  # fmt: skip
    created: list[Path] = []
    # errors name flags for a one-line run and config keys otherwise (sieval/setting_names.py)
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
            limited = parse_limit(limit)
            if one_line is not None:
                one_line.limit = limited
            cfg, models, tasks, registry = _config(
                config, one_line, model, task, resume, given, include_path
            )
            if resume is not None and one_line is None:
                for line in _ignored_on_resume(resume, out):
                    console.print(f"note: {line}", soft_wrap=True, markup=False)
            for line in _alias_notes(config, one_line):
                console.print(f"note: {line}", soft_wrap=True, markup=False)
            stop_rule = parse_max_failures(max_failures)
            parse_selection(serving_checks)  # refused before anything runs
            if export and not dry_run:
                from .export import check_formats

                check_formats(export)  # a typo or a missing library, before any request
            cost = cost_options(dry_run, forecast, budget_tokens, budget_cost, rate_probe)
            if write_config is not None:
                _write_config(write_config, one_line, console)
            options = RunOptions(
                out=out,
                resume=resume,
                data_dir=data_dir,
                limit=limited if one_line is None else None,  # the one-line config holds n
                concurrency=concurrency if one_line is None else None,
                models=models,
                tasks=tasks,
                wire_log=wire_log,
                cache=cache,
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
            result = _run(cfg, options, console, created, registry)
        except (ConfigError, StorageError) as exc:
            raise common.fail(exc.message, code=common.exit_code(exc)) from None
    if dry_run:
        with named_as("flags" if one_line is not None else "config"):
            refused = _render_forecast(result)
        raise typer.Exit(common.EXIT_BAD_INPUT if refused else common.EXIT_OK)
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
    dry_run: bool,
    forecast: bool | None,
    budget_tokens: str | None,
    budget_cost: str | None,
    rate_probe: bool | None = None,
) -> CostOptions:
    """The cost flags as ``CostOptions`` (each budget parsed once, naming its flag)."""
    from ..cost.budget import parse_budget_cost, parse_budget_tokens
    from ..cost.forecast import CostOptions

    return CostOptions(
        dry_run=dry_run,
        forecast=forecast,
        budget_tokens=parse_budget_tokens(budget_tokens) if budget_tokens is not None else None,
        budget_cost=parse_budget_cost(budget_cost) if budget_cost is not None else None,
        rate_probe=rate_probe,
    )


def _render_forecast(result: RunResult) -> bool:
    """``--dry-run``'s output: the forecast, what the run would refuse, and that nothing ran;
    whether it would refuse anything (then the command exits 2)."""
    from rich.text import Text

    from .costs import refusals, render_forecast

    assert result.plan is not None and result.forecast is not None  # a dry run forecasts
    out = text.console()
    prices = {pm.label: pm.config.price for pm in [*result.plan.models, *result.plan.role_models]}
    for part in render_forecast(result.forecast, prices):
        out.print(part)
    found = refusals(result.forecast, result.plan)
    for exact, line in found:
        head = "would refuse: " if exact else "warning: "
        out.print(Text(head, style="red" if exact else "yellow") + Text(line))
    probed = sum(r.requests for r in result.forecast.rates)
    sent = f"only the rate probe's {probed} requests were" if probed else "no model request was"
    out.print(f"dry run: {sent} sent and no run directory was written")
    return any(exact for exact, _ in found)


def _expand(items: Sequence[str], registry: Registry) -> list[str]:
    """``--task`` values with each task file replaced by its tasks' names (the file added to the
    registry) and each group or tag by its members; ``:K=V`` suffixes kept."""
    from ..tasks.catalogue import is_task_file

    out: list[str] = []
    for item in names(items):
        head, colon, rest = item.partition(":")
        if is_task_file(head):
            found = registry.add_file(Path(head))
        elif "=" not in head:
            found = registry.expand(head.strip())
        else:
            found = [head]
        out += [f"{name}{colon}{rest}" for name in found]
    return out


def _with_tasks(cfg: EvalConfig, registry: Registry) -> EvalConfig:
    """``cfg`` with file and group entries expanded, and its include path the registry's (every
    folder absolute, so a resume finds the task files from any folder)."""
    import msgspec

    from ..tasks.catalogue import is_task_file

    entries = []
    for entry in cfg.tasks:
        if is_task_file(entry.name):
            found = registry.add_file(Path(entry.name))
        else:
            found = registry.expand(entry.name)
        entries += [msgspec.structs.replace(entry, name=name) for name in found]
    folders = [str(p) for p in registry.catalogue.roots]
    for entry in entries:
        source = registry.source_of(entry.name) if entry.name in registry else "stock"
        if source != "stock":
            folder = str(Path(source).parent)
            if not any(folder == f or folder.startswith(f + "/") for f in folders):
                folders.append(folder)
    return msgspec.structs.replace(cfg, tasks=entries, include_path=folders)


def _config(
    config: Path | None,
    one_line: OneLine | None,
    model: list[str],
    task: list[str],
    resume: Path | None,
    given: dict[str, Any],
    include_path: Sequence[Path] = (),
) -> tuple[EvalConfig, tuple[str, ...], tuple[str, ...], Registry]:
    """The config, the model labels and tasks to run of it, and the tasks it can name (stock
    and included), from whichever form the command line used."""
    from ..plan.config import load_config
    from ..plan.plan import resolve_task
    from ..plan.run_config import load_run_config
    from ..setting_names import setting

    if one_line is not None:
        if config is not None:
            raise ConfigError("give a CONFIG or --endpoint, not both")
        if len(model) > 1 or (not model and one_line.endpoint != "embedded"):
            raise ConfigError("the one-line form needs exactly one --model ID" + _served(one_line))
        registry = common.tasks_for(include_path)
        one_line.tasks = _expand(one_line.tasks, registry)
        cfg = _with_tasks(one_line.config(registry), registry)
        for entry in cfg.tasks:
            resolve_task(entry.name, registry)
        return cfg, (), (), registry
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
    if config is not None or resume is not None:
        cfg = load_config(config) if config is not None else load_run_config(resume)  # type: ignore[arg-type]
        registry = common.tasks_for([*cfg.include_path, *include_path])
        cfg = _with_tasks(cfg, registry)
        tasks = tuple(n for t in tasks for n in registry.expand(t))
        return cfg, tuple(model), tasks, registry
    raise ConfigError(
        "nothing to evaluate: give a CONFIG file, or --endpoint URL --model ID --task NAME, or "
        "--resume RUN_DIR (try: sieval eval examples/quickstart.yaml)"
    )


def _alias_notes(config: Path | None, one_line: OneLine | None) -> list[str]:
    """A line for each of lm-eval's task names the command used: the entry it runs as."""
    from ..tasks.aliases import notes

    if one_line is not None:
        return notes(item.partition(":")[0].strip() for item in names(one_line.tasks))
    if config is None:
        return []
    try:
        import yaml

        raw = yaml.safe_load(config.read_text())
        entries = raw.get("tasks", []) if isinstance(raw, dict) else []
        return notes(e["name"] if isinstance(e, dict) else str(e) for e in entries)
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return []  # the config was read once already; a problem there is said there


def _ignored_on_resume(resume: Path, out: Path | None) -> list[str]:
    """What ``--resume`` leaves as it was, said: ``--out`` (the run keeps its directory; a
    ``--limit`` that adds no samples is said by the run itself)."""
    if out is None:
        return []
    return [f"--out is ignored: --resume completes {resume} in its own directory"]


def _served(one_line: OneLine) -> str:
    """What the one-line form's server serves, for the error of a missing ``--model``."""
    import asyncio

    import msgspec

    from ..dialects.registry import get_dialect
    from ..plan.config import ModelConfig
    from ..runner.preflight import served_models

    try:
        entry = msgspec.convert({**one_line.model_entry(), "model": "-"}, ModelConfig)
        ids = asyncio.run(
            served_models(entry.base_url, get_dialect(entry.dialect_id), entry.api_key())
        )
    except (ConfigError, msgspec.ValidationError):
        return ""
    if not ids:
        return ""
    return f"; {entry.base_url} serves {', '.join(ids)}: add --model {ids[0]}"


def _write_config(path: Path, one_line: OneLine | None, console: Console) -> None:
    """Save the one-line form's config as YAML and stop (exit 0); nothing runs."""
    if one_line is None:
        raise ConfigError("--write-config saves a one-line run (--endpoint ...) as a config file")
    from ..store.rundir import write_new_file

    mapping = one_line.mapping(common.task_registry())
    if "data_dir" not in mapping:  # the directory this run would read, so the file runs anywhere
        from .data import where_data_is

        used = {"data_dir": str(where_data_is(None)[0].resolve())}
        mapping = used | mapping
    write_new_file(path, config_yaml(mapping), flag="--write-config")
    console.print(f"wrote {escape(str(path))}; run it with: sieval eval {escape(str(path))}")
    raise typer.Exit(common.EXIT_OK)


def _run(
    cfg: EvalConfig, options: RunOptions, console: Console, created: list[Path], registry: Registry
) -> RunResult:
    from ..runner import make_progress, run_eval

    progress = make_progress(console)
    try:
        return run_eval(cfg, options, tasks=registry, progress=progress)
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


def _render(result: RunResult, console: Console) -> None:
    """What a run prints at its end, the summary last (the details: ``sieval report``), so the
    end of a run fits a 40-row screen."""
    from rich.text import Text

    from .inert import shown
    from .report import render_failures, render_finishes, render_summary

    out = text.console()
    report = result.report
    assert report is not None  # a run that is not a dry run reports
    for warning in result.warnings:
        console.print(Text("warning: ", style="yellow") + shown(warning))
    for line in render_failures(report):
        console.print(Text("failed: ", style="yellow") + line)
    for line in render_finishes(report):
        out.print(Text("answers: ") + line)
    out.print(render_summary(report))
    from .costs import render_budget, spent_lines, time_lines

    for line in spent_lines(report):
        out.print(Text("cost: ") + line)
    for line in time_lines(result.forecast, report):
        out.print(Text("time: ") + line)
    for line in render_budget(report):
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
