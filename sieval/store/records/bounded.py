"""What a record keeps of a text too long to keep whole.

A reply is capped (``max_reply_mib``, 64 MiB by default), but a text under the cap may still be
tens of MiB: a server that ignores ``max_tokens``, or a runaway answer. The sample is scored on
the whole text; its record, written as one JSON line and read by ``sieval samples``, the HTML
report and ``sieval parity``, keeps at most ``STORED_TEXT_CHARS`` characters of each text in its
channels (and in its ``--record-tokens`` evidence): the first three quarters and the last quarter,
around a line naming how many characters were left out, as a refused reply's bytes are kept.
"""

from __future__ import annotations

from typing import Any

__all__ = ["STORED_TEXT_CHARS", "bounded_text", "stored_channels"]

STORED_TEXT_CHARS = 2**20
"""At most this many characters of one text are stored whole (1 Mi characters, about 250k
tokens of English: eight times the longest answer a 32k-token ``max_tokens`` allows, so no
answer a task asks for is cut)."""


def bounded_text(text: str, limit: int = STORED_TEXT_CHARS) -> str:
    """``text``, or its head and tail around a line saying what was left out."""
    if len(text) <= limit:
        return text
    head, tail = limit * 3 // 4, limit // 4
    cut = len(text) - head - tail
    return (
        f"{text[:head]}\n[sieval: {cut:,} of the text's {len(text):,} characters left out "
        f"here]\n{text[-tail:]}"
    )


def stored_channels(channels: Any) -> Any:
    """``channels`` with every text in it (in lists and maps too) bounded by ``bounded_text``;
    the same object when nothing is long (the usual case costs one walk, no copy)."""
    if isinstance(channels, str):
        return bounded_text(channels) if len(channels) > STORED_TEXT_CHARS else channels
    if isinstance(channels, dict):
        out = {k: stored_channels(v) for k, v in channels.items()}
        return channels if all(out[k] is v for k, v in channels.items()) else out
    if isinstance(channels, list | tuple):
        items = [stored_channels(v) for v in channels]
        if all(a is b for a, b in zip(items, channels, strict=True)):
            return channels
        return type(channels)(items)
    return channels
