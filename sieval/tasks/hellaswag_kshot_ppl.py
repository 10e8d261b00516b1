"""HellaSwag, k-shot, scored by the log-likelihood of each ending (sieval's first HellaSwag).

Zellers et al. 2019, "HellaSwag: Can a Machine Really Finish Your Sentence?",
https://arxiv.org/abs/1905.07830

The query and endings are lm-evaluation-harness's (``hellaswag`` here is that task):
``preprocess({activity_label}: {ctx_a} {ctx_b.capitalize()})`` and ``preprocess(ending)``, each
ending scored as ``" {ending}"``. Read from the derived local text (``ctx_b`` unknown there,
the file already cleaned by its maker's rules), the first letter of the context's last sentence
fragment is upper-cased instead, an approximation of ``ctx_b.capitalize()``. Shots (default 10)
come from validation (no train split is stored), never the item scored: k+1 items are drawn
once and each sample takes the first k that are not itself. An ending that cleans to
nothing is refused (acc_norm divides by its length).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .families import MultipleChoice
from .prompt import Prompt
from .shots import too_few
from .spec import Data, Spec, SpecTask

_SENTENCE_END = re.compile(r"[.!?] ")


def preprocess(text: str) -> str:
    """lm-eval's clean-up: strip, `` [title]`` to ``. ``, drop ``[...]``, squash double spaces."""
    text = text.strip().replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


def _capitalize_last_fragment(ctx: str) -> str:
    starts = [m.end() for m in _SENTENCE_END.finditer(ctx)]
    at = starts[-1] if starts else 0
    return ctx[:at] + ctx[at : at + 1].upper() + ctx[at + 1 :]


def derived(where: str) -> bool:
    """Whether a row was read from the derived text (its ``ctx_b`` is unknown)."""
    return ".txt.bz2:" in where


def query(row: Mapping[str, Any], where: str = "") -> str:
    """The cleaned query of one row (no trailing space; endings start with one)."""
    if derived(where):
        ctx = _capitalize_last_fragment(row["ctx_a"])
    else:
        ctx = row["ctx_a"] + " " + row["ctx_b"].capitalize()
    return preprocess(f"{row['activity_label']}: {ctx}")


def _process(row: dict[str, Any], where: str) -> dict[str, Any]:
    endings = [preprocess(e) for e in row["endings"]]
    for i, ending in enumerate(endings):
        if not ending:
            raise ConfigError(
                f"{where}: ending {i} ({row['endings'][i]!r}) is empty after lm-eval's "
                "preprocess, so acc_norm cannot divide by its length; fix or remove the item",
                path=where,
            )
    return {**row, "query": query(row, where), "choices": endings, "gold": int(row["label"])}


@dataclass(frozen=True)
class _OneSpare:
    """k+1 rows of the scored split drawn once; each row takes the first k that are not itself."""

    name: str = "shared, validation minus the item"

    def draw(
        self,
        pool: Sequence[Mapping[str, Any]],
        rows: Sequence[Mapping[str, Any]],
        k: int,
        seed: int,
        task: str,
    ) -> Iterator[list[int]]:
        if k + 1 > len(pool):
            raise too_few(task, k + 1, len(pool))
        picked = random.Random(seed).sample(range(len(pool)), k + 1)
        for i in range(len(rows)):
            yield [j for j in picked if j != i][:k]


SPEC = Spec(
    name="hellaswag_kshot_ppl",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/hellaswag (query and endings); shots sieval's",
    data=Data(
        source="hellaswag",
        split="validation",
        shots="validation",
        sampler=_OneSpare(),
        process=_process,
    ),
    prompt=Prompt(text="{{query}}", target="gold", choices="choices"),
    family=MultipleChoice(),
    headline="acc_norm",
    num_fewshot=10,
    protocol=(
        "loglikelihood of ' {ending}' after k seeded shots (train, else validation minus the "
        "item) + lm-eval's preprocessed query via input scoring; acc = argmax sum, "
        "acc_norm = argmax sum/len(ending), characters of the preprocessed ending without its "
        "leading space (lm-eval); ties -> lowest index"
    ),
)
TASK = SpecTask(SPEC)
