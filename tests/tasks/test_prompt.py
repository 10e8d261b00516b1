"""lm-eval's rules for a task's text, written once (``tasks/prompt.py``): fields, templates and
their conversions, shots, descriptions, the variable-context form."""

from __future__ import annotations

import pytest

from sieval.errors import ConfigError
from sieval.tasks.prompt import Prompt, Shot, render, shown

ROW = {"question": "Why?", "answerKey": "B", "label": 1, "digits": "3",
       "choices": {"text": ["a", "b", "c"], "label": ["A", "B", "C"]}}  # fmt: skip


def test_a_field_name_is_the_value_and_a_template_is_rendered() -> None:
    p = Prompt(text="question", target="label", choices="{{choices.text}}")
    assert p.text_of(ROW) == "Why?" and p.target_of(ROW) == 1
    assert p.choices_of(ROW) == ["a", "b", "c"]
    # a rendered text or target of digits, with choices, is the index it spells
    assert Prompt(text="{{digits}}", target="{{choices.label.index(answerKey)}}",
                  choices="{{choices.text}}").target_of(ROW) == 1  # fmt: skip
    assert Prompt(text="{{digits}}", target=0, choices=["x"]).text_of(ROW) == 3
    # but a field's value is never converted, and without choices digits stay text
    assert Prompt(text="digits", target="digits", choices=["x"]).text_of(ROW) == "3"
    assert Prompt(text="{{digits}}", target="{{digits}}").target_of(ROW) == "3"
    # a rendered target that looks like a list is the list; one that fails to parse is text
    assert Prompt(text="", target="{{[1, 2]}}", choices=["x"]).target_of(ROW) == [1, 2]
    assert Prompt(text="", target="[not a list]").target_of(ROW) == "[not a list]"


def test_templates_keep_trailing_newlines_and_refuse_unknown_fields() -> None:
    assert render("Q: {{question}}\n\n", ROW) == "Q: Why?\n\n"
    assert render("{{ question | regex_replace('W', 'w') }}", ROW) == "why?"
    with pytest.raises(ConfigError, match="cannot be rendered"):
        render("{{missing}}", ROW)
    with pytest.raises(ConfigError, match="doc_to_choice"):
        Prompt(text="", target=0, choices="{{question}}").choices_of(ROW)


def test_shots_and_prefix() -> None:
    p = Prompt(text="Q: {{question}}\nA:", target="label", choices="{{choices.text}}",
               description="Head {{answerKey}}\n\n")  # fmt: skip
    shot = p.shot(ROW)
    assert shot == Shot(text="Q: Why?\nA:", answer="b")
    assert p.prefix(ROW, [shot, shot]) == "Head B\n\nQ: Why?\nA: b\n\nQ: Why?\nA: b\n\n"
    assert p.prefix(ROW, []) == "Head B\n\n"
    # a shot without an answer is its text alone (lm-eval's build_qa_turn)
    assert p.prefix(ROW, [Shot(text="T", answer="")]) == "Head B\n\nT"
    # several targets: the first is the shot's answer
    assert Prompt(text="x", target=["one", "two"]).answer_of(ROW) == "one"


def test_a_variable_context_shot_shows_the_gold_context() -> None:
    row = {"sentence": "The cat _ sat.", "option1": "Tom", "option2": "Ann", "answer": "2"}
    p = Prompt(
        text=lambda r: {"1": 0, "2": 1}[r["answer"]],
        target=lambda r: r["sentence"].split("_")[1].strip(),
        choices=lambda r: [r["sentence"].split("_")[0] + o for o in (r["option1"], r["option2"])],
    )
    assert p.text_of(row) == 1 and p.choices_of(row) == ["The cat Tom", "The cat Ann"]
    assert p.shot(row) == Shot(text="The cat Ann", answer="sat.")


def test_protocols_name_functions_without_their_address() -> None:
    assert shown(render) == "sieval.tasks.prompt.render"
    assert shown("{{x}}") == "'{{x}}'"
