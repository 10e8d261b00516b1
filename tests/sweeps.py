"""Whole-dataset oracle sweeps: the full set whenever what they test changed, else a fixed sample.

A sweep is a test that runs a checker over every row of a dataset against an oracle (every MBPP
reference solution in the sandbox, every IFEval row against the reference checker). Per push it
runs on a fixed stratified sample; in full when its inputs (the source files it tests, its own
test module, the data rows) hash to anything else than the digest at which it last passed in full.
``tests/sweeps-passed.json`` records those digests: a full pass writes its digest there (commit
the change), so the file can only ever name inputs the full sweep really passed on.

    @pytest.mark.sweep("mbpp_sanitized")
    def test_every_mbpp_solution_passes(sweep: SweepRun, ...) -> None:
        rows = sweep.select(all_rows, strata=lambda row: ...)

``--sweeps`` (or ``SIEVAL_SWEEPS``) picks the mode: ``auto`` (the default: full when the inputs
changed, else the sample), ``sample`` or ``full`` (nightly, or by hand). The terminal summary says
per sweep what ran, and never "passed" for rows that did not run.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import random
import warnings
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

ROOT = Path(__file__).parents[1]
RECORD = ROOT / "tests" / "sweeps-passed.json"
MODES = ("auto", "sample", "full")
T = TypeVar("T")


@dataclass(frozen=True)
class Sweep:
    """One sweep's inputs: what, changed, means the full sweep must run again."""

    sources: tuple[str, ...]
    """Files (globs) under the repository root: the code under test and the test module."""
    data: tuple[str, ...]
    """Files (globs) under the data directory (``SIEVAL_DATA_DIR``): the rows, an oracle's code."""
    sample: int
    """Rows a per-push run takes (at least one from each stratum)."""


SWEEPS: dict[str, Sweep] = {
    "humaneval_canonical": Sweep(
        sources=(
            "sieval/scoring/sandbox/*.py",
            "sieval/scoring/code.py",
            "tests/scoring/test_sandbox.py",
        ),
        data=("humaneval/HumanEval.jsonl.gz",),
        sample=24,
    ),
    "mbpp_sanitized": Sweep(
        sources=(
            "sieval/scoring/sandbox/*.py",
            "sieval/scoring/code.py",
            "tests/scoring/test_sandbox.py",
        ),
        data=("mbpp/sanitized-mbpp.json",),
        sample=40,
    ),
    "humaneval_oracle": Sweep(
        sources=(
            "tests/scoring/code_corpus.py",
            "tests/scoring/test_code_verdicts.py",
            "tests/fixtures/code/humaneval_oracle.json",
            "scripts/record_humaneval_oracle.py",
        ),
        data=(),
        sample=12,
    ),
    "ifeval_synthetic_edges": Sweep(
        sources=(
            "sieval/scoring/ifeval/*.py",
            "tests/scoring/test_ifeval.py",
            "tests/scoring/ifeval_cases.py",
            "tests/scoring/ifeval_reference.py",
        ),
        data=("ifeval/input_data.jsonl", "ifeval/reference/*.py"),
        sample=60,
    ),
}
"""Every sweep by name (the name its ``@pytest.mark.sweep`` gives)."""


def data_dir() -> Path:
    return Path(os.environ.get("SIEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))


def digest(sweep: Sweep, data: Path | None = None) -> str:
    """The inputs' content hash: each file's name and SHA-256, in name order (16 hex digits)."""
    data = data_dir() if data is None else data
    files: list[tuple[str, Path]] = []
    for root, prefix, patterns in ((ROOT, "", sweep.sources), (data, "data:", sweep.data)):
        for pattern in patterns:
            found = sorted(p for p in root.glob(pattern) if p.is_file())
            if not found:
                raise FileNotFoundError(f"sweep input {pattern!r} matches no file under {root}")
            files += [(prefix + str(p.relative_to(root)), p) for p in found]
    total = hashlib.sha256()
    for name, path in sorted(files):
        total.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()[:16]


def recorded() -> dict[str, dict[str, object]]:
    """``tests/sweeps-passed.json``: per sweep, the digest and row count of its last full pass."""
    if not RECORD.exists():
        return {}
    data: dict[str, dict[str, object]] = json.loads(RECORD.read_text())
    return data


def record(passes: dict[str, dict[str, object]]) -> None:
    """Add full passes to the record (sorted, one sweep a line-block, so diffs stay small)."""
    data = {**recorded(), **passes}
    RECORD.write_text(json.dumps(dict(sorted(data.items())), indent=2) + "\n")


def stratified(
    rows: Sequence[T], n: int, strata: Callable[[T], Iterable[Hashable]], seed: int = 0
) -> list[T]:
    """A fixed sample of about ``n`` rows that holds every stratum at least once.

    A row may belong to several strata (``strata`` returns them all). Strata are served in turn,
    each from its rows in a seeded order, until ``n`` rows are taken and every stratum has one;
    the sample keeps the rows' original order.
    """
    by_stratum: dict[Hashable, list[int]] = {}
    for i, row in enumerate(rows):
        for label in strata(row):
            by_stratum.setdefault(label, []).append(i)
    order = random.Random(seed)
    queues = []
    for label in sorted(by_stratum, key=repr):
        members = by_stratum[label][:]
        order.shuffle(members)
        queues.append((label, members))
    taken: set[int] = set()
    covered: set[Hashable] = set()
    while queues and (len(taken) < n or len(covered) < len(by_stratum)):
        for label, members in queues:
            if len(taken) >= n and label in covered:
                continue
            while members and members[0] in taken:
                members.pop(0)
            if members:
                taken.add(members.pop(0))
                covered.add(label)
            elif any(i in taken for i in by_stratum[label]):
                covered.add(label)
        queues = [(label, members) for label, members in queues if members]
    return [rows[i] for i in sorted(taken)]


def imports(*sources: str) -> set[str]:
    """The top-level modules Python sources import (``-`` for none): strata for code sweeps, so
    the sample asks the sandbox for every library the whole set does."""
    found: set[str] = set()
    for source in sources:
        with warnings.catch_warnings():  # old rows' invalid escapes are not this sweep's business
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found or {"-"}


@dataclass
class SweepRun:
    """What one sweep test runs on in this session (the ``sweep`` fixture)."""

    name: str
    full: bool
    inputs: str
    """The digest of the inputs now."""
    passed_at: str | None
    """The digest of the last full pass on record, if any."""
    sample_size: int
    rows: int = 0
    """Rows selected from (set by ``select``)."""
    ran: int = 0
    """Rows run (set by ``select``)."""
    strata: int = 0

    def select(self, rows: Sequence[T], strata: Callable[[T], Iterable[Hashable]]) -> list[T]:
        """Every row for a full sweep, else the fixed stratified sample."""
        chosen = list(rows) if self.full else stratified(rows, self.sample_size, strata)
        self.rows, self.ran = len(rows), len(chosen)
        self.strata = len({label for row in rows for label in strata(row)})
        return chosen

    def line(self, outcome: str) -> str:
        """The summary line: what ran, and what the record says about the rest."""
        if self.full:
            if self.passed_at is None:
                why = "no full pass on record"
            elif self.passed_at != self.inputs:
                why = f"the inputs changed since the full pass at {self.passed_at}"
            else:
                why = "--sweeps=full"
            line = f"{self.name}: full sweep ({why}), {self.ran} of {self.rows} rows {outcome}"
            if outcome == "passed" and self.passed_at != self.inputs:
                return f"{line} at inputs {self.inputs}: recorded in {RECORD.name}, commit it"
            return f"{line} at inputs {self.inputs}"
        line = f"{self.name}: sample of {self.ran} of {self.rows} rows ({self.strata} strata)"
        line = f"{line} {outcome}"
        if self.passed_at == self.inputs:
            return f"{line}; the full sweep passed at these inputs, {self.inputs}"
        last = f"last at {self.passed_at}" if self.passed_at else "never"
        return f"{line}; the full sweep has NOT passed at these inputs {self.inputs} ({last})"


def plan(name: str, mode: str) -> SweepRun:
    """Full or sample for the sweep ``name`` under ``mode`` (auto, sample or full)."""
    if name not in SWEEPS:
        raise KeyError(f"unknown sweep {name!r}: declare it in SWEEPS (tests/sweeps.py)")
    if mode not in MODES:
        raise ValueError(f"--sweeps={mode!r}: use one of {', '.join(MODES)}")
    sweep = SWEEPS[name]
    inputs = digest(sweep)
    passed = recorded().get(name, {}).get("inputs")
    passed_at = passed if isinstance(passed, str) else None
    full = mode == "full" or (mode == "auto" and passed_at != inputs)
    return SweepRun(name, full, inputs, passed_at, sweep.sample)


# -- the pytest plugin (tests/conftest.py loads this module as one) --------------------------------

RUN = pytest.StashKey[SweepRun]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--sweeps",
        choices=MODES,
        default=os.environ.get("SIEVAL_SWEEPS", "auto"),
        help="whole-dataset sweeps: auto (full when their inputs changed since the last full "
        "pass on record, else a fixed sample), sample, or full (default: $SIEVAL_SWEEPS or auto)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Summary(), "sieval-sweep-summary")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seen: dict[str, str] = {}
    for item in items:
        marker = item.get_closest_marker("sweep")
        if marker is None:
            continue
        name = marker.args[0]
        if name not in SWEEPS:
            raise pytest.UsageError(f"{item.nodeid}: sweep {name!r} is not declared in sweeps.py")
        if seen.setdefault(name, item.nodeid) != item.nodeid:
            raise pytest.UsageError(f"sweep {name!r} marks two tests: {seen[name]}, {item.nodeid}")


@pytest.fixture
def sweep(request: pytest.FixtureRequest) -> SweepRun:
    """The rows this sweep test runs on: all of them, or the fixed sample."""
    marker = request.node.get_closest_marker("sweep")
    if marker is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses `sweep` without @pytest.mark.sweep")
    run = plan(marker.args[0], request.config.getoption("--sweeps"))
    request.node.stash[RUN] = run
    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """The sweep's run rides on the item's reports (so it reaches xdist's controller)."""
    report = yield
    run = item.stash.get(RUN, None)
    if run is not None and report.when != "teardown":
        # item.user_properties is the list every later report of the item carries
        item.user_properties[:] = [p for p in item.user_properties if p[0] != "sweep"]
        item.user_properties.append(("sweep", json.dumps(asdict(run))))
        report.user_properties = list(item.user_properties)
    return report


class Summary:
    """On the controller: a line per sweep, and the digest of each full pass recorded."""

    def __init__(self) -> None:
        self.runs: dict[str, SweepRun] = {}
        self.outcomes: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key != "sweep":
                continue
            run = SweepRun(**json.loads(value))
            if report.failed:
                outcome = "failed"
            elif report.skipped:
                outcome = "skipped"
            elif report.when == "call":
                outcome = "passed"
            else:
                outcome = self.outcomes.get(run.name, "")
            if self.outcomes.get(run.name) not in ("failed", "skipped"):
                self.outcomes[run.name] = outcome
            if report.when != "teardown":
                self.runs[run.name] = run

    def passes(self) -> dict[str, dict[str, object]]:
        return {
            name: {"inputs": run.inputs, "rows": run.rows}
            for name, run in self.runs.items()
            if run.full and self.outcomes.get(name) == "passed"
        }

    def pytest_sessionfinish(self) -> None:
        if self.passes():
            record(self.passes())

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.runs:
            terminalreporter.section("sweeps")
            for name in sorted(self.runs):
                outcome = self.outcomes.get(name) or "did not finish"
                terminalreporter.write_line(self.runs[name].line(outcome))
