"""The lm-eval export, read by lm-eval 0.4.13's own code and checked key by key against the
files a real lm-eval run wrote (``tests/fixtures/lm_eval/0.4.13/files.json``, recorded by
``scripts/record_lm_eval_files.py`` against the live vLLM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sieval.export import export_run

from .conftest import needs, records, result_of

RECORDED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "lm_eval" / "0.4.13" / "files.json").read_text()
)

NOT_SIEVALS = {
    "pretty_env_info", "transformers_version", "lm_eval_version", "upper_git_hash", "git_hash",
    "tokenizer_pad_token", "tokenizer_eos_token", "tokenizer_bos_token", "eot_token_id",
    "max_length",
}  # fmt: skip
"""What lm-eval records of its own process and a local tokenizer: an HTTP harness has none of
it to say (sieval's version and run identity are under its own ``sieval`` key)."""

NOT_IN_CONFIGS = {"dataset_kwargs", "doc_to_text", "doc_to_target", "doc_to_choice"}
"""lm-eval task YAML's Jinja fields: sieval's tasks are Python specs, named by ``description``
(the protocol) instead."""


@pytest.fixture(scope="module")
def exported(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    dest = tmp_path_factory.mktemp("lm_eval")
    written = export_run(run_dir, "lm-eval", dest)
    by_model: dict[str, list[Path]] = {}
    for path in written:
        by_model.setdefault(path.parent.name, []).append(path)
    return by_model


def results_of(files: list[Path]) -> dict[str, Any]:
    path = next(p for p in files if p.name.startswith("results_"))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def samples_of(files: list[Path], task: str) -> list[dict[str, Any]]:
    path = next(p for p in files if p.name.startswith(f"samples_{task}_"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_files_are_named_and_found_as_lm_eval_names_them(
    exported: dict[str, list[Path]],
) -> None:
    needs("lm_eval", "lm-eval")
    from lm_eval.utils import (
        get_file_task_name,
        get_latest_filename,
        get_results_filenames,
        get_sample_results_filenames,
    )

    for model, files in exported.items():
        names = [f"{model}/{p.name}" for p in files]
        assert len(get_results_filenames(names)) == 1
        samples = get_sample_results_filenames(names)
        tasks = {get_file_task_name(Path(n).name) for n in samples}
        assert tasks == {"arc_easy", "gsm8k_kshot_base_gen"}
        assert get_latest_filename(names) in names
    recorded = RECORDED["file_names"]
    assert recorded[0] == "results" and all(n.startswith("samples_") for n in recorded[1:])


def test_the_results_have_a_real_runs_keys(exported: dict[str, list[Path]]) -> None:
    results = results_of(exported["ref"])
    assert set(RECORDED["results_keys"]) - NOT_SIEVALS <= set(results)
    for key, kind in RECORDED["types"].items():
        if key in results and kind != "NoneType" and results[key] is not None:
            assert type(results[key]).__name__ == kind, key
    kinds = {"arc_easy": "multiple_choice", "gsm8k_kshot_base_gen": "generate_until"}
    # sieval's own figures beside lm-eval's (a generation's censored rate), named as lm-eval
    # names any metric, unfiltered; with no interval its stderr is lm-eval's "N/A"
    censored = {"censored_rate,none", "censored_rate_stderr,none"}
    extra: dict[str, set[str]] = {"arc_easy": set(), "gsm8k_kshot_base_gen": censored}
    for task, kind in kinds.items():
        real = {k.replace("sieval_arc_mini", task) for k in RECORDED["results"][kind]}
        assert set(results["results"][task]) == real | extra[task], task
        assert set(RECORDED["configs"][kind]) - NOT_IN_CONFIGS <= set(results["configs"][task])
    assert results["results"]["gsm8k_kshot_base_gen"]["censored_rate_stderr,none"] == "N/A"
    assert sorted(results["config"]) == RECORDED["config"]
    shape = {k: type(v).__name__ for k, v in results["n-samples"]["arc_easy"].items()}
    assert shape == RECORDED["n-samples"]


def shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def test_the_sample_lines_have_a_real_runs_shape(exported: dict[str, list[Path]]) -> None:
    files = exported["ref"]
    choice = samples_of(files, "arc_easy")
    recorded = RECORDED["samples"]["multiple_choice"]
    line = {k: v for k, v in choice[0].items() if k != "doc"}
    assert shape(line) == recorded["line"]
    assert sorted({c["filter"] for c in choice}) == recorded["filters"]
    generated = samples_of(files, "gsm8k_kshot_base_gen")
    recorded = RECORDED["samples"]["generate_until"]
    line = {k: v for k, v in generated[0].items() if k != "doc"}
    # the line's metric keys are its metrics; sieval's censored rate rides every filter's line
    assert set(shape(line)) == set(recorded["line"]) | {"censored_rate"}
    assert line["metrics"] == ["exact_match", "censored_rate"]
    assert shape(line["resps"]) == recorded["line"]["resps"]
    assert shape(line["filtered_resps"]) == recorded["line"]["filtered_resps"]
    assert sorted({g["filter"] for g in generated}) == recorded["filters"]


def test_lm_evals_schema_and_table_read_the_figures(
    exported: dict[str, list[Path]], report: dict[str, Any]
) -> None:
    needs("lm_eval", "lm-eval")
    from lm_eval.result_schema import EvalResults, SampleResult
    from lm_eval.utils import make_table
    from pydantic import TypeAdapter

    for files in exported.values():
        results = results_of(files)
        # lm-eval's own TypedDict, strictly; its ``configs`` type (str | bool | None values) is
        # narrower than what lm-eval itself writes there (ints, lists, dicts), so it is left out,
        # and so is a stderr of "N/A", which lm-eval writes for a figure without one
        # (evaluator_utils.py) and its TypedDict does not admit
        checked = {k: v for k, v in results.items() if k != "configs"}
        checked["results"] = {
            task: {k: v for k, v in figures.items() if v != "N/A"}
            for task, figures in results["results"].items()
        }
        TypeAdapter(EvalResults).validate_python(checked, strict=True)
        label = results["sieval"]["label"]
        for task in ("arc_easy", "gsm8k_kshot_base_gen"):
            for line in samples_of(files, task):
                TypeAdapter(SampleResult).validate_python(line)
            result = result_of(report, label, task)
            if task == "arc_easy":
                figures = {"acc,none": "acc", "acc_norm,none": "acc_norm"}
            else:
                figures = {
                    "exact_match,strict-match": "exact_match",
                    "exact_match,flexible-extract": "flexible_exact_match",
                }
            for key, metric in figures.items():
                assert results["results"][task][key] == result["metrics"][metric]
                stderr = key.replace(",", "_stderr,", 1)
                assert results["results"][task][stderr] == result["intervals"][metric]["se"]
            counts = results["n-samples"][task]
            assert counts == {
                "original": result["samples"]["total"],
                "effective": result["samples"]["scored"],
            }
        table = make_table(results)
        assert "|arc_easy" in table and "|flexible-extract|" in table
        assert results["n-shot"] == {"arc_easy": 0, "gsm8k_kshot_base_gen": 1}
        acc_norm = result_of(report, label, "arc_easy")["metrics"]["acc_norm"]
        row = next(r for r in table.splitlines() if "|acc_norm" in r)
        cells = [c.strip() for c in row.split("|")]
        assert float(cells[7]) == pytest.approx(acc_norm, abs=5e-5)  # Value, to 4 places


def test_a_failed_sample_is_no_lm_eval_sample(
    exported: dict[str, list[Path]], run_dir: Path, report: dict[str, Any]
) -> None:
    failed = [r for r in records(run_dir, "flaky", "arc_easy") if r["status"] != "ok"]
    assert failed, "the flaky server failed no sample: the run fixture changed"
    lines = samples_of(exported["ref"], "arc_easy")
    assert len(lines) == result_of(report, "ref", "arc_easy")["samples"]["scored"]
    flaky = results_of(exported["flaky"])
    assert flaky["sieval"]["failed"]["arc_easy"] == len(failed)


def test_choice_arguments_are_context_and_continuation(
    exported: dict[str, list[Path]], run_dir: Path
) -> None:
    lines = samples_of(exported["ref"], "arc_easy")
    first = next(r for r in records(run_dir, "ref", "arc_easy") if r["sample_id"] == "test/0")
    args = lines[0]["arguments"]
    assert len(args) == len(first["sample"]["choices"])
    for i, choice in enumerate(first["sample"]["choices"]):
        assert args[f"gen_args_{i}"]["arg_1"] == f" {choice}"
        assert args[f"gen_args_{i}"]["arg_0"] == first["sample"]["query"]
    sums = [c["logprob_sum"] for c in first["channels"]["choices"]]
    assert [float(r[0][0]) for r in lines[0]["resps"]] == sums
