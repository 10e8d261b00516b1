"""``sieval dialects``: the matrix as a table and as data, and one leaf across the tables."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sieval.cli.main import app

runner = CliRunner()
SEVEN = {
    "openai_completions",
    "openai_chat",
    "openai_responses",
    "anthropic_messages",
    "google_genai",
    "sglang_native",
    "vllm_native",
}


def test_json_lists_seven_ids_with_derived_capabilities() -> None:
    result = runner.invoke(app, ["dialects", "--json"])
    assert result.exit_code == 0
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert set(rows) >= SEVEN  # a dialect added later is listed too, without an edit here
    assert rows["openai_completions"]["status"] == "active"
    assert rows["openai_completions"]["capabilities"]["input_scoring"] == "supported"
    assert rows["openai_completions"]["capabilities"]["token_ids"] == "no"
    assert rows["openai_completions"]["auth"] == "Authorization: Bearer <key>"
    assert rows["vllm_native"]["capabilities"]["token_ids"] == "supported"
    assert rows["anthropic_messages"]["capabilities"]["input_scoring"] == "no"
    assert rows["anthropic_messages"]["auth"] == "x-api-key: <key> + anthropic-version: 2023-06-01"


def test_table_shows_the_dialects_and_capabilities() -> None:
    result = runner.invoke(app, ["dialects"])
    assert result.exit_code == 0
    for word in ("openai_completions", "vllm_native", "google_genai", "input_scoring"):
        assert word in result.stdout


@pytest.mark.parametrize("width", [80, 160])
def test_table_fits_and_names_the_dialects(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """At 80 and 160 columns: every id and every route whole on its line (never broken inside a
    word), and the matrix headed by the dialects' names, not by column numbers (issue 41)."""
    from sieval.cli.dialects import short_name
    from sieval.dialects.registry import rows

    monkeypatch.setenv("COLUMNS", str(width))
    result = runner.invoke(app, ["dialects"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    for row in rows():
        assert any(line.split()[:1] == [row.id] for line in lines), row.id
        assert any(row.route in line for line in lines), row.route
    head = next(i for i, line in enumerate(lines) if line.split()[:1] == ["capability"])
    names = lines[head].split()[1:]
    above = lines[head - 1]
    assert names == [short_name(r.id).split("\n")[-1] for r in rows()]
    assert above.split() == ["openai"] * 3  # openai over chat, compl and resp
    (scoring,) = [line.split() for line in lines if line.split()[:1] == ["input_scoring"]]
    marks = dict(zip(names, scoring[1:], strict=True))
    assert marks["compl"] == marks["sglang"] == marks["vllm"] == "yes"
    assert marks["chat"] == marks["anthropic"] == "-"


def test_leaf_prints_each_dialects_decision_from_its_table() -> None:
    result = runner.invoke(app, ["dialects", "--leaf", "sampling.top_k", "--json"])
    assert result.exit_code == 0
    by_id = {d["dialect"]: d for d in json.loads(result.stdout)}
    assert by_id["openai_completions"]["outcome"] == "refused"
    assert "vllm_native" in by_id["openai_completions"]["detail"]
    assert by_id["vllm_native"] == {
        "dialect": "vllm_native",
        "outcome": "consumed",
        "detail": "written to top_k",
    }
    assert by_id["openai_chat"]["outcome"] == "refused"
    table = runner.invoke(app, ["dialects", "--leaf", "scoring.input_logprobs"])
    assert table.exit_code == 0 and "prompt_logprobs" in table.stdout


def test_leaf_rejects_what_is_not_a_leaf_with_a_suggestion() -> None:
    result = runner.invoke(app, ["dialects", "--leaf", "sampling.sead"])
    assert result.exit_code == 2
    assert "Did you mean 'sampling.seed'" in result.stderr
