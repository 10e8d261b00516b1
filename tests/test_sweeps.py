"""The sweeps' sample-or-full machinery (tests/sweeps.py): a fixed sample that holds every stratum,
the full set whenever the inputs changed, and a record written only by a full pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sweeps
from sweeps import Sweep, SweepRun, digest, plan, stratified

ROWS = [{"id": i, "kind": "rare" if i == 17 else ("a", "b", "c")[i % 3]} for i in range(60)]


def kind(row: dict[str, object]) -> set[object]:
    return {row["kind"]}


def test_the_sample_holds_every_stratum_and_is_the_same_each_time() -> None:
    sample = stratified(ROWS, 6, kind)
    assert len(sample) == 6 and {r["kind"] for r in sample} == {"a", "b", "c", "rare"}
    assert sample == stratified(ROWS, 6, kind)  # fixed: the same rows on every push
    assert [r["id"] for r in sample] == sorted(r["id"] for r in sample)  # in the rows' order
    assert stratified(ROWS, 6, kind, seed=1) != sample


def test_more_strata_than_rows_asked_still_takes_one_of_each() -> None:
    sample = stratified(ROWS, 2, kind)
    assert {r["kind"] for r in sample} == {"a", "b", "c", "rare"}


def test_a_row_in_several_strata_covers_them_all() -> None:
    rows = [{"id": 0, "tags": ["x", "y"]}, {"id": 1, "tags": ["x"]}, {"id": 2, "tags": ["z"]}]
    sample = stratified(rows, 1, lambda r: r["tags"])
    assert {t for r in sample for t in r["tags"]} == {"x", "y", "z"}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository and a data directory with one sweep over them, the record empty."""
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / "checker.py").write_text("def check(row): return True\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rows.json").write_text(json.dumps(ROWS))
    monkeypatch.setattr(sweeps, "ROOT", tmp_path / "repo")
    monkeypatch.setattr(sweeps, "RECORD", tmp_path / "repo" / "tests" / "sweeps-passed.json")
    monkeypatch.setenv("SIEVAL_DATA_DIR", str(tmp_path / "data"))
    sweep = Sweep(sources=("checker.py",), data=("rows.json",), sample=6)
    monkeypatch.setattr(sweeps, "SWEEPS", {"rows": sweep})
    return tmp_path


def test_the_digest_moves_with_the_code_and_with_the_data(repo: Path) -> None:
    sweep = sweeps.SWEEPS["rows"]
    first = digest(sweep)
    (repo / "repo" / "checker.py").write_text("def check(row): return False\n")
    second = digest(sweep)
    (repo / "data" / "rows.json").write_text("[]")
    assert len({first, second, digest(sweep)}) == 3


def test_a_missing_input_is_an_error_not_an_empty_hash(repo: Path) -> None:
    with pytest.raises(FileNotFoundError, match="'gone.py' matches no file"):
        digest(Sweep(sources=("gone.py",), data=(), sample=1))


def test_auto_runs_the_full_sweep_until_it_passed_at_these_inputs(repo: Path) -> None:
    assert plan("rows", "auto").full  # never passed in full
    sweeps.record({"rows": {"inputs": digest(sweeps.SWEEPS["rows"]), "rows": 60}})
    run = plan("rows", "auto")
    assert not run.full and run.passed_at == run.inputs
    (repo / "repo" / "checker.py").write_text("changed\n")
    assert plan("rows", "auto").full
    assert plan("rows", "sample").full is False and plan("rows", "full").full


def test_the_summary_never_says_passed_for_rows_that_did_not_run(repo: Path) -> None:
    run = SweepRun("rows", full=False, inputs="new", passed_at="old", sample_size=6)
    run.select(ROWS, kind)
    line = run.line("passed")
    assert line.startswith("rows: sample of 6 of 60 rows (4 strata) passed")
    assert "the full sweep has NOT passed at these inputs new (last at old)" in line
    run.passed_at = "new"
    assert run.line("passed").endswith("the full sweep passed at these inputs, new")


SWEEP_TEST = """
import pytest

@pytest.mark.sweep("rows")
def test_rows(sweep):
    rows = sweep.select(list(range(60)), lambda r: {r % 3})
    assert {FAIL}
"""


@pytest.mark.parametrize(
    ("mode", "fail", "recorded"),
    [("auto", False, True), ("auto", True, False), ("sample", False, False)],
)
def test_only_a_full_pass_is_recorded(
    repo: Path, pytester: pytest.Pytester, mode: str, fail: bool, recorded: bool
) -> None:
    pytester.makeconftest('pytest_plugins = ("sweeps",)')
    pytester.makeini("[pytest]\nmarkers = sweep(name): a sweep\n")
    pytester.makepyfile(SWEEP_TEST.replace("{FAIL}", "False" if fail else "True"))
    result = pytester.runpytest_inprocess(f"--sweeps={mode}")
    result.assert_outcomes(passed=0 if fail else 1, failed=1 if fail else 0)
    record = sweeps.RECORD
    assert record.exists() == recorded
    inputs = digest(sweeps.SWEEPS["rows"])
    if recorded:
        assert json.loads(record.read_text()) == {"rows": {"inputs": inputs, "rows": 60}}
        result.stdout.fnmatch_lines([f"rows: full sweep (no full pass on record), 60 of 60 rows "
                                     f"passed at inputs {inputs}: recorded in *"])  # fmt: skip
    elif fail:
        result.stdout.fnmatch_lines(["rows: full sweep (no full pass on record), 60 of 60 rows "
                                     "failed at inputs *"])  # fmt: skip
    else:
        result.stdout.fnmatch_lines(["rows: sample of * of 60 rows (3 strata) passed; the full "
                                     "sweep has NOT passed at these inputs *"])  # fmt: skip
