"""Runs written before records v4 (``tests/fixtures/runs/v3-60dedeb``: records v3, report v1,
made by sieval at 60dedeb) still read: the report, the samples, the view with exact bodies."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sieval.cli.main import app
from sieval.runner.view import build_view

OLD = Path(__file__).parents[1] / "fixtures" / "runs" / "v3-60dedeb"


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
