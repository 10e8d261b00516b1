"""A judge's verdict read from its reply, as the reference implementations read it.

**MT-Bench's rating** (FastChat ``fastchat/llm_judge/common.py``, ``run_judge_single``): the
*first* ``[[number]]`` in the reply (``re.search`` of ``\\[\\[(\\d+\\.?\\d*)\\]\\]``); when there is
none, the first ``[number]`` (the backup pattern ``\\[(\\d+\\.?\\d*)\\]``); the number read as a
Python literal (``7`` an int, ``7.5`` and ``7.`` floats). No match is no rating (FastChat's -1,
left out of every average): here ``None``, a ``judge_parse_error``. The range is not checked
(FastChat keeps ``[[11]]``), nor is a second verdict (the first wins).

**Arena-Hard's verdict** (arena-hard-auto ``gen_judgment.py``, ``get_score``): the reply
upper-cased, each pattern of the config in turn (``\\[\\[([AB<>=]+)\\]\\]``, then
``\\[([AB<>=]+)\\]``); the first pattern with a non-empty match gives its *last* match. A label
the score table lacks (``A>>>B``, ``AB``) is still a verdict to ``get_score``; ``show_result``
then fails on it (a ``KeyError``), so here it is a parse error too: only the ten labels of
``LABEL_SCORES`` are verdicts.

**Arena-Hard's battle scores** (``show_result.py``, ``load_judgments``, weight 3): game 1 puts
the baseline as A, game 2 the evaluated model as A; game 2's label scores the model as is, game
1's from the other side (``1 - s``), a "significantly" label counting three times.
"""

from __future__ import annotations

import re

__all__ = [
    "ARENA_PATTERNS",
    "LABEL_SCORES",
    "arena_verdict",
    "battle_scores",
    "mt_bench_rating",
]

_ONE_SCORE = re.compile(r"\[\[(\d+\.?\d*)\]\]")
_ONE_SCORE_BACKUP = re.compile(r"\[(\d+\.?\d*)\]")
ARENA_PATTERNS = (r"\[\[([AB<>=]+)\]\]", r"\[([AB<>=]+)\]")
"""The verdict patterns of ``arena-hard-v2.0.yaml`` (``regex_patterns``), tried in order."""
WEIGHT = 3
"""How many battles a "significantly better" verdict counts for (``load_judgments``)."""
LABEL_SCORES: dict[str, tuple[float, ...]] = {
    "A>B": (1.0,), "A>>B": (1.0,) * WEIGHT, "A=B": (0.5,), "A<<B": (0.0,) * WEIGHT,
    "A<B": (0.0,), "B>A": (0.0,), "B>>A": (0.0,) * WEIGHT, "B=A": (0.5,),
    "B<<A": (1.0,) * WEIGHT, "B<A": (1.0,),
}  # fmt: skip
"""Each label's battles for assistant A (``label_to_score``)."""


def mt_bench_rating(reply: str) -> float | None:
    """The rating of an MT-Bench single-answer judgment, or None (a parse error)."""
    match = _ONE_SCORE.search(reply) or _ONE_SCORE_BACKUP.search(reply)
    if match is None:
        return None
    text = match.group(1)
    return float(text) if "." in text else float(int(text))


def arena_verdict(reply: str) -> str | None:
    """The label of an Arena-Hard judgment (``A>B``...), or None (a parse error)."""
    upper = reply.upper()
    for pattern in ARENA_PATTERNS:
        matches = [m for m in re.findall(pattern, upper) if m != ""]
        if matches:
            label = matches[-1].strip("\n")
            return label if label in LABEL_SCORES else None
    return None


def battle_scores(baseline_first: str, model_first: str) -> list[float]:
    """The evaluated model's battles from both games' labels: game 2's (``model_first``, the
    model as A) as they are, then game 1's (the baseline as A) from the model's side."""
    return [*LABEL_SCORES[model_first], *(1 - s for s in LABEL_SCORES[baseline_first])]
