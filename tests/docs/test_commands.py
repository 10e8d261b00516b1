"""Every fenced ``sieval`` command of the README and docs/*.md runs as written against the
embedded server (``tests/docs/commands.py`` says how commands, markers and placeholders are read);
a block marked ``<!-- needs: ... -->`` is reported as not run, never as passed.

The runnable blocks run once per session, each in a workspace of its own (``examples/`` beside it,
two small runs under ``results/``), its commands in order, the blocks side by side."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tests.docs.commands import NEEDS, Block, blocks, documents, resolve, shown_in
from tests.docs.markdown import ROOT

# every documented command runs once, in one session fixture: on one worker, not once on each
pytestmark = pytest.mark.xdist_group("doc-commands")

BLOCKS = [block for path in documents() for block in blocks(path)]
RUNNABLE = [block for block in BLOCKS if not block.needs]
WORKERS = 3
"""Blocks run side by side: most of a command's time is its own start-up and the embedded
server's replies, so three share two cores well."""
TIMEOUT_S = 600
FIXTURE_RUNS = (
    "eval --endpoint embedded --dialect openai_chat --task mmlu_kshot_clp:top_k=19 --limit 20"
    " --num-fewshot 0 --serving-checks off --out results",
    "eval --endpoint embedded --task arc_easy_kshot_ppl,mmlu_kshot_clp --limit 20"
    " --num-fewshot 0 --serving-checks off --out results",
)
"""The two runs every workspace starts with: ``<before>`` / ``<a>``, then ``<after>`` / ``<b>`` /
``<run>``. Small, holding the tasks and sample ids the docs' commands name; MMLU over the chat
route first, so that the two runs' answers differ (the reference model scores MMLU's letters
alike whatever the shots, but not whatever the template) and a comparison has discordant pairs."""


@dataclass
class Ran:
    command: str
    code: int
    output: str
    seconds: float


def data_dir() -> Path:
    return Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))


def environment() -> dict[str, str]:
    env = dict(os.environ, SIEVAL_DATA_DIR=str(data_dir()), COLUMNS="200", NO_COLOR="1")
    env.pop("FORCE_COLOR", None)
    return env


def sieval(command: str, workspace: Path) -> Ran:
    """Run one ``sieval ...`` command line in ``workspace`` (its comment dropped)."""
    argv = shlex.split(command, comments=True)
    assert argv[0] == "sieval", command
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sieval", *argv[1:]],
        cwd=workspace,
        env=environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    output = done.stdout + done.stderr
    return Ran(command, done.returncode, output, time.perf_counter() - started)


def run_block(block: Block, base: Path, root: Path) -> list[Ran]:
    workspace = root / block.name.replace("/", "_").replace(":", "_")
    shutil.copytree(base / "results", workspace / "results")
    (workspace / "examples").symlink_to(ROOT / "examples")
    ran = []
    for command in block.commands:
        result = sieval(resolve(command.text, workspace), workspace)
        ran.append(result)
        if result.code != 0:
            break  # the rest of the block builds on it
    return ran


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Ran]]:
    """Every block's commands, run once per test session. Under xdist the first worker runs them
    and the others read its results: the ``xdist_group`` above no longer keeps a group on one
    worker (pytest 9 names a test by ``_id``, xdist 3.8 still renames ``_nodeid``), and each
    worker ran all of them, 90 s of two cores."""
    if not (data_dir() / "mmlu").is_dir():
        pytest.skip(f"benchmark data not found at {data_dir()}; set SIEVAL_DATA_DIR")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return run_all(tmp_path_factory)
    shared = tmp_path_factory.getbasetemp().parent  # this session's, common to its workers
    kept = shared / "doc-commands.json"
    with open(shared / "doc-commands.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kept.exists():
            return {
                name: [Ran(**r) for r in ran] for name, ran in json.loads(kept.read_text()).items()
            }
        made = run_all(tmp_path_factory)
        kept.write_text(json.dumps({name: [asdict(r) for r in ran] for name, ran in made.items()}))
        return made


def run_all(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Ran]]:
    root = tmp_path_factory.mktemp("doc-commands")
    base = root / "base"
    base.mkdir()
    for fixture in FIXTURE_RUNS:
        made = sieval(f"sieval {fixture}", base)
        assert made.code == 0, made.output
    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(lambda block: run_block(block, base, root), RUNNABLE)
        return {block.name: ran for block, ran in zip(RUNNABLE, results, strict=True)}


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_a_documented_command_runs_as_written(block: Block, outcomes: dict[str, list[Ran]]) -> None:
    if block.needs:
        pytest.skip(f"not run: needs {', '.join(block.needs)} (marked next to the block)")
    ran = outcomes[block.name]
    for command, result in zip(block.commands, ran, strict=False):
        where = f"{block.source.name}:{command.line}: {result.command}"
        assert result.code == 0, f"{where} exited {result.code}:\n{result.output[-3000:]}"
        assert "Traceback" not in result.output, f"{where}:\n{result.output[-3000:]}"
        missing = shown_in(command.shown, result.output)
        assert not missing, f"{where}: the doc shows lines it did not print: {missing}"
    assert len(ran) == len(block.commands)


def test_every_marker_names_a_known_need() -> None:
    unknown = [(b.name, n) for b in BLOCKS for n in b.needs if n not in NEEDS]
    assert not unknown, f"unknown needs (known: {', '.join(NEEDS)}): {unknown}"


def test_the_docs_have_commands_that_run() -> None:
    """The test is not vacuous: the README's own commands are among those run."""
    readme = [b for b in RUNNABLE if b.source.name == "README.md"]
    assert readme and sum(len(b.commands) for b in RUNNABLE) >= 20


def test_reading_a_block(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "intro\n```bash\nsieval tasks   # all\nls results\nsieval report results/<run> \\\n"
        "    --format md\n```\n\n<!-- needs: your-server -->\n```\n$ sieval eval --endpoint "
        "http://h:1 --model m\nsome output ... more\n$ ls\nnot ours\n$ sieval dialects\n```\n"
        "```yaml\nsieval: not a command\n```\n```\n            sieval run sha256:ab\n```\n"
    )
    first, second = blocks(doc)
    assert (first.line, first.needs) == (2, ())
    assert [c.text for c in first.commands] == [
        "sieval tasks   # all",
        "sieval report results/<run> --format md",
    ]
    assert second.needs == ("your-server",)
    assert [(c.text, c.shown) for c in second.commands] == [
        ("sieval eval --endpoint http://h:1 --model m", ["some output ... more"]),
        ("sieval dialects", []),
    ]
    (tmp_path / "results" / "20261201-000000-aa").mkdir(parents=True)
    (tmp_path / "results" / "20261202-000000-bb").mkdir()
    assert resolve("compare results/<a> results/<run>", tmp_path) == (
        "compare results/20261201-000000-aa results/20261202-000000-bb"
    )
    with pytest.raises(AssertionError, match="unknown placeholder <model>"):
        resolve("report results/<model>", tmp_path)
    assert shown_in(["some output ... more", "gone"], "some  output, then more") == ["gone"]
