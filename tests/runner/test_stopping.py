"""``--max-failures``: parsed in one place, and ``auto`` (the command line's default) stops a run
whose first samples all fail for one reason, before it runs to its end."""

from __future__ import annotations

from pathlib import Path

import pytest
from runs import options

from sieval.errors import ConfigError
from sieval.plan.config import parse_config
from sieval.runner import arun_eval, read_records
from sieval.runner.stopping import AUTO, FIRST, Stopper, parse_max_failures

from .fakes import FakeTask, fake_transport, write_data


@pytest.mark.parametrize(
    ("text", "value"), [("auto", AUTO), ("AUTO", AUTO), ("off", None), ("3", 3.0), ("0.25", 0.25)]
)
def test_parsed_values(text: str, value: object) -> None:
    assert parse_max_failures(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "-inf", "2.5", "many", ""])
def test_values_that_mean_nothing_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--max-failures") as info:
        parse_max_failures(text)
    assert "auto" in info.value.message and "off" in info.value.message


def failure(kind: str = "ContractViolation", path: str = "choices[0]") -> dict[str, str]:
    return {"class": kind, "path": path, "message": f"{kind} at {path}"}


def test_auto_stops_once_the_first_samples_all_fail_for_one_reason() -> None:
    stopper = Stopper(AUTO)
    said = [stopper.record("m/t", failure()) for _ in range(FIRST)]
    assert said[:-1] == [None] * (FIRST - 1)
    assert said[-1] is not None
    assert f"the first {FIRST} samples of m/t all failed with ContractViolation" in said[-1]
    assert "ContractViolation at choices[0]" in said[-1] and "--max-failures off" in said[-1]
    assert stopper.record("m/t", failure()) is None  # said once


@pytest.mark.parametrize(
    "first",
    [
        [failure()] * (FIRST - 1) + [None],  # one sample scored
        [failure()] * (FIRST - 1) + [failure(path="usage")],  # another reason
        [failure()] * (FIRST - 1) + [failure("TransportError")],
    ],
)
def test_auto_runs_on_when_the_first_samples_do_not_all_fail_alike(first: list) -> None:
    stopper = Stopper(AUTO)
    assert [stopper.record("m/t", error) for error in first] == [None] * FIRST
    assert all(stopper.record("m/t", failure()) is None for _ in range(50))  # judged once


def test_auto_judges_each_task_on_its_own_first_samples() -> None:
    stopper = Stopper(AUTO)
    for _ in range(FIRST):
        assert stopper.record("m/good", None) is None
    said = [stopper.record("m/bad", failure()) for _ in range(FIRST)]
    assert said[-1] is not None and "m/bad" in said[-1]


def test_a_count_and_a_fraction_keep_their_meaning() -> None:
    count = Stopper(3.0)
    assert [count.record("u", failure()) for _ in range(4)][-1] == (
        "stopped early (--max-failures): more than 3 samples failed"
    )
    share = Stopper(0.5)
    said = [share.record("u", failure() if i % 3 == 0 else None) for i in range(20)]
    assert said == [None] * 20  # 7 of 20 failed
    said = [share.record("u", failure()) for _ in range(7)]
    assert said[:-1] == [None] * 6  # 13 of 26 is not over half
    assert said[-1] is not None and "14 of 27 samples failed (over 50%)" in said[-1]
    assert Stopper(None).record("u", failure()) is None


async def test_a_run_where_every_sample_fails_alike_stops_early(tmp_path: Path) -> None:
    """20 of 20 samples would fail with ContractViolation: the run stops after the first ten
    (the samples in flight are not waited for), says why, and is resumable."""
    words = [f"bad{i:02d}" for i in range(20)]
    write_data(tmp_path / "data", words)
    config = parse_config(
        "models: [{name: m, endpoint: 'http://fake.invalid', model: fake-model, "
        "concurrency_limit: 2}]\ntasks: [{name: fake_qa}]"
    )
    tasks = {"fake_qa": FakeTask()}

    async def run(limit: object, name: str) -> object:
        return await arun_eval(
            config,
            options(
                out=tmp_path / "out",
                run_name=name,
                data_dir=tmp_path / "data",
                preflight=False,
                max_failures=limit,  # type: ignore[arg-type]
            ),
            tasks=tasks,
            transport_factory=lambda cfg: fake_transport(),
        )

    stopped = await run(AUTO, "auto")
    assert stopped.stopped is not None and stopped.exit_code == 1  # type: ignore[attr-defined]
    assert "all failed with ContractViolation" in stopped.stopped  # type: ignore[attr-defined]
    records = read_records(tmp_path / "out" / "auto" / "m" / "fake_qa" / "records.jsonl").records
    assert FIRST <= len(records) < len(words)
    assert {r.status for r in records.values()} == {"failed"}
    assert stopped.report.stopped == stopped.stopped  # type: ignore[attr-defined]
    ran_on = await run(None, "off")
    assert ran_on.stopped is None  # type: ignore[attr-defined]
    assert ran_on.report.results[0].samples.failed == len(words)  # type: ignore[attr-defined]
