"""The typer application every command module registers on, and the table of those modules.

A command's module is imported only when that command runs: ``sieval --help`` lists the commands
from ``COMMANDS`` without importing any of them (each brings what it needs: rich, the runner, the
reference server, aiohttp), so help and ``sieval tasks`` start in a fraction of the time a run
needs. ``tests/cli/test_startup.py`` checks the table against the commands themselves.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

COMMANDS: dict[str, tuple[str, str]] = {
    "compare": (
        "sieval.cli.compare",
        "Compare two runs sample by sample: paired differences, McNemar, flips, log-likelihoods.",
    ),
    "data": (
        "sieval.cli.data",
        "Which datasets the tasks need, where they are looked for, which are present, how to get "
        "them; exit 1 when a file is missing.",
    ),
    "dialects": (
        "sieval.cli.dialects",
        "List the dialects with their status and capability matrix (from their tables).",
    ),
    "eval": (
        "sieval.cli.eval",
        "Evaluate models on tasks; exit 0 ok, 1 failed samples, 2 bad input, 3 disk full, "
        "130 interrupted.",
    ),
    "export": (
        "sieval.cli.export",
        "Write a finished run as lm-eval's result files, an Inspect log, Every Eval Ever "
        "records, a W&B run (offline) or an MLflow run (local store).",
    ),
    "finalize": (
        "sieval.cli.finalize",
        "Check every planned sample is recorded once, merge the shards, write report.json.",
    ),
    "parity": (
        "sieval.cli.parity",
        "Run the tasks through two dialects and a control pass; exit 0 only when identical.",
    ),
    "plan": (
        "sieval.cli.plan",
        "Freeze a run as N shards: checks once, writes run.json and plan.json, runs nothing.",
    ),
    "power": (
        "sieval.cli.power",
        "Samples two runs need to detect a difference on a task, or the smallest one n detect.",
    ),
    "probe": (
        "sieval.cli.probe",
        "Exercise every claim of a dialect against a live server; exit 0 when all hold.",
    ),
    "rejudge": (
        "sieval.cli.rejudge",
        "Judge a run's answers again with another judge, as a new run; nothing is regenerated.",
    ),
    "report": (
        "sieval.cli.report",
        "Print a run's report as tables, or as md, csv or json rows; --html writes a page.",
    ),
    "samples": (
        "sieval.cli.samples",
        "Print a run's samples, explained; filter by task, model, outcome, id or text.",
    ),
    "serve": (
        "sieval.cli.serve",
        "Run the embedded reference server (vLLM 0.32.0 wire) until Ctrl-C.",
    ),
    "slurm": (
        "sieval.cli.slurm",
        "Write RUN_DIR/slurm/ (shards.sbatch, finalize.sbatch, submit.sh) and RUN_DIR/k8s/.",
    ),
    "tasks": (
        "sieval.cli.tasks",
        "List the tasks (family, data, splits, shots) and suites; one task in full.",
    ),
}
"""Each command: the module that registers it, and its help line (its docstring's first line)."""


class _Commands(TyperGroup):
    """The root group: the commands of ``COMMANDS`` are imported when they are looked up to run,
    and listed in the help from the table."""

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name][0])  # registers it on ``app``
            built = typer.main.get_command(app)
            assert isinstance(built, TyperGroup)
            self.commands.update(built.commands)
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _help_flag_default(command, ctx)
            _readable_values(command)
        return command

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False  # as _help_flag_default, for the root's own flag
        return option

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [
            (name, COMMANDS[name][1] if name in COMMANDS else self._short(name))
            for name in self.list_commands(ctx)
            if name in COMMANDS or not self.commands[name].hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def _short(self, name: str) -> str:
        return str(self.commands[name].get_short_help_str(limit=200))


def _help_flag_default(command: Any, ctx: Any) -> None:
    """typer leaves a command's ``--help`` flag without a default, and turns the missing value
    into a bool through a pydantic adapter, importing pydantic (tens of ms) for every command
    run; ``False`` is the same flag, read without it."""
    option = command.get_help_option(ctx)
    if option is not None and option.default is None:
        option.default = False


_METAVARS: dict[Any, str] = {int: "N", float: "X", Path: "PATH"}


def _readable_values(command: Any) -> None:
    """typer shows a value by its Python type (``<int>``, ``<list[str]>``, ``<int range>``) and a
    required argument as ``{run_dir}``; name each value as a reader says it instead: ``--limit
    N``, ``RUN_DIR``. A command's own ``metavar=`` wins."""
    for param in command.params:
        if param.param_type_name == "argument":
            param.metavar = param.metavar or param.name.upper()
            param.display_type_rich = lambda ctx: None
            param._usage_display_name = lambda p=param: (
                p.metavar if p.required else f"[{p.metavar}]"
            )
        elif param.metavar is None and not getattr(param, "is_flag", False):
            annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            param.metavar = _METAVARS.get(annotation, param.name.upper())


app = typer.Typer(
    name="sieval",
    cls=_Commands,
    help="Evaluate LLMs through a checked, provider-neutral model IR.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain help and usage errors: rich's help panels would import rich for every --help
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"sieval {version('sieval')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate LLMs through a checked, provider-neutral model IR."""
