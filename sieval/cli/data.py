"""``sieval data``: which datasets the tasks need, where they are looked for, which are present,
and how to get the ones that are not.

sieval data                 every task
sieval data gsm8k mmlu      those tasks (lm-eval's names too)
sieval data --data-dir DIR  as a run with that flag would look

Where a run looks, one rule: a path is read relative to where it is written. ``--data-dir`` and
``$SIEVAL_DATA_DIR`` are relative to the working directory; a config's ``data_dir:`` to the config
file; with none of them, ``./data``, else ``../shared/data``. The first that is given wins, in that
order (``runner.engine.resolve_data_dir``).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError
from . import common, text
from .app import app

__all__ = ["data_rows", "where_data_is"]

RULE = (
    "a path is read relative to where it is written: --data-dir and $SIEVAL_DATA_DIR to the "
    "working directory, a config's data_dir: to the config file; with none, ./data, else "
    "../shared/data"
)


def where_data_is(data_dir: Path | None) -> tuple[Path, str]:
    """The data directory a one-line run would read, and what chose it."""
    from ..data.source import DEFAULT_DATA_DIRS

    if data_dir is not None:
        return data_dir, "--data-dir"
    env = os.environ.get("SIEVAL_DATA_DIR")
    if env:
        return Path(env), "$SIEVAL_DATA_DIR"
    found = next((p for p in DEFAULT_DATA_DIRS if p.is_dir()), None)
    if found is not None:
        return found, "the default, found"
    return DEFAULT_DATA_DIRS[0], "the default; it does not exist"


def data_rows(names: list[str], data_dir: Path) -> list[dict[str, Any]]:
    """Per task: its dataset folder, the files it reads, which are present, and the hub copy."""
    from ..data.registry import get_source
    from ..tasks.aliases import ALIASES
    from ..tasks.registry import SUITES

    registry = common.task_registry()
    wanted: list[str] = []
    for name in names or list(registry):
        name = ALIASES[name].task if name in ALIASES else name
        members = [m.name for m in SUITES[name].tasks] if name in SUITES else [name]
        wanted += [m for m in members if m not in wanted]
    rows: list[dict[str, Any]] = []
    for name in wanted:
        from ..plan.plan import resolve_task

        task = resolve_task(name, registry)
        spec = getattr(task, "spec", None)
        row: dict[str, Any] = {"task": name, "dataset": None, "hub": None, "files": []}
        if spec is not None:
            source = get_source(spec.data.source)
            row["dataset"] = source.folder
            row["hub"] = source.hub + (f" ({source.hub_name})" if source.hub_name else "")
        try:
            paths = task.data_files(data_dir)
        except ConfigError as exc:
            row["error"] = exc.message
            paths = []
        row["files"] = [str(p) for p in paths]
        row["missing"] = [str(p) for p in paths if not p.is_file()]
        rows.append(row)
    return rows


@app.command("data")
def data_command(
    tasks: list[str] = typer.Argument(None, metavar="[TASK]...", help="Tasks or suites."),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="Look here, as 'sieval eval --data-dir' would."
    ),
) -> None:
    """Which datasets the tasks need, where they are looked for, which are present, how to get
    them; exit 1 when a file is missing."""
    out = text.console()
    where, chosen = where_data_is(data_dir)
    try:
        rows = data_rows(list(tasks or []), where)
    except ConfigError as exc:
        raise common.fail(exc.message, code=common.exit_code(exc)) from None
    out.print(f"data directory: {escape(str(where.resolve()))} ({chosen})", soft_wrap=True)
    out.print(f"where: {RULE}", style="dim")
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("task", no_wrap=True)
    table.add_column("dataset", no_wrap=True)
    table.add_column("files", justify="right", no_wrap=True)
    table.add_column("present", no_wrap=True)
    table.add_column("hub copy (lm-eval's)")
    for row in rows:
        n = len(row["files"])
        if "error" in row:
            present = "[red]error[/]"
        elif not row["missing"]:
            present = "[green]yes[/]"
        else:
            present = f"[yellow]{n - len(row['missing'])} of {n}[/]"
        table.add_row(row["task"], row["dataset"] or "-", str(n), present, row["hub"] or "-")
    out.print(table)
    absent = [r for r in rows if r["missing"] or "error" in r]
    if not absent:
        out.print("every file is present: nothing to fetch")
        return
    hub = importlib.util.find_spec("datasets") is not None
    out.print()
    for row in absent:
        if "error" in row:
            out.print(f"{row['task']}: {escape(row['error'])}", soft_wrap=True)
            continue
        shown = ", ".join(str(Path(p).relative_to(where)) for p in row["missing"][:3])
        more = f" and {len(row['missing']) - 3} more" if len(row["missing"]) > 3 else ""
        out.print(f"{row['task']}: missing {escape(shown)}{more}", soft_wrap=True)
    how = (
        "'datasets' is installed: a run reads a missing dataset's hub copy (online), as above"
        if hub
        else "or install the optional 'datasets' package (pip install 'sieval\\[hub]') and run "
        "online: a run then reads a missing dataset's hub copy, as above"
    )
    place = escape(str(where.resolve()))
    out.print(
        f"to get them: put each dataset's files in {place}/<dataset>/ (each folder's "
        f"SOURCE.md in a data directory says where its files came from, docs/data.md lists the "
        f"formats), or point --data-dir at a directory that has them; {how}",
        soft_wrap=True,
    )
    raise typer.Exit(common.EXIT_FAILED_SAMPLES)  # 1: something is missing
