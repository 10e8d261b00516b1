"""lm-evaluation-harness's task names, as sieval runs them: ``gsm8k``, ``mmlu_<subject>`` and
its MMLU groups (``mmlu_stem``).

An alias is a task entry written another way: the entry it stands for is what the run, its
records and its identity hold (``--task mmlu_stem`` runs ``mmlu`` with ``subjects: stem``), and
the run says so in one line (``notes``). Only names whose lm-eval task sieval runs the same way
are here; a name that would mean something else is not guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._mmlu import GROUPS, SUBJECTS

__all__ = ["ALIASES", "Alias", "notes"]


@dataclass(frozen=True, kw_only=True)
class Alias:
    name: str
    task: str
    num_fewshot: int | None = None
    """The shots lm-eval's task defaults to, when sieval's differs."""
    options: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""
    """What is the same and what is not, in a clause."""

    @property
    def entry(self) -> str:
        """The entry as the one-line form writes it: ``mmlu:subjects=stem``."""
        parts = [self.task]
        if self.num_fewshot is not None:
            parts.append(f"num_fewshot={self.num_fewshot}")
        parts += [f"{k}={v}" for k, v in self.options.items()]
        return ":".join(parts)

    @property
    def note(self) -> str:
        return f"{self.name} is lm-eval's name; it runs as {self.entry}" + (
            f" ({self.why})" if self.why else ""
        )


def _aliases() -> dict[str, Alias]:
    found = [
        Alias(
            name="gsm8k",
            task="gsm8k_kshot_base_gen",
            num_fewshot=5,
            why="lm-eval's prompt, stop strings, greedy decoding and strict/flexible match; "
            "sieval draws the 5 train shots by seed",
        )
    ]
    same = "lm-eval's prompt, shots and scoring"
    found += [
        Alias(name=f"mmlu_{s}", task="mmlu", options={"subjects": s}, why=same) for s in SUBJECTS
    ]
    found += [
        Alias(name=f"mmlu_{g}", task="mmlu", options={"subjects": g}, why=f"{same}; its group")
        for g in GROUPS
    ]
    return {a.name: a for a in found}


ALIASES: dict[str, Alias] = _aliases()


def notes(names: Iterable[str]) -> list[str]:
    """The line each alias among ``names`` is said with, once each."""
    out: list[str] = []
    for name in names:
        alias = ALIASES.get(name)
        if alias is not None and alias.note not in out:
            out.append(alias.note)
    return out
