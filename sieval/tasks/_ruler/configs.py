"""RULER's task configurations, templates and answer prefixes.

As RULER (NVIDIA/RULER at c3f5e3b, ``scripts/synthetic.yaml``, ``scripts/data/synthetic/
constants.py``, ``scripts/eval/synthetic/constants.py``) declares them. The prompt a generator
fills is the task's template followed by its answer prefix (RULER's ``base`` model template:
``prepare.py`` appends the prefix to every template); the generator cuts the prefix off again
after sizing, so the counted length includes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["FAMILIES", "TASKS", "Family", "RulerTask"]


@dataclass(frozen=True)
class Family:
    """One of RULER's generator scripts: its template, answer prefix, budget and metric."""

    script: str
    template: str
    answer_prefix: str
    tokens_to_generate: int
    metric: Literal["string_match_all", "string_match_part"]

    @property
    def prompt(self) -> str:
        """What RULER's ``prepare.py`` passes as ``--template`` for a base model."""
        return self.template + self.answer_prefix


FAMILIES = {
    "niah": Family(
        script="niah",
        template=(
            "Some special magic {type_needle_v} are hidden within the following text. Make sure "
            "to memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\n"
            "What are all the special magic {type_needle_v} for {query} mentioned in the "
            "provided text?"
        ),
        answer_prefix=" The special magic {type_needle_v} for {query} mentioned in the provided "
        "text are",
        tokens_to_generate=128,
        metric="string_match_all",
    ),
    "variable_tracking": Family(
        script="variable_tracking",
        template=(
            "Memorize and track the chain(s) of variable assignment hidden in the following "
            "text.\n\n{context}\nQuestion: Find all variables that are assigned the value {query} "
            "in the text above."
        ),
        answer_prefix=" Answer: According to the chain(s) of variable assignment in the text "
        "above, {num_v} variables are assigned the value {query}, they are: ",
        tokens_to_generate=30,
        metric="string_match_all",
    ),
    "common_words_extraction": Family(
        script="common_words_extraction",
        template=(
            "Below is a numbered list of words. In these words, some appear more often than "
            "others. Memorize the ones that appear most often.\n{context}\nQuestion: What are the "
            "10 most common words in the above list?"
        ),
        answer_prefix=" Answer: The top 10 words that appear most often in the list are:",
        tokens_to_generate=120,
        metric="string_match_all",
    ),
    "freq_words_extraction": Family(
        script="freq_words_extraction",
        template=(
            "Read the following coded text and track the frequency of each coded word. Find the "
            "three most frequently appeared coded words. {context}\nQuestion: Do not provide any "
            "explanation. Please ignore the dots '....'. What are the three most frequently "
            "appeared words in the above coded text?"
        ),
        answer_prefix=" Answer: According to the coded text above, the three most frequently "
        "appeared words are:",
        tokens_to_generate=50,
        metric="string_match_all",
    ),
}


@dataclass(frozen=True)
class RulerTask:
    """One entry of ``synthetic.yaml``: a family and its arguments."""

    name: str
    family: Family
    type_haystack: Literal["noise", "essay", "needle"] = "essay"
    type_needle_k: Literal["words", "numbers", "uuids"] = "words"
    type_needle_v: Literal["words", "numbers", "uuids"] = "numbers"
    num_needle_k: int = 1
    num_needle_v: int = 1
    num_needle_q: int = 1
    num_chains: int = 1
    num_hops: int = 4
    freq_cw: int = 30
    freq_ucw: int = 3
    num_cw: int = 10
    num_fewshot: int = 1
    alpha: float = 2.0
    coded_wordlen: int = 6


def _niah(name: str, **args: object) -> RulerTask:
    return RulerTask(name=name, family=FAMILIES["niah"], **args)  # type: ignore[arg-type]


TASKS: dict[str, RulerTask] = {
    t.name: t
    for t in (
        _niah("niah_single_1", type_haystack="noise"),
        _niah("niah_single_2", type_haystack="essay"),
        _niah("niah_single_3", type_haystack="essay", type_needle_v="uuids"),
        _niah("niah_multikey_1", type_haystack="essay", num_needle_k=4),
        _niah("niah_multikey_2", type_haystack="needle"),
        _niah(
            "niah_multikey_3", type_haystack="needle", type_needle_k="uuids", type_needle_v="uuids"
        ),
        _niah("niah_multivalue", type_haystack="essay", num_needle_v=4),
        _niah("niah_multiquery", type_haystack="essay", num_needle_q=4),
        RulerTask(name="vt", family=FAMILIES["variable_tracking"], type_haystack="noise"),
        RulerTask(name="cwe", family=FAMILIES["common_words_extraction"]),
        RulerTask(name="fwe", family=FAMILIES["freq_words_extraction"]),
    )
}
"""The eleven tasks of ``synthetic.yaml`` that need no downloaded data (``qa_1``/``qa_2`` read
SQuAD and HotpotQA: not generated here)."""
