"""``sieval dialects``: the matrix as a table and as data."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from sieval.cli.main import app

runner = CliRunner()


def test_json_lists_seven_ids_with_derived_capabilities() -> None:
    result = runner.invoke(app, ["dialects", "--json"])
    assert result.exit_code == 0
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert len(rows) == 7
    assert rows["openai_completions"]["status"] == "active"
    assert rows["openai_completions"]["capabilities"]["input_scoring"] == "supported"
    assert rows["openai_completions"]["capabilities"]["token_ids"] == "no"
    assert rows["vllm_native"]["capabilities"]["token_ids"] == "supported"
    assert rows["anthropic_messages"]["status"] == "not yet implemented"
    assert rows["anthropic_messages"]["capabilities"] == {}


def test_table_shows_status_and_capabilities() -> None:
    result = runner.invoke(app, ["dialects"])
    assert result.exit_code == 0
    for word in ("openai_completions", "vllm_native", "google_genai", "input_scoring", "active"):
        assert word in result.stdout
    assert "not yet implemented" in result.stdout
