"""``sieval probe``: rerun a dialect's live evidence against a real server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from ..audit.probe import ProbeResult, run_probe
from ..errors import ConfigError, StorageError
from ..serving import DEFAULT_COPIES
from . import common
from .app import app
from .inert import shown


def render_probe(results: list[ProbeResult]) -> Table:
    table = Table(title="sieval probe")
    for column in ("case", "expected", "outcome", "", "detail"):
        table.add_column(column, overflow="fold")
    for r in results:
        verdict = "pass" if r.passed else "FAIL"
        table.add_row(shown(r.case), r.expect, r.outcome, verdict, shown(r.detail))
    return table


@app.command("probe")
def probe_command(
    dialect: str = typer.Option(..., "--dialect", help="The dialect to probe."),
    endpoint: str = typer.Option(..., "--endpoint", help="Base URL, e.g. http://127.0.0.1:8000."),
    model: str = typer.Option(..., "--model", help="The served model id."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="Env var with the key."),
    wire_log: Path | None = typer.Option(None, "--wire-log", help="Write every exchange here."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the results as JSON here."),
    checks: bool = typer.Option(
        False,
        "--checks",
        help="Run the serving checks instead: fingerprint, determinism, batch and cache "
        "invariance, seed repeat, server defaults, tool calls.",
    ),
    only: str = typer.Option(
        "all", "--only", metavar="NAMES", help="With --checks: these checks only (comma-separated)."
    ),
    copies: int = typer.Option(
        DEFAULT_COPIES,
        "--copies",
        min=2,
        help="With --checks: concurrent copies in the batch check.",
    ),
) -> None:
    """Exercise every claim of a dialect against a live server; exit 0 when all hold.

    With --checks: what the server does with a run's numbers (exit 0 when no check failed)."""
    key = os.environ.get(api_key_env) if api_key_env else None
    if checks:
        _serving_checks(dialect, endpoint, model, key, wire_log, json_out, only, copies)
    try:
        facts, results = asyncio.run(
            run_probe(dialect, endpoint, model, api_key=key, wire_log=wire_log)
        )
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message) from None
    console = Console(width=180)
    console.print(shown(f"server: {json.dumps(facts, default=str)[:400]}"), highlight=False)
    console.print(render_probe(results))
    if json_out is not None:
        payload = {"facts": facts, "results": [r.__dict__ for r in results]}
        json_out.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    raise typer.Exit(0 if all(r.passed for r in results) else 1)


def _serving_checks(
    dialect: str,
    endpoint: str,
    model: str,
    key: str | None,
    wire_log: Path | None,
    json_out: Path | None,
    only: str,
    copies: int,
) -> None:
    from ..audit.probe import probe_serving
    from ..serving import ALL, parse_selection
    from .serving import render_serving

    try:
        chosen = parse_selection(only)
        serving = asyncio.run(
            probe_serving(
                dialect, endpoint, model, api_key=key, copies=copies,
                checks=tuple(chosen) if chosen is not None else ALL, wire_log=wire_log,
            )
        )  # fmt: skip
    except (ConfigError, StorageError) as exc:
        raise common.fail(exc.message.replace("--serving-checks", "--only")) from None
    unanswered = [f for f in serving.findings if f.detail.startswith("the server did not answer")]
    if unanswered and len(unanswered) == len(serving.findings):
        raise common.fail(f"{endpoint}: {unanswered[0].detail}")
    data = msgspec.to_builtins(serving)
    console = Console(width=120, highlight=False)
    for item in render_serving({model: data}):
        console.print(item)
    if json_out is not None:
        json_out.write_text(json.dumps(data, indent=2, ensure_ascii=False))
    failed = any(f.outcome == "failed" for f in serving.findings)
    raise typer.Exit(1 if failed else 0)
