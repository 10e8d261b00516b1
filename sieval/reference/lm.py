"""The reference language model: an interpolated trigram model over the bundled corpus.

Small, deterministic and written for sieval (no download). The corpus under ``corpus/*.txt``
(science facts, short stories, arithmetic word problems in the ``#### 42`` style) is split into
documents at blank lines; each document is scored as ``<bos> ... <eos>``.

Estimation is Witten-Bell interpolation, trigram -> bigram -> unigram, where the unigram is
add-1/2 smoothed over the WHOLE vocabulary, so every token (byte pieces and aliases included)
has finite, non-zero probability. Each next-token distribution is a dense list of log-probabilities
normalised so that ``sum(exp(lp)) == 1`` to well within 1e-9. A context is reduced to the longest
suffix seen in training before lookup, so the number of distinct distributions is bounded by the
corpus and they are cached (LRU).

``get_model()`` returns the process-wide instance (built once, on first use, in ~0.2 s).
"""

from __future__ import annotations

import math
import random
import threading
from collections import OrderedDict
from collections.abc import Sequence
from importlib import resources

from .tokenizer import BOS_ID, EOS_ID, Tokenizer

__all__ = ["Distribution", "ReferenceModel", "get_model"]

_CACHE_SIZE = 4096


class Distribution:
    """One next-token distribution: dense log-probabilities plus a lazily sorted order."""

    __slots__ = ("_order", "_rank", "logprobs")

    def __init__(self, logprobs: list[float]) -> None:
        self.logprobs = logprobs
        self._order: list[int] | None = None
        self._rank: list[int] | None = None

    @property
    def order(self) -> list[int]:
        """Token ids from most to least likely (ties broken by the smaller id)."""
        if self._order is None:
            lp = self.logprobs
            self._order = sorted(range(len(lp)), key=lambda i: (-lp[i], i))
        return self._order

    def top(self, k: int) -> list[int]:
        """The ``k`` most likely ids, best first."""
        return self.order[:k]

    def rank(self, tid: int) -> int:
        """1-based rank of ``tid`` (1 = most likely)."""
        if self._rank is None:
            rank = [0] * len(self.logprobs)
            for pos, i in enumerate(self.order):
                rank[i] = pos + 1
            self._rank = rank
        return self._rank[tid]

    def argmax(self) -> int:
        """The greedy token."""
        return self.order[0]


class ReferenceModel:
    """Tokenizer + interpolated trigram model. Thread-safe for reads."""

    def __init__(self, texts: Sequence[str] | None = None) -> None:
        if texts is None:
            texts = _corpus_texts()
        self.tokenizer = Tokenizer.from_corpus(texts)
        self.vocab_size = self.tokenizer.vocab_size
        self.bos_id = BOS_ID
        self.eos_id = EOS_ID
        v = self.vocab_size
        uni = [0.5] * v
        bi: dict[int, dict[int, int]] = {}
        tri: dict[tuple[int, int], dict[int, int]] = {}
        for text in texts:
            for doc in text.split("\n\n"):
                doc = doc.strip()
                if not doc:
                    continue
                seq = [BOS_ID, *self.tokenizer.tokenize(doc), EOS_ID]
                for i in range(1, len(seq)):
                    w = seq[i]
                    uni[w] += 1
                    row = bi.setdefault(seq[i - 1], {})
                    row[w] = row.get(w, 0) + 1
                    if i >= 2:
                        row3 = tri.setdefault((seq[i - 2], seq[i - 1]), {})
                        row3[w] = row3.get(w, 0) + 1
        total = math.fsum(uni)
        self._p1 = [c / total for c in uni]
        self._bi = bi
        self._tri = tri
        self._p2: dict[int, list[float]] = {}
        self._cache: OrderedDict[tuple[int, ...], Distribution] = OrderedDict()
        self._lock = threading.Lock()

    # -- tokenizer passthroughs ---------------------------------------------------------------

    def tokenize(self, text: str, *, add_bos: bool = True) -> list[int]:
        """Token ids of ``text`` with ``<bos>`` prepended (unless ``add_bos`` is false)."""
        return self.tokenizer.encode(text, add_bos=add_bos)

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` with special tokens skipped."""
        return self.tokenizer.decode(ids)

    def token_text(self, tid: int) -> str:
        """Text of one id decoded alone (``<bos>`` for BOS)."""
        return self.tokenizer.token_text(tid)

    # -- probabilities ------------------------------------------------------------------------

    def _bigram(self, v: int) -> list[float]:
        cached = self._p2.get(v)
        if cached is not None:
            return cached
        row = self._bi.get(v)
        if row is None:
            return self._p1
        count = sum(row.values())
        lam = count / (count + len(row))
        p = [x * (1.0 - lam) for x in self._p1]
        for w, c in row.items():
            p[w] += lam * c / count
        self._p2[v] = p
        return p

    def _key(self, context: Sequence[int]) -> tuple[int, ...]:
        if len(context) >= 2 and (context[-2], context[-1]) in self._tri:
            return (context[-2], context[-1])
        if context and context[-1] in self._bi:
            return (context[-1],)
        return ()

    def distribution(self, context: Sequence[int]) -> Distribution:
        """The next-token distribution after ``context`` (cached per effective context)."""
        key = self._key(context)
        with self._lock:
            dist = self._cache.get(key)
            if dist is not None:
                self._cache.move_to_end(key)
                return dist
        if len(key) == 2:
            row = self._tri[(key[0], key[1])]
            count = sum(row.values())
            lam = count / (count + len(row))
            p = [x * (1.0 - lam) for x in self._bigram(key[1])]
            for w, c in row.items():
                p[w] += lam * c / count
        elif len(key) == 1:
            p = self._bigram(key[0])
        else:
            p = self._p1
        log_total = math.log(math.fsum(p))
        dist = Distribution([math.log(x) - log_total for x in p])
        with self._lock:
            self._cache[key] = dist
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return dist

    def logprobs_next(self, context_ids: Sequence[int]) -> list[float]:
        """Dense log-softmax over the whole vocabulary for the token after ``context_ids``."""
        return self.distribution(context_ids).logprobs

    def score(self, ids: Sequence[int]) -> list[float | None]:
        """Log-probability of each id given the ids before it (``None`` for the first)."""
        out: list[float | None] = [None]
        for i in range(1, len(ids)):
            out.append(self.distribution(ids[:i]).logprobs[ids[i]])
        return out

    def continuation_logprob(self, context_text: str, continuation_text: str) -> float:
        """Sum of log-probabilities of the continuation's tokens after the context.

        Both are tokenized together (with BOS), as a server scoring ``context + continuation``
        with echo does; the context's tokens must be a prefix of the whole's.
        """
        ctx = self.tokenize(context_text)
        full = self.tokenize(context_text + continuation_text)
        if full[: len(ctx)] != ctx:
            raise ValueError("the context's tokens are not a prefix of context + continuation")
        return math.fsum(
            self.distribution(full[:i]).logprobs[full[i]] for i in range(len(ctx), len(full))
        )

    def greedy(self, prompt_ids: Sequence[int], max_tokens: int) -> list[int]:
        """Greedy continuation (stops after EOS)."""
        ids = list(prompt_ids)
        out: list[int] = []
        for _ in range(max_tokens):
            tid = self.distribution(ids).argmax()
            out.append(tid)
            ids.append(tid)
            if tid == EOS_ID:
                break
        return out

    def sample_token(self, logits: Sequence[float], rng: random.Random) -> int:
        """Draw one id from (already processed) log-weights ``logits`` (-inf = excluded)."""
        top = max(logits)
        weights = [math.exp(x - top) if x != -math.inf else 0.0 for x in logits]
        return rng.choices(range(len(weights)), weights=weights, k=1)[0]


def _corpus_texts() -> list[str]:
    folder = resources.files("sieval.reference") / "corpus"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".txt"))
    return [(folder / name).read_text(encoding="utf-8") for name in names]


_MODEL: ReferenceModel | None = None
_MODEL_LOCK = threading.Lock()


def get_model() -> ReferenceModel:
    """The process-wide reference model, built on first use."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            _MODEL = ReferenceModel()
        return _MODEL
