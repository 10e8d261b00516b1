"""The reference model's tokenizer: word pieces learned from the bundled corpus, byte fallback.

Vocabulary layout (ids are stable for a given corpus):

    0 ``<pad>``   1 ``<eos>``   2 ``<bos>``   3 ``<unk>``
    4..259        byte pieces ``<0x00>`` .. ``<0xFF>`` (byte fallback: ANY text tokenizes)
    260..         the printable ASCII characters and ``\\n``, then the most frequent corpus
                  words (with and without a leading space), then a few ALIAS pieces

Decode-alike pieces exist on purpose, so that vLLM's top-k key collapse (wire reference §7.8)
can be exercised: every ASCII byte piece decodes to the same text as its character piece
(``<0x41>`` and ``A``), byte pieces >= 0x80 decode to U+FFFD alone, and each alias decodes to the
same text as its original (two ids both decode to ``" the"``). The tokenizer never emits an
alias or an ASCII byte piece, but the model gives them mass, so they show up among the top-k.

Tokenization is greedy longest match from the left; a character with no piece falls back to
its UTF-8 bytes. ``decode`` is lossless for any text ``tokenize`` produced.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = ["ALIASES", "BOS_ID", "EOS_ID", "Tokenizer"]

EOS_ID = 1
BOS_ID = 2
_SPECIALS = ("<pad>", "<eos>", "<bos>", "<unk>")
_BYTE_BASE = 4
_N_WORDS = 700
#: Pieces that get a second, distinct id decoding to the same text.
ALIASES: tuple[str, ...] = (" the", " and", " is", ".")
#: Multi-character pieces that are not words (the answer marker of the arithmetic problems).
_EXTRA: tuple[str, ...] = (" ####", "\n\n")
_WORD_RE = re.compile(r"(?:^| )[A-Za-z]+", re.MULTILINE)
_REPLACEMENT = "\ufffd"


class Tokenizer:
    """Word-piece tokenizer with byte fallback; see the module docstring for the layout."""

    def __init__(self, pieces: Sequence[str]) -> None:
        #: ``pieces[i]`` is the surface text of id ``i`` (byte pieces hold their ``<0xNN>`` name).
        self.pieces: list[str] = list(pieces)
        self.vocab_size = len(self.pieces)
        self.special_ids = frozenset(range(len(_SPECIALS)))
        first_alias = self.vocab_size - len(ALIASES)
        self.alias_ids = frozenset(range(first_alias, self.vocab_size))
        # Byte form of each id, for decoding (specials have none).
        self._bytes: list[bytes] = []
        for i, piece in enumerate(self.pieces):
            if i in self.special_ids:
                self._bytes.append(b"")
            elif _BYTE_BASE <= i < _BYTE_BASE + 256:
                self._bytes.append(bytes([i - _BYTE_BASE]))
            else:
                self._bytes.append(piece.encode("utf-8"))
        # The table greedy matching reads: text pieces only (no specials, bytes or aliases).
        self._table: dict[str, int] = {}
        for i in range(_BYTE_BASE + 256, first_alias):
            self._table.setdefault(self.pieces[i], i)
        self._max_len = max(len(p) for p in self._table)
        self._single: list[str] = [self._decode_one(i) for i in range(self.vocab_size)]
        self.tokenize = lru_cache(maxsize=65536)(self._tokenize)

    @classmethod
    def from_corpus(cls, texts: Iterable[str]) -> Tokenizer:
        """Build the vocabulary from corpus texts (deterministic for a given input)."""
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(m.group(0) for m in _WORD_RE.finditer(text))
        chars = [chr(c) for c in range(0x20, 0x7F)] + ["\n"]
        pieces: list[str] = list(_SPECIALS)
        pieces += [f"<0x{b:02X}>" for b in range(256)]
        pieces += chars
        pieces += list(_EXTRA)
        seen = set(chars) | set(_EXTRA)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        for word, _count in ranked:
            if len(pieces) >= len(_SPECIALS) + 256 + len(chars) + len(_EXTRA) + _N_WORDS:
                break
            if len(word) > 1 and word not in seen:
                seen.add(word)
                pieces.append(word)
        for alias in ALIASES:
            if alias not in seen:
                pieces.append(alias)  # pragma: no cover - the corpus always has them
                seen.add(alias)  # pragma: no cover
        pieces += list(ALIASES)
        return cls(pieces)

    # -- encoding -----------------------------------------------------------------------------

    def _tokenize(self, text: str) -> tuple[int, ...]:
        """Token ids of ``text`` without BOS (cached; use :meth:`encode`)."""
        table = self._table
        out: list[int] = []
        i, n, max_len = 0, len(text), self._max_len
        while i < n:
            for length in range(min(max_len, n - i), 0, -1):
                tid = table.get(text[i : i + length])
                if tid is not None:
                    out.append(tid)
                    i += length
                    break
            else:
                out.extend(_BYTE_BASE + b for b in text[i].encode("utf-8"))
                i += 1
        return tuple(out)

    def encode(self, text: str, *, add_bos: bool = True) -> list[int]:
        """Token ids of ``text``; ``add_bos`` prepends ``<bos>`` as Gemma's tokenizer does."""
        ids = list(self.tokenize(text))
        return [BOS_ID, *ids] if add_bos else ids

    # -- decoding -----------------------------------------------------------------------------

    def _decode_one(self, tid: int) -> str:
        if tid in self.special_ids:
            return self.pieces[tid]
        return self._bytes[tid].decode("utf-8", errors="replace")

    def token_text(self, tid: int) -> str:
        """What decoding the single id gives (``<bos>`` for BOS, U+FFFD for a lone high byte)."""
        return self._single[tid]

    def decode(self, ids: Iterable[int], *, skip_special: bool = True) -> str:
        """Text of ``ids``; specials are dropped unless ``skip_special`` is false."""
        parts: list[bytes] = []
        for tid in ids:
            if tid in self.special_ids:
                if not skip_special:
                    parts.append(self.pieces[tid].encode())
                continue
            parts.append(self._bytes[tid])
        return b"".join(parts).decode("utf-8", errors="replace")

    def decode_stable(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` without a trailing incomplete UTF-8 sequence (streaming deltas)."""
        raw = b"".join(self._bytes[t] for t in ids if t not in self.special_ids)
        for cut in range(0, min(4, len(raw)) + 1):
            try:
                return raw[: len(raw) - cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return raw.decode("utf-8", errors="replace")

    def decoded_token(self, tid: int, context: Sequence[int]) -> str:
        """The ``decoded_token`` vLLM reports for ``tid`` after the actual ids ``context``.

        vLLM decodes each id alone; when that ends in U+FFFD (an incomplete byte-fallback
        sequence) it re-decodes with up to 4 preceding actual tokens and keeps only the new
        text, or ``""`` when the sequence is still incomplete (wire reference §7.8).
        """
        text = self._single[tid]
        if not text.endswith(_REPLACEMENT):
            return text
        ctx = list(context[-4:])
        for k in range(1, len(ctx) + 1):
            window = ctx[-k:]
            full = self.decode([*window, tid])
            if full.endswith(_REPLACEMENT):
                continue
            clean_end = len(window)
            for j in range(len(window) - 1, -1, -1):
                if self._single[window[j]].endswith(_REPLACEMENT):
                    clean_end = j
                else:
                    break
            prefix = self.decode(window[:clean_end]) if clean_end > 0 else ""
            if full.startswith(prefix):
                return full[len(prefix) :]
            common = 0
            for a, b in zip(prefix, full, strict=False):
                if a != b:
                    break
                common += 1
            return full[common:]
        return ""
