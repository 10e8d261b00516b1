"""sieval's BFCL multi-turn check equals bfcl-eval 2026.3.23's own ``multi_turn_checker``: the
same verdict (pass/fail and, on a fail, the same ``error_type``) on the same outputs, in all
four categories and both columns: real runs (``tests/fixtures/bfcl/multi_turn/*.jsonl``) and
outputs planted from each entry's ground truth (``bfcl_multi_turn_parity.py`` lists them).
bfcl-eval runs in its own venv (``scripts/bfcl-oracle.sh``); the full sweep's counts are in
docs/evidence/bfcl-checker-parity.md (``python -m tests.scoring.bfcl_multi_turn_parity``). And
the executor reaches bfcl-eval's environments as bfcl-eval runs them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sieval.errors import ConfigError
from sieval.scoring.bfcl_env import Call, Environments, ExecutorError, oracle_python
from sieval.scoring.bfcl_multi_turn import ground_truth_call, prompt_calls
from sieval.tasks._bfcl import _oracle_data
from sieval.tasks.bfcl_multi_turn import CATEGORIES

from . import bfcl_multi_turn_parity as parity


@pytest.fixture(scope="module")
def oracle() -> tuple[str, Path]:
    data = _oracle_data()
    try:
        python = oracle_python()
    except ConfigError:
        python = None
    if data is None or python is None:
        pytest.skip(
            "bfcl-eval 2026.3.23 is not installed: run scripts/bfcl-oracle.sh (scripts/test does)"
        )
    return str(python), data


def test_the_check_agrees_with_bfcl_eval_on_real_and_planted_outputs(
    oracle: tuple[str, Path],
) -> None:
    python, data = oracle
    live = parity.recorded(sorted(parity.FIXTURES.glob("*.jsonl")))
    items = parity.cases(data, limit=2) + parity.written() + live
    counts, differ = parity.compare(python, data, items)
    assert differ == []
    for category in CATEGORIES:
        for column in ("fc", "prompt"):
            verdicts = {
                v for (c, col, _, v), n in counts.items() if (c, col) == (category, column) and n
            }
            assert verdicts == {"pass", "fail"}, (category, column)
    assert {col for (_, col, s, _) in counts if s == "embedded"} == {"fc", "prompt"}


def test_the_oracle_is_the_real_checker_it_fails_a_planted_wrong_move(
    oracle: tuple[str, Path],
) -> None:
    python, _ = oracle
    item = {"id": "multi_turn_base_0", "category": "multi_turn_base", "column": "prompt"}
    right = [
        ["[cd(folder='document'), mkdir(dir_name='temp'), mv(source='final_report.pdf', "
         "destination='temp')]"],
        ["[cd(folder='temp'), grep(file_name='final_report.pdf', pattern='budget analysis')]"],
        ["[sort(file_name='final_report.pdf')]"],
        ["[cd(folder='..'), mv(source='previous_report.pdf', destination='temp'), "
         "cd(folder='temp'), diff(file_name1='final_report.pdf', "
         "file_name2='previous_report.pdf')]"],
    ]  # fmt: skip
    wrong = [["[cd(folder='document'), mkdir(dir_name='temp')]"], *right[1:]]
    verdicts = parity.oracle_verdicts(
        python, [{**item, "result": right}, {**item, "result": wrong}]
    )
    assert [(v["valid"], v["error_type"]) for v in verdicts] == [
        (True, None),
        (False, "multi_turn:instance_state_mismatch"),
    ]


def test_the_executor_runs_bfcl_eval_s_environments_by_name_and_arguments(
    oracle: tuple[str, Path],
) -> None:
    python, _ = oracle
    envs = Environments(Path(python))
    config = {"GorillaFileSystem": {"root": {"home": {"type": "directory", "contents": {}}}}}
    try:
        session = envs.open(["GorillaFileSystem", "MathAPI"], config, False)
        assert envs.call(session, Call("mkdir", {"dir_name": "a"})) == "None"
        assert envs.call(session, Call("ls", {})) == '{"current_directory_content": ["a"]}'
        # a positional ground-truth argument, as the ground truth writes some
        assert envs.call(session, ground_truth_call("cd('a')")) == (
            '{"current_working_directory": "a"}'
        )
        assert envs.call(session, Call("nope", {"x": 1})) == (
            "Error during execution: name 'nope' is not defined"
        )
        assert envs.call(session, Call("run", {})) == (
            "Error during execution: Function call run is not allowed."
        )
        assert envs.call(session, Call("mkdir", {"name": "b"})).startswith(
            "Error during execution: GorillaFileSystem.mkdir() got an unexpected keyword"
        )
        assert envs.call(session, Call("add", {"a": 2, "b": 3})) == '{"result": 5}'  # MathAPI
        (nested,), _ = prompt_calls("[cd(folder=pwd(a={'b': 1}))]")
        assert isinstance(nested.kwargs["folder"], Call)  # run first, as bfcl-eval runs it
        other = envs.open(["GorillaFileSystem"], config, False)
        assert envs.compare(session, other)["valid"] is False
        assert envs.compare(other, other) == {"valid": True, "class": None, "differences": {}}
        envs.close(other)
        envs.close(session)
    finally:
        envs.stop()


def test_an_executor_without_bfcl_eval_says_so_and_a_missing_python_names_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    envs = Environments(Path(sys.executable))  # sieval's own python: no bfcl_eval
    try:
        with pytest.raises(ExecutorError, match="No module named 'bfcl_eval'"):
            envs.open(["GorillaFileSystem"], {}, False)
    finally:
        envs.stop()
    monkeypatch.setenv("SIEVAL_BFCL_PYTHON", str(tmp_path / "absent" / "python"))
    with pytest.raises(ConfigError, match=r"run scripts/bfcl-oracle\.sh"):
        oracle_python()
