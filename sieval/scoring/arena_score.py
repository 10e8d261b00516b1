"""Arena-Hard v2.0's score of one model against the baseline, as ``show_result.py`` computes it
without style control (``print_leaderboard``): the battles (``verdicts.battle_scores``) resampled
with replacement 100 times, each round's mean; the score is the mean of the 100 means, the
interval their 5 % and 95 % quantiles (linear interpolation, pandas' default).

The reference draws with pandas' ``groupby("model").sample(frac=1.0, replace=True)``, which
takes numpy's global legacy generator (``np.random``): one ``choice(n, n)`` a round, that is
``randint(0, n, n)``. ``LegacyDraws`` is that generator (MT19937 seeded by ``init_genrand``,
32-bit draws masked to the next power of two and rejected above the bound), so after
``np.random.seed(s)`` the reference and ``bootstrap(..., seed=s)`` resample the same battles
and give the same figures (``tests/tasks/test_arena_hard_parity.py``). Unseeded, the reference
is not reproducible; sieval always seeds (the task's ``seed``).

Style control (``print_leaderboard_with_style_features``: a Bradley–Terry regression with
length and markdown features) needs ``utils/math_utils.py``, which is not stored beside the
data, so it is not computed: no figure here claims it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ROUNDS", "ArenaScore", "LegacyDraws", "bootstrap"]

ROUNDS = 100
"""Bootstrap rounds (``print_leaderboard``)."""


class LegacyDraws:
    """numpy's ``RandomState(seed)`` for the draws the reference makes (``randint(0, n, n)``)."""

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= 0xFFFFFFFF:
            raise ValueError(f"a legacy numpy seed is in [0, 2**32 - 1], got {seed}")
        state = [seed]
        for i in range(1, 624):
            prev = state[-1]
            state.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
        self._mt = random.Random()
        self._mt.setstate((3, (*state, 624), None))  # CPython's generator is the same MT19937

    def integers(self, high: int, size: int) -> list[int]:
        """``size`` draws in ``[0, high)``, as ``RandomState.randint(0, high, size)``."""
        bound = high - 1
        if bound == 0:
            return [0] * size
        mask = (1 << bound.bit_length()) - 1
        out = []
        for _ in range(size):
            value = self._mt.getrandbits(32) & mask
            while value > bound:
                value = self._mt.getrandbits(32) & mask
            out.append(value)
        return out


@dataclass(frozen=True)
class ArenaScore:
    """A score in [0, 1] (the reference prints it as a percentage, to one decimal)."""

    score: float
    lower: float
    upper: float
    battles: int

    def shown(self) -> tuple[float, str]:
        """The score and interval as the reference prints them: ``Scores (%)`` and
        ``CI (%)``."""
        below = round((self.score - self.lower) * 100, 1)
        above = round((self.upper - self.score) * 100, 1)
        return round(self.score * 100, 1), f"(-{below} / +{above})"


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bootstrap(battles: Sequence[float], seed: int, rounds: int = ROUNDS) -> ArenaScore:
    """The score and interval of ``battles`` (each in [0, 1]) over ``rounds`` resamples."""
    if not battles:
        raise ValueError("no battles to score")
    draws = LegacyDraws(seed)
    n = len(battles)
    means = []
    for _ in range(rounds):
        picked = draws.integers(n, n)
        means.append(sum(battles[i] for i in picked) / n)
    return ArenaScore(
        score=sum(means) / rounds,
        lower=_quantile(means, 0.05),
        upper=_quantile(means, 0.95),
        battles=n,
    )
