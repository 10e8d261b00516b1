"""How shots are drawn for each scored row: lm-evaluation-harness 0.4.13's samplers, and the one
draw for all rows that sieval's first tasks made.

- ``RANDOM`` is lm-eval's ``default`` sampler (``lm_eval/api/samplers.py``): one
  ``random.Random(seed)`` per task (per subset: each MMLU subject is its own lm-eval task), and for
  each row, in the split's order, ``rnd.sample(pool, k)``, so each row has its own shots and a
  row's shots depend on the rows before it. With ``exclude_item`` (lm-eval passes the row as
  ``eval_doc`` when the task's ``fewshot_split`` equals its ``test_split``, which is also the case
  when both are unset) it draws ``k + 1`` and drops the shots equal to the row, keeping ``k``; if
  fewer than ``k`` remain, it draws ``k`` again from the pool without the row.
- ``FIRST_N`` is lm-eval's ``first_n``: the pool's first ``k`` (MMLU's dev rows), without rows
  equal to the row scored when ``exclude_item``.
- ``SHARED`` is one ``random.Random(seed).sample(pool, k)`` for every row (sieval's
  ``*_kshot_*`` tasks).

A sampler returns, per row, the positions in the pool of its shots, in order.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ConfigError

__all__ = ["FIRST_N", "RANDOM", "SHARED", "Sampler", "too_few"]

Row = Mapping[str, Any]


class Sampler(Protocol):
    @property
    def name(self) -> str: ...

    def draw(
        self, pool: Sequence[Row], rows: Sequence[Row], k: int, seed: int, task: str
    ) -> Iterator[list[int]]:
        """For each of ``rows`` in order, the pool positions of its ``k`` shots."""
        ...


def too_few(task: str, k: int, available: int, where: str = "the shot pool") -> ConfigError:
    return ConfigError(
        f"task {task}: num_fewshot={k} but {where} holds only {available} items",
        path=f"tasks.{task}.num_fewshot",
        received=k,
    )


@dataclass(frozen=True)
class _Random:
    exclude_item: bool = False
    name: str = "random"

    def draw(
        self, pool: Sequence[Row], rows: Sequence[Row], k: int, seed: int, task: str
    ) -> Iterator[list[int]]:
        if k > len(pool) - (1 if self.exclude_item else 0):
            raise too_few(task, k, len(pool))
        rnd = random.Random(seed)
        positions = range(len(pool))
        for row in rows:
            if not self.exclude_item:
                yield rnd.sample(positions, k)
                continue
            picked = [j for j in rnd.sample(positions, k + 1) if pool[j] != row][:k]
            if len(picked) < k:  # the pool holds copies of the row
                picked = rnd.sample([j for j in positions if pool[j] != row], k)
            yield picked


@dataclass(frozen=True)
class _FirstN:
    exclude_item: bool = False
    name: str = "first_n"

    def draw(
        self, pool: Sequence[Row], rows: Sequence[Row], k: int, seed: int, task: str
    ) -> Iterator[list[int]]:
        for row in rows:
            kept = [j for j in range(len(pool)) if not self.exclude_item or pool[j] != row]
            if k > len(kept):
                raise too_few(task, k, len(kept))
            yield kept[:k]


@dataclass(frozen=True)
class _Shared:
    name: str = "shared"

    def draw(
        self, pool: Sequence[Row], rows: Sequence[Row], k: int, seed: int, task: str
    ) -> Iterator[list[int]]:
        if k > len(pool):
            raise too_few(task, k, len(pool))
        common = random.Random(seed).sample(range(len(pool)), k)
        for _ in rows:
            yield common


RANDOM: Sampler = _Random()
RANDOM_EXCLUDING_ITEM: Sampler = _Random(exclude_item=True)
FIRST_N: Sampler = _FirstN()
SHARED: Sampler = _Shared()
