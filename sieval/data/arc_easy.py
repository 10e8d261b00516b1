"""ARC-Easy: ``arc_easy/ARC-Easy-{train,validation,test}.jsonl``, JSON Lines in the ``ai2_arc``
schema (2,251 / 570 / 2,376 rows).

lm-eval 0.4.13 ``arc_easy`` reads ``allenai/ai2_arc`` config ``ARC-Easy``: ``question``,
``choices.text``, ``choices.label`` and ``answerKey`` (``choices.label.index(answerKey)``).
Rows: ``id, question, choices{text, label}, answerKey``, all strings, as the hub has them.
"""

from __future__ import annotations

from .arc import ArcLoader
from .source import Source

__all__ = ["SOURCE", "files", "rows"]

SOURCE = Source(
    folder="arc_easy",
    splits=("train", "validation", "test"),
    hub="allenai/ai2_arc",
    hub_name="ARC-Easy",
    format="JSON Lines, ai2_arc schema: ARC-Easy-{split}.jsonl",
    fields=("id", "question", "choices", "answerKey"),
)
files = ArcLoader(SOURCE).files
rows = ArcLoader(SOURCE).rows
