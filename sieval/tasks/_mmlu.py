"""MMLU's 57 subjects and the two ways they are grouped.

``ORIGINAL`` is the original release's four categories (``categories.py`` in hendrycks/test),
which sieval's first MMLU tasks report; ``LM_EVAL`` is lm-evaluation-harness 0.4.13's
(``tasks/mmlu/_generate_configs.py``), which files ``anatomy`` under STEM, in the order its
``mmlu`` group lists them (stem, other, social sciences, humanities).
"""

from __future__ import annotations

from ..data.mmlu import CATEGORIES
from ..data.mmlu import SUBJECTS as _ORIGINAL

__all__ = [
    "CATEGORIES",
    "GROUPS",
    "LM_EVAL",
    "LM_EVAL_GROUPS",
    "ORIGINAL",
    "SUBJECTS",
    "description",
]

ORIGINAL: dict[str, str] = dict(_ORIGINAL)
"""The original release's category of each subject (``sieval.data.mmlu.SUBJECTS``)."""

SUBJECTS = tuple(sorted(ORIGINAL))

LM_EVAL_GROUPS = ("stem", "other", "social_sciences", "humanities")
_LM_EVAL_NAME = dict(
    zip(CATEGORIES, ("stem", "humanities", "social_sciences", "other"), strict=True)
)
LM_EVAL: dict[str, str] = {
    s: "stem" if s == "anatomy" else _LM_EVAL_NAME[c] for s, c in ORIGINAL.items()
}

GROUPS: dict[str, tuple[str, ...]] = {
    group: tuple(s for s in SUBJECTS if LM_EVAL[s] == group) for group in LM_EVAL_GROUPS
}
"""lm-eval's groups (``mmlu_stem`` ...) as the subjects each holds: what the ``subjects`` option
takes beside a subject's name."""


def description(template: str = "") -> str:
    """The subject line lm-eval's ``mmlu`` puts before every prompt (its ``description``)."""
    return (
        "The following are multiple choice questions (with answers) about "
        "{{subject.replace('_', ' ')}}.\n\n" + template
    )
