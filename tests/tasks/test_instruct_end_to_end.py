"""The instruct tasks end to end on the embedded reference server: repeats as samples of their
own (resumable), the truncation warning, the records a reader audits."""

from __future__ import annotations

from pathlib import Path

from runs import options

from sieval.plan.config import parse_config
from sieval.runner import run_eval
from sieval.store.records import read_records


def config(task: str, n: int, options: str, dialect: str = "openai_chat"):
    return parse_config(
        f"models: [{{name: m, endpoint: embedded, dialect: {dialect}, concurrency_limit: 4}}]\n"
        f"tasks: [{{name: {task}, n: {n}, options: {{{options}}}}}]"
    )


def test_repeats_are_resumable_samples_with_pass_at_k(tmp_path: Path) -> None:
    cfg = config("aime2025", 2, "repeats: 2, temperature: 0.8, max_tokens: 32")  # n counts rows
    result = run_eval(cfg, options(out=tmp_path))
    (entry,) = result.report.results
    assert entry.samples.scored == 4
    assert entry.metrics["repeats"] == 2 and "pass@2" in entry.metrics
    assert 0.0 <= entry.metrics["maj@2"] <= entry.metrics["pass@2"]  # votes read from records
    interval = entry.intervals["accuracy"]
    assert interval.clusters == 2 and interval.n == 4  # the repeats cluster by row
    records = read_records(result.run_dir / "m" / "aime2025" / "records.jsonl").records
    assert sorted(records) == ["0#r0", "0#r1", "1#r0", "1#r1"]
    record = records["0#r1"]
    assert {"text", "extracted", "rule", "finish_reason"} <= set(record.channels)
    again = run_eval(cfg, options(resume=result.run_dir))
    assert again.report.results[0].metrics == entry.metrics
    assert again.report.timings.sessions[-1].samples_run == 0  # nothing re-run


def test_a_budget_too_small_warns(tmp_path: Path) -> None:
    cfg = config("bbh", 2, "max_tokens: 4", dialect="openai_completions")
    result = run_eval(cfg, options(out=tmp_path))
    (entry,) = result.report.results
    assert entry.metrics["truncated_rate"] == 1.0
    (warning,) = [w for w in result.warnings if "cut by the token budget" in w]
    assert warning.startswith("m/bbh: 100% of the answers")
    assert warning in result.report.warnings
