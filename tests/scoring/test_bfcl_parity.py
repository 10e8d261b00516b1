"""sieval's BFCL checker equals bfcl-eval 2026.3.23's own: the same verdict (pass/fail and, on a
fail, the same ``error_type``) on the same outputs, every category (Java and JavaScript too: their
values read by BFCL's type converters, their Prompt answers by its tree-sitter grammars), both
columns: Gemma 3 270M's real replies through vLLM's hermes parser (``tests/fixtures/bfcl/``)
and outputs planted from each entry's possible answer (``bfcl_parity.py`` lists them).
bfcl-eval runs in its own venv (``scripts/bfcl-oracle.sh``), as the lm-eval oracle does; the
full sweep's counts are in docs/evidence/bfcl-checker-parity.md
(``python -m tests.scoring.bfcl_parity``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sieval.tasks._bfcl import CATEGORIES, _oracle_data

from . import bfcl_parity


@pytest.fixture(scope="module")
def oracle() -> tuple[str, Path]:
    data = _oracle_data()
    python = Path(
        os.environ.get("SIEVAL_CACHE", Path.home() / ".cache" / "sieval"),
        "bfcl-oracle-2026.3.23",
        "bin",
        "python",
    )
    if data is None or not python.exists():
        pytest.skip(
            "bfcl-eval 2026.3.23 is not installed: run scripts/bfcl-oracle.sh (scripts/test does)"
        )
    return str(python), data


def test_the_checker_agrees_with_bfcl_eval_on_real_and_planted_outputs(
    oracle: tuple[str, Path],
) -> None:
    python, data = oracle
    live = bfcl_parity.recorded(sorted(bfcl_parity.FIXTURES.glob("*.jsonl")))
    items = bfcl_parity.cases(data, limit=25) + live
    counts, differ = bfcl_parity.compare(python, data, items)
    assert differ == []
    # every category and both columns were compared, with passes and fails among them
    for category in CATEGORIES:
        for column in ("fc", "prompt"):
            verdicts = {
                v for (c, col, _, v), n in counts.items() if (c, col) == (category, column) and n
            }
            assert verdicts == {"pass", "fail"}, (category, column)
    assert {c for (c, _, s, _) in counts if s == "live"} == set(CATEGORIES)
    assert {col for (_, col, s, _) in counts if s == "live"} == {"fc", "prompt"}


def test_the_oracle_is_the_real_checker_it_fails_a_planted_wrong_value(
    oracle: tuple[str, Path],
) -> None:
    python, _ = oracle
    item = {"id": "simple_python_0", "category": "simple_python", "column": "prompt"}
    right = {**item, "result": "[calculate_triangle_area(base=10, height=5)]"}
    wrong = {**item, "result": "[calculate_triangle_area(base=10, height=6)]"}
    verdicts = bfcl_parity.oracle_verdicts(python, [right, wrong])
    assert [(v["valid"], v["error_type"]) for v in verdicts] == [
        (True, None),
        (False, "value_error:others"),
    ]


def test_format_sensitivity_prompts_and_verdicts_agree_with_bfcl_eval(
    oracle: tuple[str, Path],
) -> None:
    from . import bfcl_formats_parity

    python, data = oracle
    items = bfcl_formats_parity.cases(data, every=27)  # ~190 entries, every variant among them
    live = bfcl_parity.recorded(sorted((bfcl_parity.FIXTURES / "formats").glob("*.jsonl")))
    counts, differ = bfcl_formats_parity.compare(python, data, items + live)
    assert differ == []
    variants = {variant for variant, _, _, _ in counts}
    assert len(variants) == 26
    assert counts.total() > 1000
    # each return format has answers that pass and answers that fail
    for returned in ("python", "json", "verbose_xml", "concise_xml"):
        seen = {v for (k, _, v, _), n in counts.items() if f"ret_fmt={returned}&" in k and n}
        assert {"same", "pass", "fail"} <= seen, returned
    # Gemma 3 270M's real replies under every variant, each compared
    assert {k for (k, _, _, source) in counts if source == "live"} == variants


def test_the_prompt_and_the_tools_sent_are_bfcl_eval_s_own(oracle: tuple[str, Path]) -> None:
    # every Java and JavaScript entry (their parameters as strings, their types described) and
    # the first 10 of every other category: the Prompt column's system prompt and the FC tools
    python, data = oracle
    langs = ("simple_java", "simple_javascript")
    others = tuple(c for c in CATEGORIES if c not in langs)
    items = bfcl_parity.wire_items(data, langs) + bfcl_parity.wire_items(data, others, limit=10)
    counts, differ = bfcl_parity.compare_wire(python, data, items)
    assert differ == []
    assert counts[("simple_java", "tools", "same")] == 100
    assert counts[("simple_javascript", "system", "same")] == 50
    assert {c for c, _, _ in counts} == set(CATEGORIES)
