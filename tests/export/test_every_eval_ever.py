"""The Every Eval Ever export, checked by evaleval's own validator (schema and semantic checks:
the datastore path, the companion samples file, the identity) and against the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sieval.export import export_run

from .conftest import needs, result_of


@pytest.fixture(scope="module")
def exported(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    dest = tmp_path_factory.mktemp("eee")
    return dest, export_run(run_dir, "eee", dest)


def test_evalevals_validator_passes_both_files(exported: tuple[Path, list[Path]]) -> None:
    needs("every_eval_ever", "every-eval-ever")
    from every_eval_ever.validator import validate_aggregate, validate_instance_file

    dest, written = exported
    files = frozenset(p.relative_to(dest).as_posix() for p in written)

    def read(repo_path: str) -> str:
        return (dest / repo_path).read_text()

    aggregates = [p for p in written if p.suffix == ".json"]
    assert len(aggregates) == 2  # one per model
    for path in written:
        check = validate_aggregate if path.suffix == ".json" else validate_instance_file
        found = check(
            path,
            repo_path=path.relative_to(dest).as_posix(),
            available_files=files,
            read_repo_file=read,
            run_semantic_checks=True,
        )
        assert found.valid, found.errors
        assert found.errors == []
        # the one thing sieval cannot say: who develops a model with a flat id
        assert all("developer" in w["msg"] for w in found.warnings), found.warnings


def test_the_validator_refuses_a_broken_record(exported: tuple[Path, list[Path]]) -> None:
    needs("every_eval_ever", "every-eval-ever")
    from every_eval_ever.validator import validate_aggregate

    _, written = exported
    aggregate = next(p for p in written if p.suffix == ".json")
    data = json.loads(aggregate.read_text())
    data["evaluation_results"][0]["metric_config"].pop("lower_is_better")
    broken = aggregate.with_name(aggregate.name)  # same path: the validator reads the file
    original = aggregate.read_text()
    try:
        broken.write_text(json.dumps(data))
        assert not validate_aggregate(broken).valid
    finally:
        aggregate.write_text(original)


def test_the_records_carry_the_reports_figures(
    exported: tuple[Path, list[Path]], report: dict[str, Any]
) -> None:
    _, written = exported
    for path in (p for p in written if p.suffix == ".json"):
        data = json.loads(path.read_text())
        label = data["model_info"]["name"]
        rows = [
            json.loads(line)
            for line in path.with_name(f"{path.stem}_samples.jsonl").read_text().splitlines()
        ]
        assert data["detailed_evaluation_results"]["total_rows"] == len(rows)
        for entry in data["evaluation_results"]:
            task, metric = entry["evaluation_result_id"].split("/")
            result = result_of(report, label, task)
            details = entry["score_details"]
            assert details["score"] == result["metrics"][metric]
            spread = result["intervals"].get(metric)
            if spread is None:  # a figure the report gives no interval (censored_rate)
                assert "uncertainty" not in details
            else:
                assert details["uncertainty"]["standard_error"]["value"] == spread["se"]
                interval = details["uncertainty"]["confidence_interval"]
                assert [interval["lower"], interval["upper"]] == spread["ci"]
            assert details["details"]["num_fewshot"] == ("0" if task == "arc_easy" else "1")
            scored = [r for r in rows if r["evaluation_result_id"] == entry["evaluation_result_id"]]
            assert len(scored) == result["samples"]["scored"]  # failed samples are not instances
            mean = sum(r["evaluation"]["score"] for r in scored) / len(scored)
            assert mean == pytest.approx(result["metrics"][metric])
