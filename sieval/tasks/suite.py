"""A suite: tasks run together by one name (``--task base_suite``), as data.

A module of ``sieval.tasks`` that defines ``SUITE`` adds one; the registry finds it. In a config,
a suite's entry stands for its tasks, each with the suite's ``n`` and ``seed`` and the shots and
options the suite gives it: ``tasks: [{name: base_suite, n: 100}]``. The run, its records and its
identity hold the tasks, not the suite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..errors import ConfigError
from .base import TaskConfig

__all__ = ["Member", "Suite", "expand"]


@dataclass(frozen=True, kw_only=True)
class Member:
    name: str
    num_fewshot: int | None = None
    """None: the task's default."""
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Suite:
    name: str
    about: str
    """What the suite is and whose it is, in a line."""
    tasks: tuple[Member, ...]


def expand(
    entries: Iterable[TaskConfig], suites: Mapping[str, Suite], where: str
) -> list[TaskConfig]:
    """The config's task entries with each suite's entry replaced by its tasks, and each of
    lm-eval's names (``aliases.py``) by the entry it stands for; two MMLU groups or subjects
    become one ``mmlu`` entry with both."""
    from .aliases import ALIASES

    out: list[TaskConfig] = []
    for entry in entries:
        alias = ALIASES.get(entry.name)
        if alias is not None:
            entry = msgspec.structs.replace(
                entry,
                name=alias.task,
                num_fewshot=entry.num_fewshot
                if entry.num_fewshot is not None
                else alias.num_fewshot,
                options={**alias.options, **entry.options},
            )
            if _merged(out, entry):
                continue
        suite = suites.get(entry.name)
        if suite is None:
            out.append(entry)
            continue
        if entry.num_fewshot is not None or entry.options:
            raise ConfigError(
                f"{where}: suite {entry.name!r} takes n and seed only; to change a task's shots "
                f"or options, list the task itself (its tasks: "
                f"{', '.join(m.name for m in suite.tasks)})",
                path="tasks",
                received=entry.name,
            )
        out += [
            TaskConfig(
                name=member.name,
                n=entry.n,
                num_fewshot=member.num_fewshot,
                seed=entry.seed,
                options=dict(member.options),
                samples=entry.samples,
            )
            for member in suite.tasks
        ]
    return out


def _merged(out: list[TaskConfig], entry: TaskConfig) -> bool:
    """Fold ``entry`` into an earlier entry of its task that differs only in ``subjects`` (the
    two chosen together: ``--task mmlu_stem,mmlu_humanities``)."""
    for i, before in enumerate(out):
        if before.name != entry.name or "subjects" not in before.options:
            continue
        mine = {k: v for k, v in entry.options.items() if k != "subjects"}
        theirs = {k: v for k, v in before.options.items() if k != "subjects"}
        if msgspec.structs.replace(before, options=theirs) != msgspec.structs.replace(
            entry, options=mine
        ):
            continue
        both = f"{before.options['subjects']}+{entry.options.get('subjects', 'all')}"
        out[i] = msgspec.structs.replace(before, options={**theirs, "subjects": both})
        return True
    return False
