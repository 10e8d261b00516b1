"""An answer the token budget ended is read as cut on every wire, whatever the wire calls it.

Each wire has its own word (``length``, ``max_output_tokens``, ``max_tokens``, ``MAX_TOKENS``);
``Choice.finish_reason`` keeps the server's, so whatever reads "cut", "truncated" or "censored"
asks ``ended_for_length``. A dialect whose word it did not know would score a cut answer as a
finished one on that wire alone."""

from __future__ import annotations

import pytest

from sieval.dialects.registry import get_dialect, registry
from sieval.ir.response import LENGTH_FINISHES, ended_for_length


@pytest.mark.parametrize("dialect_id", sorted(registry()))
def test_each_wire_s_word_for_a_cut_answer_is_known(dialect_id: str) -> None:
    reply = get_dialect(dialect_id).reply
    words = {
        w
        for w in (reply.clamp and reply.clamp.finish, reply.structured and reply.structured.cut)
        if w
    }
    assert words, f"{dialect_id} declares no word for a cut answer"
    assert words <= LENGTH_FINISHES, words - LENGTH_FINISHES


def test_only_the_budget_s_words_are_a_cut() -> None:
    finished = ["stop", "end_turn", "STOP", "tool_calls", "tool_use", "completed", "stop_sequence"]
    assert all(ended_for_length(w) for w in LENGTH_FINISHES)
    assert not any(ended_for_length(w) for w in [*finished, None, "", "LENGTH", 0])
