"""MMLU, each letter " A".." D" scored as a continuation, as lm-evaluation-harness's ``mmlu``
(its default, log-likelihood form; ``mmlu_kshot_clp`` reads the letters' next-token
log-probabilities instead).

Hendrycks et al. 2021, "Measuring Massive Multitask Language Understanding",
https://arxiv.org/abs/2009.03300

One lm-eval task per subject (``mmlu_<subject>``): its description line, the first k dev rows as
shots, the question stripped. Samples interleave the subjects (row 0 of each, then row 1, ...),
so that a small ``n`` spans them all. ``acc`` and its per-category figures are lm-eval's group
aggregates (``weight_by_size``): the mean of each subject's mean weighted by its size, over the
subjects in the order its ``mmlu`` group lists them (stem, other, social sciences, humanities),
with lm-eval's categories (``anatomy`` is STEM).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._mmlu import GROUPS, LM_EVAL, LM_EVAL_GROUPS, SUBJECTS, description
from .base import Sample, SampleResult
from .families import MultipleChoice
from .families.base import pooled_mean
from .prompt import Prompt
from .shots import FIRST_N
from .spec import Data, Spec, SpecTask

TEXT = (
    "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\n"
    "D. {{choices[3]}}\nAnswer:"
)
ORDER = tuple(s for group in LM_EVAL_GROUPS for s in SUBJECTS if LM_EVAL[s] == group)
"""The subjects as lm-eval's ``mmlu`` group reaches them: by category, alphabetical within."""


def aggregate(results: Iterable[tuple[Sample, SampleResult]]) -> dict[str, Any]:
    """lm-eval's figures: ``acc`` over every subject, and over each category's."""
    by_subject: dict[str, list[float]] = {}
    for sample, result in results:
        by_subject.setdefault(sample.group or "", []).append(result.metrics["acc"])
    subjects = [s for s in ORDER if s in by_subject]
    out: dict[str, Any] = {
        "n": sum(len(by_subject[s]) for s in subjects),
        "acc": pooled_mean([by_subject[s] for s in subjects]),
    }
    out["by_category"] = {
        group: {
            "n": sum(len(by_subject[s]) for s in members),
            "acc": pooled_mean([by_subject[s] for s in members]),
        }
        for group in LM_EVAL_GROUPS
        if (members := [s for s in subjects if LM_EVAL[s] == group])
    }
    return out


SPEC = Spec(
    name="mmlu",
    about=__doc__.split("\n\n")[1],
    reference="lm-eval 0.4.13 tasks/mmlu/default (_default_template_yaml, mmlu_<subject>.yaml)",
    data=Data(
        source="mmlu",
        split="test",
        shots="dev",
        sampler=FIRST_N,
        subsets=SUBJECTS,
        subset_option="subjects",
        subset_groups=GROUPS,
    ),
    prompt=Prompt(
        text=TEXT, target="answer", choices=["A", "B", "C", "D"], description=description()
    ),
    family=MultipleChoice(metrics=("acc",)),
    figures=aggregate,
    headline="acc",
    differs=(
        "n takes the subjects' rows in turn (row 0 of each, then row 1, ...), while lm-eval's "
        "--limit takes its first rows of every subject"
    ),
    breakdowns={"by_subject": lambda group: group},
    cluster_by_group=True,
)
TASK = SpecTask(SPEC)
