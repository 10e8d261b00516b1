"""``sieval tasks``: every task with its family, protocol, splits, shots and data; one in detail.

sieval tasks              the table (80 columns), then the suites
sieval tasks NAME         one task (or suite) in full: reference, data, options, protocol
sieval tasks --json       the same facts as data
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import ConfigError, StorageError, did_you_mean
from ..tasks.base import Task
from ..tasks.suite import Suite
from . import common
from .app import app

__all__ = ["describe_task", "render_task", "render_tasks"]

_SHORT = {
    "choice log-likelihood": "choice LL",
    "target log-likelihood": "target LL",
    "rolling log-likelihood": "rolling LL",
    "generation, checked": "gen, checked",
}


def describe_task(task: Task) -> dict[str, Any]:
    """A task's facts as plain data (a task that is not a spec has fewer)."""
    spec = getattr(task, "spec", None)
    out: dict[str, Any] = {
        "name": task.name,
        "headline": task.headline,
        "defaults": dict(getattr(task, "defaults", {})),
        "requirements": {r.capability: r.why for r in task.requirements},
        "protocol": task.protocol,
    }
    origin = getattr(task, "source", None)
    if isinstance(origin, dict):
        out["source_file"] = origin.get("file")
        if "definition" in origin:
            out["definition"] = origin["definition"]
    if spec is not None:
        from ..tasks.spec import source

        data = spec.data
        stored = data.shots is not None and data.shots in source(data.source).splits
        out.update(
            family=spec.family.kind,
            reference=spec.reference,
            about=" ".join(spec.about.split()),
            source=source(data.source).folder,
            split=data.split,
            shots_from=data.shots if stored else None,
            sampler=data.sampler.name if data.shots else None,
            subsets=len(data.subsets),
            fixed_shots=spec.fixed_shots or None,
            differs=spec.differs or None,
        )
    elif task.listing is not None:
        out.update(family=task.listing[0], source=task.listing[1])
    return out


def _shots(facts: Mapping[str, Any]) -> str:
    """The default shots: ``5 (train)``, five drawn from train; ``3 in prompt`` where they are
    written into the prompt (BBH's CoT examples); ``0 only`` where none can be drawn."""
    k = facts["defaults"].get("num_fewshot", 0)
    source = facts.get("shots_from")
    if facts.get("fixed_shots"):
        return f"{facts['fixed_shots']} in prompt"
    return f"{k} ({source})" if source else "0 only"


def render_tasks(registry: Mapping[str, Task], suites: Mapping[str, Suite] | None = None) -> Text:
    """Two lines a task within 80 columns: name, family, data, scored split, shots; then what
    its protocol follows (folded). Then one line per suite."""
    rows = [("task", "family", "data", "scored", "shots")]
    follows = [""]
    stock = getattr(registry, "stock", registry)
    for name in registry:
        if name not in stock:  # a task file's: listed by its file, resolved when it is used
            entry = registry.catalogue.entries[name]  # type: ignore[attr-defined]
            rows.append((name, f"{entry.kind} file", "-", "-", "-"))
            follows.append(f"from {entry.file}")
            continue
        f = describe_task(registry[name])
        family = _SHORT.get(f.get("family", "-"), f.get("family", "-"))
        rows.append((name, family, f.get("source", "-"), f.get("split", "-"), _shots(f)))
        follows.append(
            f"from {f['source_file']}"
            if f.get("source_file")
            else f.get("reference") or f["protocol"]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = Text()
    for i, (row, reference) in enumerate(zip(rows, follows, strict=True)):
        line = " ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        out.append(line + "\n", style="bold" if i == 0 else None)
        for part in textwrap.wrap(
            reference, width=76, break_long_words=False, break_on_hyphens=False
        ):
            out.append(f"    {part}\n", style="dim")
    catalogue = getattr(registry, "catalogue", None)
    if catalogue is not None:
        for group in sorted(catalogue.groups):
            members = catalogue.members(group)
            out.append("\n" + textwrap.fill(f"group {group}: {', '.join(members)}", width=80,
                                             subsequent_indent="  "))  # fmt: skip
        for shadowed in getattr(registry, "shadowed", []):
            out.append(f"\nshadowed: {shadowed} of {catalogue.entries[shadowed].file} (a stock "
                       "task's name; name its file with --task FILE)")  # fmt: skip
        for problem in catalogue.problems:
            out.append(f"\nunreadable: {problem}")
    for suite in (suites or {}).values():
        members = ", ".join(m.name for m in suite.tasks)
        out.append(
            "\n" + textwrap.fill(f"suite {suite.name}: {members}", width=80, subsequent_indent="  ")
        )
    out.append(
        "\n\nLL: log-likelihood; checked: graded by the task's checker (math, code, rules)"
        "\nshots: the default number and (the split they are drawn from); --num-fewshot "
        "changes it; 'in prompt': written into the prompt, fixed"
        "\n'sieval tasks NAME': one task's data, options and protocol; --json"
    )
    return out


def render_task(task: Task) -> Table:
    """One task in full, a fact per row."""
    f = describe_task(task)
    table = Table(show_header=False, box=None, padding=(0, 1))
    table.add_column("fact", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows = [
        ("task", f["name"]),
        ("about", f.get("about")),
        ("follows", f.get("reference")),
        ("family", f.get("family")),
        (
            "data",
            f.get("source") and f"{f['source']} ({f['subsets']} subsets)"
            if f.get("subsets")
            else f.get("source"),
        ),
        ("scored", f.get("split")),
        (
            "shots",
            (f.get("fixed_shots") and f"{f['fixed_shots']}, written into the prompt (fixed)")
            or (f.get("shots_from") and f"from {f['shots_from']}, {f['sampler']}"),
        ),
        ("headline", f["headline"]),
        ("defaults", ", ".join(f"{k}={v}" for k, v in f["defaults"].items()) or "-"),
        ("needs", "\n".join(f"{k}: {why}" for k, why in f["requirements"].items())),
        ("protocol", f["protocol"]),
        ("differs", f.get("differs")),
        ("file", f.get("source_file")),
        (
            "resolved",
            "\n".join(f"{k}: {json.dumps(v)}" for k, v in f["definition"].items())
            if f.get("definition")
            else None,
        ),
    ]
    for fact, value in rows:
        if value:
            table.add_row(fact, str(value))
    return table


@app.command("tasks")
def tasks_command(
    name: str | None = typer.Argument(None, help="One task or suite to show in full."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON data."),
    include_path: list[Path] = typer.Option(
        [],
        "--include-path",
        "--include_path",
        metavar="DIR",
        help="A folder of task files listed beside the stock tasks (repeatable; also "
        "SIEVAL_INCLUDE_PATH). NAME may also be a task file.",
    ),
) -> None:
    """List the tasks (family, data, splits, shots) and suites; one task in full."""
    from ..tasks.catalogue import is_task_file
    from ..tasks.registry import SUITES

    try:
        registry = common.tasks_for(include_path)
        if name is not None and is_task_file(name):
            name = registry.add_file(Path(name))[0]
        if name is not None and name in registry:
            registry[name]  # resolved here: its errors are the command's
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    console = Console(width=80) if not as_json else None
    if name is None:
        if as_json:
            stock = getattr(registry, "stock", registry)
            data = {
                "tasks": [describe_task(registry[n]) for n in stock]
                + [
                    {"name": n, "source_file": str(registry.catalogue.entries[n].file)}
                    for n in registry
                    if n not in stock
                ],
                "suites": [
                    {"name": s.name, "about": s.about, "tasks": [m.name for m in s.tasks]}
                    for s in SUITES.values()
                ],
            }
            typer.echo(json.dumps(data, indent=2))
            return
        assert console is not None
        console.print(render_tasks(registry, SUITES))
        return
    if name in SUITES:
        suite = SUITES[name]
        if as_json:
            typer.echo(json.dumps({"name": suite.name, "about": suite.about,
                                   "tasks": [m.name for m in suite.tasks]}, indent=2))  # fmt: skip
            return
        assert console is not None
        console.print(f"suite {suite.name}: {suite.about}")
        console.print(render_tasks({m.name: registry[m.name] for m in suite.tasks}))
        return
    groups = getattr(getattr(registry, "catalogue", None), "groups", {})
    if name not in registry and name in groups:
        members = registry.expand(name)
        typer.echo(f"group {name}: {', '.join(members)}")
        return
    if name not in registry:
        raise common.fail(
            f"unknown task {name!r}.{did_you_mean(name, [*registry, *SUITES])} Run 'sieval tasks' "
            "for the list."
        )
    if as_json:
        typer.echo(json.dumps(describe_task(registry[name]), indent=2))
        return
    assert console is not None
    console.print(render_task(registry[name]))
