"""``sieval compare`` on runs that differ in known ways reports exactly those differences."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from runs import options
from typer.testing import CliRunner

from sieval.analysis.compare import compare_runs
from sieval.cli.main import app
from sieval.reference import ReferenceServer
from sieval.runner import arun_eval, parse_config
from sieval.store.records import decode_record
from sieval.tasks.registry import TASKS as TASK_REGISTRY

TASKS = """
tasks:
  - {name: arc_easy_kshot_ppl, n: 12, num_fewshot: 1}
  - {name: mmlu_kshot_clp, n: 10, num_fewshot: 1}
"""


async def run(out: Path, name: str, endpoint: str = "embedded", model: str = "") -> Path:
    entry = f"{{name: ref, endpoint: '{endpoint}'" + (f", model: {model}}}" if model else "}")
    config = parse_config(f"models: [{entry}]\n{TASKS}")
    result = await arun_eval(config, options(out=out, run_name=name, concurrency=1))
    return result.run_dir


@pytest.fixture(scope="module")
async def twins(tmp_path_factory: Any) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("compare")
    return await run(out, "a"), await run(out, "b")


def by_task(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task"]: t for t in result["tasks"]}


async def test_two_runs_of_one_deterministic_server_do_not_differ(
    twins: tuple[Path, Path],
) -> None:
    result = compare_runs(*twins)
    assert result["changes"] == []  # the same config, data and versions
    tasks = by_task(result)
    arc = tasks["arc_easy_kshot_ppl"]
    assert arc["paired"] == 12 and arc["flipped"] == 0 and arc["flips"] == []
    assert arc["loglik"]["n"] == 12 * 4 * 2 and arc["loglik"]["max"] == 0.0
    head = arc["metrics"]["acc_norm"]
    assert head["diff"] == 0.0 and head["ci"] == [0.0, 0.0]
    assert head["mcnemar"]["p_value"] == 1.0
    assert head["mcnemar"]["a_only"] == head["mcnemar"]["b_only"] == 0
    assert tasks["mmlu_kshot_clp"]["loglik"]["n"] == 10 * 4


def whole_records(unit: Path) -> list[dict[str, Any]]:
    """Each record of the unit as plain data, its column-wise channels and stats put back."""
    lines = (unit / "records.jsonl").read_bytes().splitlines()
    return [msgspec.to_builtins(decode_record(line)) for line in lines]


def edit_records(unit: Path, edit: Any) -> None:
    records = whole_records(unit)
    for record in records:
        edit(record)
    (unit / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


async def test_an_edited_run_shows_exactly_its_edits(
    twins: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = twins
    b = tmp_path / "b"
    shutil.copytree(a, b)
    flipped: list[str] = []

    def flip_three(record: dict[str, Any]) -> None:
        if len(flipped) < 3:  # acc_norm right <-> wrong on the first three samples
            record["metrics"]["acc_norm"] = 1.0 - record["metrics"]["acc_norm"]
            flipped.append(record["sample_id"])
        if record["sample_id"] == flipped[0]:
            record["channels"]["choices"][2]["logprob_sum"] += 0.25

    edit_records(b / "ref" / "arc_easy_kshot_ppl", flip_three)
    arc = by_task(compare_runs(a, b))["arc_easy_kshot_ppl"]
    assert sorted(f["id"] for f in arc["flips"]) == sorted(flipped) and arc["flipped"] == 3
    before = {
        r["sample_id"]: r["metrics"]["acc_norm"]
        for r in whole_records(a / "ref" / "arc_easy_kshot_ppl")
    }
    gained = sum(before[i] == 0.0 for i in flipped)
    lost = 3 - gained
    head = arc["metrics"]["acc_norm"]
    assert head["mcnemar"]["b_only"] == gained and head["mcnemar"]["a_only"] == lost
    assert head["diff"] == pytest.approx((gained - lost) / 12)
    assert arc["metrics"]["acc"]["diff"] == 0.0  # only acc_norm was edited
    assert arc["loglik"]["max"] == pytest.approx(0.25)
    assert arc["loglik"]["max_at"] == f"{flipped[0]} choices[2]"
    assert arc["loglik"]["p90"] == 0.0  # one value of 96 differs
    assert by_task(compare_runs(a, b))["mmlu_kshot_clp"]["flipped"] == 0


async def test_failed_samples_are_counted_never_paired(
    twins: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = twins
    async with ReferenceServer(port=0, faults="nan; times=8") as server:
        b = await run(tmp_path, "faulty", server.url, server.model_name)
    result = compare_runs(a, b)
    changed = {line.split(":")[0] for line in result["changes"]}
    assert "models.ref.endpoint" in changed  # what really differs, named
    assert not any(key.startswith("tasks.") for key in changed)
    tasks = by_task(result)
    failed = sum(t["failed_b"] for t in tasks.values())
    assert failed >= 1 and all(t["failed_a"] == 0 for t in tasks.values())
    assert sum(t["paired"] for t in tasks.values()) == 22 - failed
    assert all(t["flipped"] == 0 and t["loglik"]["max"] == 0.0 for t in tasks.values())


async def test_the_command_prints_the_difference_and_writes_json(
    twins: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = twins
    b = tmp_path / "b"
    shutil.copytree(a, b)
    edit_records(
        b / "ref" / "mmlu_kshot_clp",
        lambda r: r["channels"]["letter_logprobs"].update(
            A=r["channels"]["letter_logprobs"]["A"] - 1
        ),
    )
    out = CliRunner().invoke(app, ["compare", str(a), str(b)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "max 1 (" in out.output and "differs between the runs (flipped): 0" in out.output
    as_json = CliRunner().invoke(app, ["compare", str(a), str(b), "--format", "json"])
    mmlu = by_task(json.loads(as_json.output))["mmlu_kshot_clp"]
    assert mmlu["loglik"]["p50"] == 0.0 and mmlu["loglik"]["max"] == pytest.approx(1.0)


def test_runs_without_a_common_model_are_refused(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["compare", str(tmp_path / "x"), str(tmp_path / "y")])
    assert out.exit_code == 2 and f"{tmp_path / 'x'}' does not exist" in out.output


async def test_a_changed_acc_norm_definition_shows_as_exactly_its_flips(tmp_path: Path) -> None:
    """Run B divides by the characters of the continuation with its leading space (the old
    definition): the log-likelihoods are the same, and only the samples whose pick the divisor
    changes flip."""
    from sieval.scoring.choice import argmax
    from sieval.tasks.arc_easy_kshot_ppl import SPEC
    from sieval.tasks.spec import SpecTask

    class WithDelimiter(SpecTask):
        def score(self, sample: Any, responses: Any, config: Any, model: Any = None) -> Any:
            result = super().score(sample, responses, config)
            channels = result.channels["choices"]
            pick = argmax([c["logprob_sum"] / c["n_chars"] for c in channels])
            result.metrics["acc_norm"] = float(pick == sample.gold)
            return result

    config = parse_config(
        "models: [{name: ref, endpoint: embedded}]\n"
        "tasks: [{name: arc_easy_kshot_ppl, n: 150, num_fewshot: 0}]\n"
    )
    a = (await arun_eval(config, options(out=tmp_path, run_name="a"))).run_dir
    b = (
        await arun_eval(
            config,
            options(out=tmp_path, run_name="b"),
            tasks={**TASK_REGISTRY, "arc_easy_kshot_ppl": WithDelimiter(SPEC)},
        )
    ).run_dir
    arc = by_task(compare_runs(a, b))["arc_easy_kshot_ppl"]
    expected = set()
    for record in whole_records(a / "ref" / "arc_easy_kshot_ppl"):
        channels = record["channels"]["choices"]
        with_space = argmax([c["logprob_sum"] / c["n_chars"] for c in channels])
        if (with_space == record["gold"]) != (record["metrics"]["acc_norm"] == 1.0):
            expected.add(record["sample_id"])
    assert expected, "the two definitions pick alike on every sample: a test that cannot fail"
    assert {f["id"] for f in arc["flips"]} == expected and arc["flipped"] == len(expected)
    assert arc["loglik"]["max"] == 0.0  # the same server, the same log-likelihoods
    assert arc["metrics"]["acc"]["diff"] == 0.0 and arc["metrics"]["acc_uncond"]["diff"] == 0.0
    test = arc["metrics"]["acc_norm"]["mcnemar"]
    assert test["a_only"] + test["b_only"] == len(expected)
