"""BIG-Bench Hard, 3-shot chain of thought, as lm-evaluation-harness's ``bbh_cot_fewshot``.

Suzgun et al. 2022, "Challenging BIG-Bench Tasks and Whether Chain-of-Thought Can Solve Them",
https://arxiv.org/abs/2210.09261

Each of the 27 subtasks is a group: its prompt is the authors' 3-shot chain-of-thought prompt
(``bbh/cot-prompts/<subtask>.txt``, after its canary lines: the task description, then three
``Q: … A: Let's think step by step. …`` exemplars), a blank line, then ``Q: <input>\\nA: Let's
think step by step.``. The answer is generated greedily (max_tokens 1024) and stops at ``</s>``,
``Q`` or a blank line on a raw-text prompt (lm-eval's ``until``; a chat answer ends at its end of
turn). ``exact_match``: lm-eval's ``get-answer`` filter (the first ``the answer is …``, its last
character dropped, ``scoring/bbh.py``), equal to the target. Reported per subtask
(``by_subtask``) and over all samples (lm-eval's group weights each subtask by its size).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from ..data.bbh import SUBTASKS, cot_prompt, cot_prompt_file
from ..scoring.bbh import score_bbh
from .base import Sample
from .families import Checked, Verdict
from .prompt import Prompt
from .spec import Data, Spec, SpecTask


@lru_cache(maxsize=64)
def _prompt(data_dir: str, subtask: str) -> str:
    return cot_prompt(Path(data_dir), subtask).rstrip("\n")


def with_prompt(row: dict[str, Any], where: str) -> dict[str, Any]:
    """The row and its subtask's 3-shot prompt (``where`` is ``<dir>/bbh/bbh/<subtask>.json#row
    N``, so the data directory and the subtask are read from it)."""
    path = Path(where.split("#", 1)[0])
    return {**row, "cot_prompt": _prompt(str(path.parents[2]), path.stem)}


def check(text: str, sample: Sample) -> Verdict:
    verdict = score_bbh(text, sample.gold)
    return Verdict(
        metrics={"exact_match": float(verdict.correct)},
        extracted=verdict.extracted,
        rule=verdict.rule,
    )


SPEC = Spec(
    name="bbh",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/bbh/cot_fewshot (_cot_fewshot_template_yaml)",
    data=Data(source="bbh", split="test", subsets=SUBTASKS, process=with_prompt),
    prompt=Prompt(
        text="Q: {{input}}\nA: Let's think step by step.",
        target="target",
        description="{{cot_prompt}}\n\n",
    ),
    family=Checked(
        check=check,
        gold=lambda row: row["target"],
        headline="exact_match",
        input="completion",
        max_tokens=1024,
        stop=("</s>", "Q", "\n\n"),
        protocol_text=(
            "bbh_cot_fewshot (lm-eval 0.4.13): the subtask's 3-shot CoT prompt file, then "
            "'Q: <input>\\nA: Let's think step by step.'; greedy, max_tokens 1024; exact_match of "
            "the first 'the answer is …' (lm-eval's get-answer regex) to the target"
        ),
    ),
    headline="exact_match",
    fixed_shots=3,
    differs=(
        "the shots are the authors' prompt files as stored, not lm-eval's YAML copies of them"
    ),
    breakdowns={"by_subtask": lambda group: group},
    files=lambda data_dir: [cot_prompt_file(data_dir, s) for s in SUBTASKS],
)
TASK = SpecTask(SPEC)
