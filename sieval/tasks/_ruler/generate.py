"""RULER's samples, generated as its own scripts generate them: same seed, same token counts,
same samples.

Each family follows its RULER script (``niah.py``, ``variable_tracking.py``,
``common_words_extraction.py``, ``freq_words_extraction.py`` at c3f5e3b) draw for draw: one
``random.Random(seed)`` stands for the script's seeded ``random`` module and one
``numpy.random.RandomState(seed)`` for its seeded ``np.random``, and every draw is made in the
script's order, including the draws of the haystack-size search (which depend on the token
counts: hence the same tokenizer gives the same samples). ``count`` is the tokenizer: the number
of tokens of a text without special tokens (RULER's ``tokenizer.tokenize``; in a run, the
server's ``/tokenize``).

A sample's ``length`` is RULER's: the prompt's tokens (its answer prefix included) plus the
family's generation budget, at most ``max_seq_length``.

Where RULER's script would read what is not here, the generator refuses (``ConfigError``)
rather than build a different sample: an essay haystack longer than the 49 stored essays (RULER
goes on into essays not stored), a common-words list longer than wonderwords' (RULER then reads
``english_words.json``, not stored), a size search that never fits (RULER loops forever).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import random
import string
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import ConfigError
from .configs import RulerTask

__all__ = ["Count", "Generated", "Haystacks", "generate"]

Count = Callable[[str], Awaitable[int]]
"""Tokens of a text, special tokens off."""

NOISE = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
NEEDLE = "One of the special magic {type_needle_v} for {key} is: {value}."
DEPTHS = [int(d) for d in np.round(np.linspace(0, 100, num=40, endpoint=True)).astype(int)]
ZETA_2 = math.pi**2 / 6
"""``scipy.special.zeta(2.0)``, the only alpha RULER's ``fwe`` uses (a test holds them equal)."""


@dataclass(frozen=True)
class Generated:
    """One sample as RULER writes it (``input``, ``outputs``, ``length``, ``answer_prefix``)."""

    input: str
    outputs: tuple[str, ...]
    length: int
    answer_prefix: str


@dataclass(frozen=True)
class Haystacks:
    """What the generators read: the essay words and the sentence splitter (Punkt's), and
    wonderwords' noun, adjective and verb lists."""

    essay: Sequence[str]
    sentences: Callable[[str], Sequence[str]]
    nouns: Sequence[str]
    adjectives: Sequence[str]
    verbs: Sequence[str]


async def generate(
    task: RulerTask,
    *,
    seed: int,
    max_seq_length: int,
    num_samples: int,
    count: Count,
    haystacks: Haystacks,
) -> list[Generated]:
    """``num_samples`` samples of ``task`` at ``max_seq_length``, as RULER's script writes them
    with ``--random_seed seed`` and the base model template."""
    family = task.family.script
    args = (task, seed, max_seq_length, num_samples, count, haystacks)
    if family == "niah":
        return await _Niah(*args).run()
    if family == "variable_tracking":
        return await _VariableTracking(*args).run()
    if family == "common_words_extraction":
        return await _CommonWords(*args).run()
    if family == "freq_words_extraction":
        return await _FrequentWords(*args).run()
    raise ValueError(f"no RULER generator for {family!r}")  # pragma: no cover - configs.py


class _Script:
    """What every RULER script shares: its seeded generators, tokenizer and budget."""

    def __init__(
        self,
        task: RulerTask,
        seed: int,
        max_seq_length: int,
        num_samples: int,
        count: Count,
        haystacks: Haystacks,
    ) -> None:
        self.task = task
        self.seed = seed
        self.max_seq_length = max_seq_length
        self.num_samples = num_samples
        self.count = count
        self.haystacks = haystacks
        self.random = random.Random(seed)
        self.np_random = np.random.RandomState(seed)
        self.template = task.family.prompt
        self.tokens_to_generate = task.family.tokens_to_generate

    def refuse(self, why: str) -> ConfigError:
        return ConfigError(
            f"RULER task {self.task.name} at length {self.max_seq_length}: {why}",
            path=f"tasks.{self.task.name}.options.lengths",
            received=self.max_seq_length,
        )

    async def search(self, make: Callable[[int], Awaitable[str]], lower: int, upper: int,
                     spent: int) -> int | None:  # fmt: skip
        """RULER's binary search for the largest size whose prompt and ``spent`` fit."""
        best = None
        while lower <= upper:
            mid = (lower + upper) // 2
            total = await self.count(await make(mid)) + spent
            if total <= self.max_seq_length:
                best, lower = mid, mid + 1
            else:
                upper = mid - 1
        return best

    def split(self, text: str, length: int, outputs: Sequence[str]) -> Generated:
        """The prompt cut at the last occurrence of the answer prefix's first 10 characters."""
        at = text.rfind(self.task.family.answer_prefix[:10])
        return Generated(
            input=text[:at], outputs=tuple(outputs), length=length, answer_prefix=text[at:]
        )


class _Pairs(Sequence[str]):
    """``niah.py``'s word needles, ``sorted(set(adjective-noun for every pair))`` (6.2 million
    strings), indexed without building them all. Sorted, the pairs of one adjective are one
    block (its nouns in order) unless another adjective extends it with a hyphen (``blue`` and
    ``blue-eyed``): such a group's pairs interleave, and only they are built and sorted."""

    def __init__(self, adjectives: Sequence[str], nouns: Sequence[str]) -> None:
        self.nouns = sorted(set(nouns))
        prefixes = sorted({a + "-" for a in adjectives})
        self.blocks: list[tuple[str, list[str] | None]] = []
        i = 0
        while i < len(prefixes):
            j = i + 1
            while j < len(prefixes) and prefixes[j].startswith(prefixes[i]):
                j += 1
            group = prefixes[i:j]
            built = sorted({p + n for p in group for n in self.nouns}) if j - i > 1 else None
            self.blocks.append((prefixes[i], built))
            i = j
        sizes = [len(self.nouns) if b is None else len(b) for _, b in self.blocks]
        self.starts = list(itertools.accumulate(sizes, initial=0))

    def __len__(self) -> int:
        return self.starts[-1]

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not 0 <= index < len(self):
            raise IndexError(index)
        k = bisect.bisect_right(self.starts, index) - 1
        prefix, built = self.blocks[k]
        offset = index - self.starts[k]
        return prefix + self.nouns[offset] if built is None else built[offset]


@functools.cache
def _pairs(adjectives: tuple[str, ...], nouns: tuple[str, ...]) -> _Pairs:
    return _Pairs(adjectives, nouns)


class _Niah(_Script):
    """``niah.py``: needles (key, value) in a noise, essay or needle haystack."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        t = self.task
        self.num_needle_k = max(t.num_needle_k, t.num_needle_q)
        self.words = _pairs(tuple(self.haystacks.adjectives), tuple(self.haystacks.nouns))

    def draw(self, kind: str) -> str:
        if kind == "numbers":
            return str(self.random.randint(10**6, 10**7 - 1))
        if kind == "words":
            return self.random.choice(self.words)
        return str(uuid.UUID(int=self.random.getrandbits(128), version=4))

    def essay_context(self, num_haystack: int, needles: list[str]) -> str:
        essay = self.haystacks.essay
        if num_haystack <= len(essay):
            text = " ".join(essay[:num_haystack])
        else:  # RULER reads on into essays not stored here; such a size is never kept (run())
            repeats = (num_haystack + len(essay) - 1) // len(essay)
            text = " ".join((list(essay) * repeats)[:num_haystack])
        sents = self.haystacks.sentences(text.strip())
        depths = self.random.sample(DEPTHS, len(needles))
        cuts = [0, *sorted(int(len(sents) * (d / 100)) for d in depths), len(sents)]
        parts: list[str] = []
        for i in range(1, len(cuts)):
            parts.append(" ".join(sents[cuts[i - 1] : cuts[i]]))
            if i - 1 < len(needles):
                parts.append(needles[i - 1])
        return " ".join(parts)

    def make(self, num_haystack: int) -> tuple[str, list[str]]:
        t = self.task
        keys: list[str] = []
        values: list[list[str]] = []
        needles: list[str] = []
        for _ in range(self.num_needle_k):
            keys.append(self.draw(t.type_needle_k))
            value: list[str] = []
            for _ in range(t.num_needle_v):
                value.append(self.draw(t.type_needle_v))
                needles.append(
                    NEEDLE.format(type_needle_v=t.type_needle_v, key=keys[-1], value=value[-1])
                )
            values.append(value)
        random.Random(self.seed).shuffle(needles)
        if t.type_haystack == "essay":
            context = self.essay_context(num_haystack, needles)
        else:
            if t.type_haystack == "noise":
                sentences = [NOISE] * num_haystack
            else:
                sentences = []
                for _ in range(num_haystack):
                    key = self.draw(t.type_needle_k)
                    sentences.append(
                        NEEDLE.format(
                            type_needle_v=t.type_needle_v, key=key, value=self.draw(t.type_needle_v)
                        )
                    )
            at = sorted(self.random.sample(range(num_haystack), len(needles)), reverse=True)
            for index, needle in zip(at, needles, strict=False):
                sentences.insert(index, needle)
            context = "\n".join(sentences)
        indices = self.random.sample(range(self.num_needle_k), t.num_needle_q)
        queries = [keys[i] for i in indices]
        answers = [a for i in indices for a in values[i]]
        query = ", ".join(queries[:-1]) + ", and " + queries[-1] if len(queries) > 1 else queries[0]
        template, type_needle_v = self.template, str(t.type_needle_v)
        if t.num_needle_q * t.num_needle_v == 1:
            for before, after in (("Some", "A"), ("are all", "is"), ("are", "is"),
                                  ("answers", "answer")):  # fmt: skip
                template = template.replace(before, after)
            type_needle_v = type_needle_v[:-1]
        return template.format(type_needle_v=type_needle_v, context=context, query=query), answers

    async def run(self) -> list[Generated]:
        t = self.task
        incremental = 500 if t.type_haystack == "essay" else 25
        if t.type_haystack != "essay" and self.max_seq_length < 4096:
            incremental = 5

        async def text_of(size: int) -> str:
            return self.make(size)[0]

        per = await self.count(await text_of(incremental)) / incremental
        upper = max(int((self.max_seq_length / per) * 3), incremental * 2)
        found = await self.search(text_of, incremental, upper, self.tokens_to_generate)
        num_haystack = found if found is not None else incremental
        out = []
        for _ in range(self.num_samples):
            used = num_haystack
            while True:
                text, answers = self.make(used)
                length = await self.count(text) + self.tokens_to_generate
                if length <= self.max_seq_length:
                    break
                if used <= incremental:
                    raise self.refuse(f"even {used} haystack units exceed it")
                used -= incremental
            if t.type_haystack == "essay" and used > len(self.haystacks.essay):
                raise self.refuse(
                    f"the haystack needs {used} essay words; the 49 stored essays hold "
                    f"{len(self.haystacks.essay)} (RULER reads on into essays not stored here)"
                )
            out.append(self.split(text, length, answers))
        return out


class _VariableTracking(_Script):
    """``variable_tracking.py``: chains of ``VAR X = VAR Y`` in noise, after one example."""

    def chains(self, is_icl: bool) -> tuple[list[list[str]], list[list[str]]]:
        t = self.task
        k = 3 if is_icl else 5
        hops = min(10, t.num_hops) if is_icl else t.num_hops

        def name() -> str:
            return "".join(self.random.choices(string.ascii_uppercase, k=k)).upper()

        names = [name() for _ in range((hops + 1) * t.num_chains)]
        while len(set(names)) < t.num_chains * (hops + 1):
            names.append(name())
        all_vars, chains = [], []
        for i in range(0, len(names), hops + 1):
            these = names[i : i + hops + 1]
            all_vars.append(these)
            first = "12345" if is_icl else str(self.np_random.randint(10000, 99999))
            chain = [f"VAR {these[0]} = {first}"]
            chain += [f"VAR {these[j + 1]} = VAR {these[j]} " for j in range(hops)]
            chains.append(chain)
        return all_vars, chains

    def make(self, num_noises: int, is_icl: bool) -> tuple[str, list[str]]:
        t = self.task
        all_vars, chains = self.chains(is_icl)
        value = chains[0][0].split("=")[-1].strip()
        sentences = [NOISE] * num_noises
        for chain in chains:
            at = sorted(self.random.sample(range(len(sentences)), len(chain)))
            for position, j in zip(at, range(len(chain)), strict=False):
                sentences.insert(position + j, chain[j])
        context = "\n".join(sentences).replace(". \n", ".\n")
        text = self.template.format(context=context, query=value, num_v=t.num_hops + 1)
        return text, all_vars[0]

    def randomize(self, example: str) -> str:
        for item in example.strip().split()[-self.task.num_hops - 1 :]:
            new = "".join(self.random.choices(string.ascii_uppercase, k=len(item))).upper()
            example = example.replace(item, new)
        return example.replace("12345", str(self.np_random.randint(10000, 99999)))

    async def example(self) -> str:
        """RULER's in-context example: one sample of at most 500 tokens, 3-letter names."""
        incremental = 5

        async def text_of(size: int) -> str:
            return self.make(size, True)[0]

        per = await self.count(await text_of(incremental)) / incremental
        upper = max(int((500 / per) * 3), incremental * 2)
        saved, self.max_seq_length = self.max_seq_length, 500
        try:
            found = await self.search(text_of, incremental, upper, 0)
            used = found if found is not None else incremental
            while True:
                text, answer = self.make(used, True)
                if await self.count(text) <= 500:
                    break
                if used <= incremental:  # pragma: no cover - 5 noise lines always fit in 500
                    raise self.refuse("RULER's in-context example does not fit in 500 tokens")
                used -= incremental
        finally:
            self.max_seq_length = saved
        return text + " " + " ".join(answer) + "\n"

    async def run(self) -> list[Generated]:
        example = await self.example()
        incremental = 5 if self.max_seq_length < 4096 else 10
        spent = await self.count(example) + self.tokens_to_generate

        async def text_of(size: int) -> str:
            return self.make(size, False)[0]

        per = await self.count(await text_of(incremental)) / incremental
        upper = max(int((self.max_seq_length / per) * 3), incremental * 2)
        found = await self.search(text_of, incremental, upper, spent)
        num_noises = found if found is not None else incremental
        cut_at = self.task.family.template[:20]
        out = []
        for _ in range(self.num_samples):
            used = num_noises
            while True:
                text, answer = self.make(used, False)
                cutoff = text.index(cut_at)
                text = text[:cutoff] + self.randomize(example) + "\n" + text[cutoff:]
                length = await self.count(text) + self.tokens_to_generate
                if length <= self.max_seq_length:
                    break
                if used <= incremental:
                    raise self.refuse(f"even {used} noise lines exceed it")
                used -= incremental
            out.append(self.split(text, length, answer))
        return out


class _CommonWords(_Script):
    """``common_words_extraction.py``: a numbered word list, ten words far more frequent."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        h = self.haystacks
        self.words = sorted({*h.nouns, *h.adjectives, *h.verbs})
        random.Random(self.seed).shuffle(self.words)

    def example(self, num_words: int, common: int, uncommon: int) -> tuple[str, list[str]]:
        if num_words > len(self.words):
            raise self.refuse(
                f"a list of {num_words} distinct words is longer than wonderwords' "
                f"{len(self.words)}; RULER then reads english_words.json, not stored here"
            )
        full = self.random.sample(self.words, num_words)
        frequent, rare = full[: self.task.num_cw], full[self.task.num_cw :]
        listed = frequent * common + rare * uncommon
        random.Random(self.seed).shuffle(listed)
        return " ".join(f"{i + 1}. {word}" for i, word in enumerate(listed)), frequent

    def make(self, num_words: int) -> tuple[str, list[str]]:
        t = self.task
        shots = []
        if self.max_seq_length < 4096:
            for _ in range(t.num_fewshot):
                shots.append(self.example(20, 3, 1))
            context, answer = self.example(num_words, 6, 1)
        else:
            for _ in range(t.num_fewshot):
                shots.append(self.example(40, 10, 3))
            context, answer = self.example(num_words, t.freq_cw, t.freq_ucw)
        shown = [
            self.template.format(num_cw=t.num_cw, context=c, query="")
            + " "
            + " ".join(f"{i + 1}. {word}" for i, word in enumerate(a))
            for c, a in shots
        ]
        text = self.template.format(num_cw=t.num_cw, context=context, query="")
        return "\n".join(shown) + "\n" + text, answer

    async def run(self) -> list[Generated]:
        incremental = 10

        async def text_of(size: int) -> str:
            return self.make(size)[0]

        per = await self.count(await text_of(4096)) / 4096
        upper = max(int(self.max_seq_length // per) * 2, incremental * 2)
        found = await self.search(text_of, incremental, upper, self.tokens_to_generate)
        num_words = found if found is not None else incremental
        out = []
        for _ in range(self.num_samples):
            used = num_words
            while True:
                text, answer = self.make(used)
                length = await self.count(text) + self.tokens_to_generate
                if length <= self.max_seq_length:
                    break
                if used <= incremental:
                    raise self.refuse(f"even {used} distinct words exceed it")
                used -= incremental
            out.append(self.split(text, length, answer))
        return out


class _FrequentWords(_Script):
    """``freq_words_extraction.py``: coded words drawn by a zeta law; the top one is noise."""

    def make(self, num_words: int, vocab_size: int) -> tuple[str, list[str]]:
        t = self.task

        def word() -> str:
            return "".join(self.random.choices(string.ascii_lowercase, k=t.coded_wordlen))

        drawn = [word() for _ in range(vocab_size)]
        while len(set(drawn)) < vocab_size:
            drawn.append(word())
        vocab = sorted(set(drawn))
        random.Random(self.seed).shuffle(vocab)
        vocab[0] = "..."
        self.vocab = vocab
        return self.text(num_words), vocab[1:4]

    def text(self, num_words: int) -> str:
        if self.task.alpha != 2.0:  # pragma: no cover - configs.py has RULER's 2.0 only
            raise ValueError("only RULER's alpha 2.0 is generated (zeta(2) is a constant here)")
        k = np.arange(1, len(self.vocab) + 1)
        counts = (num_words * (k**-self.task.alpha) / ZETA_2).astype(int)
        words = [w for w, n in zip(self.vocab, counts, strict=True) for _ in range(int(n))]
        random.Random(self.seed).shuffle(words)
        return self.template.format(context=" ".join(words), query="")

    async def sized(self, limit: int, vocab_size: int, incremental: int,
                    num_words: int = -1) -> tuple[str, list[str], int]:  # fmt: skip
        text, answer = self.make(max(num_words, 0), vocab_size)
        if num_words > 0:
            while await self.count(text) > limit:
                num_words -= incremental
                text = self.text(num_words)
        else:
            num_words = limit // self.task.coded_wordlen
            text = self.text(num_words)
            while await self.count(text) < limit:
                num_words += incremental
                text = self.text(num_words)
            num_words -= incremental
        return self.text(num_words), answer, num_words

    async def run(self) -> list[Generated]:
        limit = self.max_seq_length - self.tokens_to_generate
        vocab_size = limit // 50
        incremental = limit // 32
        _, _, num_words = await self.sized(limit, vocab_size, incremental)
        out = []
        for _ in range(self.num_samples):
            text, answer, _ = await self.sized(limit, vocab_size, incremental, num_words)
            length = await self.count(text) + self.tokens_to_generate
            out.append(self.split(text, length, answer))
        return out
