"""ARC-Challenge: ``arc_challenge/ARC-Challenge-{train,validation,test}.jsonl``, JSON Lines in
the ``ai2_arc`` schema (1,119 / 299 / 1,172 rows).

lm-eval 0.4.13 ``arc_challenge`` reads ``allenai/ai2_arc`` config ``ARC-Challenge``: ``question``,
``choices.text``, ``choices.label`` and ``answerKey`` (``choices.label.index(answerKey)``).
Rows: ``id, question, choices{text, label}, answerKey``, all strings, as the hub has them.
"""

from __future__ import annotations

from .arc import ArcLoader
from .source import Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="arc_challenge",
    splits=("train", "validation", "test"),
    hub="allenai/ai2_arc",
    hub_name="ARC-Challenge",
    format="JSON Lines, ai2_arc schema: ARC-Challenge-{split}.jsonl",
    fields=("id", "question", "choices", "answerKey"),
)
files = ArcLoader(SOURCE).files
rows = ArcLoader(SOURCE).rows
