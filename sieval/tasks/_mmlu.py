"""MMLU's 57 subjects and the two ways they are grouped.

``ORIGINAL`` is the original release's four categories (``categories.py`` in hendrycks/test),
which sieval's first MMLU tasks report; ``LM_EVAL`` is lm-evaluation-harness 0.4.13's
(``tasks/mmlu/_generate_configs.py``), which files ``anatomy`` under STEM, in the order its
``mmlu`` group lists them (stem, other, social sciences, humanities).
"""

from __future__ import annotations

__all__ = ["CATEGORIES", "LM_EVAL", "LM_EVAL_GROUPS", "ORIGINAL", "SUBJECTS", "description"]

CATEGORIES = ("STEM", "humanities", "social sciences", "other")

_S, _H, _SS, _O = CATEGORIES
ORIGINAL: dict[str, str] = {
    "abstract_algebra": _S, "anatomy": _O, "astronomy": _S, "business_ethics": _O,
    "clinical_knowledge": _O, "college_biology": _S, "college_chemistry": _S,
    "college_computer_science": _S, "college_mathematics": _S, "college_medicine": _O,
    "college_physics": _S, "computer_security": _S, "conceptual_physics": _S,
    "econometrics": _SS, "electrical_engineering": _S, "elementary_mathematics": _S,
    "formal_logic": _H, "global_facts": _O, "high_school_biology": _S,
    "high_school_chemistry": _S, "high_school_computer_science": _S,
    "high_school_european_history": _H, "high_school_geography": _SS,
    "high_school_government_and_politics": _SS, "high_school_macroeconomics": _SS,
    "high_school_mathematics": _S, "high_school_microeconomics": _SS, "high_school_physics": _S,
    "high_school_psychology": _SS, "high_school_statistics": _S, "high_school_us_history": _H,
    "high_school_world_history": _H, "human_aging": _O, "human_sexuality": _SS,
    "international_law": _H, "jurisprudence": _H, "logical_fallacies": _H,
    "machine_learning": _S, "management": _O, "marketing": _O, "medical_genetics": _O,
    "miscellaneous": _O, "moral_disputes": _H, "moral_scenarios": _H, "nutrition": _O,
    "philosophy": _H, "prehistory": _H, "professional_accounting": _O, "professional_law": _H,
    "professional_medicine": _O, "professional_psychology": _SS, "public_relations": _SS,
    "security_studies": _SS, "sociology": _SS, "us_foreign_policy": _SS, "virology": _O,
    "world_religions": _H,
}  # fmt: skip

SUBJECTS = tuple(sorted(ORIGINAL))

LM_EVAL_GROUPS = ("stem", "other", "social_sciences", "humanities")
LM_EVAL: dict[str, str] = {
    s: "stem" if s == "anatomy" else {_S: "stem", _H: "humanities", _SS: "social_sciences", _O: "other"}[c]
    for s, c in ORIGINAL.items()
}


def description(template: str = "") -> str:
    """The subject line lm-eval's ``mmlu`` puts before every prompt (its ``description``)."""
    return (
        "The following are multiple choice questions (with answers) about "
        "{{subject.replace('_', ' ')}}.\n\n" + template
    )
