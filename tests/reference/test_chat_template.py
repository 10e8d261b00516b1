"""The reference chat template writes the live Gemma's turn format."""

from __future__ import annotations

from sieval.reference.chat_template import render_messages


def test_system_text_goes_before_the_next_user_turn_and_assistant_is_model() -> None:
    prompt = render_messages(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": " 2+2? "}]},
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "and 3+3?"},
        ]
    )
    assert prompt == (
        "<start_of_turn>user\nBe brief.\n\n2+2?<end_of_turn>\n"
        "<start_of_turn>model\n4<end_of_turn>\n"
        "<start_of_turn>user\nand 3+3?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_without_a_generation_prompt_the_last_turn_is_closed() -> None:
    prompt = render_messages([{"role": "tool", "content": "42"}], add_generation_prompt=False)
    assert prompt == "<start_of_turn>tool\n42<end_of_turn>\n"
