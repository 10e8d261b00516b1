"""The README's main job: the quickstart config on the embedded reference, end to end."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sieval.cli.main import app

QUICKSTART = Path(__file__).parents[2] / "examples" / "quickstart.yaml"


def test_quickstart_scores_every_sample_of_the_four_tasks(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", str(QUICKSTART), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    rows = {r["task"]: r for r in report["results"]}
    assert set(rows) == {
        "arc_easy_kshot_ppl",
        "hellaswag_kshot_ppl",
        "mmlu_kshot_clp",
        "gsm8k_kshot_base_gen",
    }
    for row in rows.values():
        assert row["samples"]["failed"] == 0 and row["samples"]["scored"] == row["samples"]["total"]
        assert row["headline"] in row["metrics"]
        assert row["provenance"]["reported_models"] == ["sieval-reference"]
    assert "sieval-reference" in str(rows["mmlu_kshot_clp"]["provenance"]["server_version"])
