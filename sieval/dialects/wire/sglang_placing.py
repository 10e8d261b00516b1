"""Placing SGLang's token texts in the text they spell (the prompt, or a choice's text).

Split from ``wire/sglang.py``, which checks each placement. SGLang decodes each token id alone
(notes item 5), so a byte-fallback piece reads U+FFFD or nothing, and a special token may be
listed that the text leaves out.
"""

from __future__ import annotations

import re
from itertools import accumulate

__all__ = ["SPECIAL", "is_piece", "place", "resync", "spelled"]

SPECIAL = re.compile(r"^<[^<>\s]+>$")  # <bos>, <eos>, <end_of_turn>: cover no text


def is_piece(text: str) -> bool:
    """A byte-fallback piece: SGLang decodes each id alone, so part of a UTF-8 sequence reads
    U+FFFD (or nothing)."""
    return text == "" or "\ufffd" in text


def spelled(texts: list[str], target: str) -> list[int] | None:
    """The usual case checked whole: no byte piece, and the texts spell the target exactly (after
    a leading special token it leaves out, the BOS). The offsets ``place`` would find, or None
    when it must walk the texts one by one."""
    lead = 1 if texts and SPECIAL.match(texts[0]) and not target.startswith(texts[0]) else 0
    rest = texts[lead:]
    joined = "".join(rest)
    if joined != target or "\ufffd" in joined or (lead and "\ufffd" in texts[0]):
        return None
    lengths = list(map(len, rest))
    if 0 in lengths:  # an empty piece
        return None
    inner = list(accumulate(lengths, initial=0))
    inner.pop()
    return [0, *inner] if lead else inner


def place(texts: list[str], target: str, specials_anywhere: bool) -> tuple[list[int], int, int]:
    """Walk ``texts`` along ``target``; returns the offsets of the tokens placed, the position
    reached, and the index of the first token that could not be placed (``len(texts)`` when all
    were). A run of byte pieces covers the non-ASCII characters up to where the next token
    continues the target; a special token not spelled out in the target covers no text (in a
    prompt only first: the BOS)."""
    offsets: list[int] = []
    pos = 0
    run: list[int] = []
    for i, t in enumerate(texts):
        if is_piece(t):
            run.append(i)
            offsets.append(pos)
            continue
        if run:
            q = resync(target, pos, t)
            if q is None:
                return offsets[: run[0]], pos, run[0]
            pos, run = q, []
        if target.startswith(t, pos):
            offsets.append(pos)
            pos += len(t)
        elif SPECIAL.match(t) and (i == 0 or specials_anywhere):
            offsets.append(pos)
        else:
            return offsets, pos, i
    if run:
        q = resync(target, pos, None)
        if q is None:
            return offsets[: run[0]], pos, run[0]
        pos = q
    return offsets, pos, len(texts)


def resync(target: str, pos: int, nxt: str | None) -> int | None:
    """Where a run of byte pieces starting at ``pos`` ends: after at least one non-ASCII
    character, at the first place ``nxt`` continues the target (the target's end for None)."""
    q = pos
    while q < len(target) and ord(target[q]) > 127:
        q += 1
        if nxt is not None and target.startswith(nxt, q):
            return q
    if nxt is None and q == len(target) and q > pos:
        return q
    return None
