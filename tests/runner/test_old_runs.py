"""Runs written by older sieval still read: the report, the samples, the view with exact bodies.
``tests/fixtures/runs/v3-60dedeb``: records v3, report v1, made by sieval at 60dedeb;
``tests/fixtures/runs/v4-cea26a8``: records v4 (``requests_common``, stats and finish lists in
each request, channels as lists of dicts), made at cea26a8."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.results.view import build_view
from sieval.store.records import Shared, expand_requests, read_records

OLD = Path(__file__).parents[1] / "fixtures" / "runs" / "v3-60dedeb"
V4 = Path(__file__).parents[1] / "fixtures" / "runs" / "v4-cea26a8"


def test_the_view_expands_v3_bodies() -> None:
    view = build_view(OLD)
    arc = [s for s in view["samples"] if s["task"] == "arc_easy_kshot_ppl"]
    assert len(arc) == 3 and len(view["samples"]) == 8
    for sample in arc:
        texts = [c["text"] for c in sample["choices"]]
        bodies = {r["key"]: r["body"] for r in sample["requests"]}
        for i, text in enumerate(texts):
            assert bodies[f"choice:{i}"]["prompt"].endswith(f"\nAnswer: {text}")
            assert bodies[f"uncond:{i}"]["prompt"] == f"Answer: {text}"
            assert bodies[f"choice:{i}"]["echo"] is True
    assert all(s["se"] is None for s in view["summary"])  # report v1 had no intervals


def test_report_and_samples_read_an_old_run() -> None:
    runner = CliRunner()
    report = runner.invoke(app, ["report", str(OLD)], env={"COLUMNS": "200"})
    assert report.exit_code == 0 and "arc_easy_kshot_ppl" in report.output
    samples = runner.invoke(app, ["samples", str(OLD), "--task", "gsm8k_kshot_base_gen"])
    assert samples.exit_code == 0 and samples.output.count("generation:") == 2


def test_v4_records_read_as_written() -> None:
    """Each v4 line decodes to what it says: its own stats and finish lists, the shared ledger
    and status, the channels as the lists they were (read from the JSON, not the code)."""
    for unit in (V4 / "reference").iterdir():
        shared = Shared.load(unit / "shared.jsonl")
        seen = read_records(unit / "records.jsonl").records
        for line in (unit / "records.jsonl").read_text().splitlines():
            raw = json.loads(line)
            record = seen[raw["sample_id"]]
            assert record.channels == raw["channels"] and record.metrics == raw["metrics"]
            common = raw.get("requests_common", {})
            whole = expand_requests(record.requests, shared)
            for key, request in raw["requests"].items():
                got = whole[key]
                assert got.usage == request["usage"] and got.timings == request["timings"]
                assert got.finish == request["finish"]
                assert got.status == request.get("status", common.get("status"))
                ledger_id = request.get("ledger", common.get("ledger"))
                assert got.ledger == shared.ledgers[ledger_id]


def test_the_view_report_and_samples_read_a_v4_run() -> None:
    view = build_view(V4)
    arc = [s for s in view["samples"] if s["task"] == "arc_easy_kshot_ppl"]
    assert len(arc) == 12 and len(view["samples"]) == 14
    raw = {
        r["sample_id"]: r
        for r in map(json.loads, (V4 / "reference/arc_easy_kshot_ppl/records.jsonl").open())
    }
    for sample in arc:
        record = raw[sample["id"]]
        texts = [c["text"] for c in sample["choices"]]
        assert texts == record["sample"]["choices"]
        sums = [c["logprob_sum"] for c in record["channels"]["choices"]]
        assert [c["score"] for c in sample["choices"]] == [
            s / len(t) for s, t in zip(sums, texts, strict=True)
        ]
        for r in sample["requests"]:
            assert r["usage"] == record["requests"][r["key"]]["usage"]
            assert r["finish"] == record["requests"][r["key"]]["finish"]
        bodies = {r["key"]: r["body"] for r in sample["requests"]}
        for i, text in enumerate(texts):
            assert bodies[f"choice:{i}"]["prompt"].endswith(f"\nAnswer: {text}")
            assert bodies[f"uncond:{i}"]["prompt"] == f"Answer: {text}"
    latency = {t["task"]: t["latency_s"] for t in view["requests"]}
    assert len(latency["arc_easy_kshot_ppl"]) == 96 and len(latency["gsm8k_kshot_base_gen"]) == 2
    runner = CliRunner()
    report = runner.invoke(app, ["report", str(V4)], env={"COLUMNS": "200"})
    assert report.exit_code == 0
    assert (
        "92 were cut at the token limit (max_tokens), 4 ended on their own (a stop string or "
        "the end of text); 4 had no text" in report.output
    )
    samples = runner.invoke(app, ["samples", str(V4), "--task", "gsm8k_kshot_base_gen"])
    assert samples.exit_code == 0 and samples.output.count("generation:") == 2
