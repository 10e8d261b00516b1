"""Start-up stays light: what ``import sieval``, ``sieval --help`` and ``sieval tasks`` import.

No timing here (the machines are noisy; ``bench/startup.py`` measures): each check runs in a
fresh interpreter and lists the heavy modules left in ``sys.modules``.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sieval.cli import app as cli_app

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("aiohttp", "rich", "pydantic", "sieval.reference", "sieval.runner", "sieval.model")

_RUN = """
import contextlib, io, json, sys
sys.argv = ["sieval", *{args!r}]
from sieval.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy, "out": out.getvalue()}}))
"""


def _fresh(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _cli(*args: str) -> dict:
    return _fresh(_RUN.format(args=list(args), heavy=HEAVY))


def test_import_sieval_leaves_the_http_client_out() -> None:
    code = (
        f"import json, sys, sieval; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    assert json.loads(subprocess.check_output([sys.executable, "-c", code], cwd=ROOT)) == []


def test_model_is_still_there_on_first_use() -> None:
    code = "import sys, sieval; m = sieval.Model; print(m.__module__, 'aiohttp' in sys.modules)"
    out = subprocess.check_output([sys.executable, "-c", code], cwd=ROOT, text=True)
    assert out.split() == ["sieval.model", "True"]


def test_help_lists_every_command_and_imports_none_of_them() -> None:
    result = _cli("--help")
    assert result["code"] == 0
    assert result["heavy"] == []
    for name in cli_app.COMMANDS:
        assert f"\n  {name} " in result["out"]


def test_tasks_brings_rich_and_typers_coercion_only() -> None:
    """``sieval tasks [NAME] [--json]`` has parameters, which typer coerces through pydantic."""
    result = _cli("tasks")
    assert result["code"] == 0
    assert result["heavy"] == ["pydantic", "rich"]
    assert "arc_easy_kshot_ppl" in result["out"]


@pytest.mark.parametrize("name", sorted(cli_app.COMMANDS))
def test_the_table_names_each_commands_module_and_help(name: str) -> None:
    """``COMMANDS`` is the only place the root help reads, so it must match each command."""
    module, help_line = cli_app.COMMANDS[name]
    __import__(module)
    info = next(
        c
        for c in cli_app.app.registered_commands
        if (c.name or c.callback.__name__.replace("_", "-")) == name
    )
    assert info.callback.__module__ == module
    assert inspect.getdoc(info.callback).split("\n\n")[0].replace("\n", " ") == help_line


def test_a_lazy_command_runs_and_shows_its_own_help() -> None:
    result = _cli("eval", "--help")
    assert result["code"] == 0
    assert "--endpoint" in result["out"]
    assert "sieval.reference" not in result["heavy"]
