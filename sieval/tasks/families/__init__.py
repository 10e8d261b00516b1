"""The task families: what is common to every task of one kind (its requests, its metrics),
written once. A spec (``tasks/spec.py``) names one family with its options."""

from .base import Family, Prepared
from .checked import Checked, Verdict
from .choice import MultipleChoice
from .generated import Generated
from .generation import Answer, Generation
from .letter import ChoiceLetter
from .rolling import RollingLogLikelihood
from .target import TargetLogLikelihood

__all__ = [
    "Answer",
    "Checked",
    "ChoiceLetter",
    "Family",
    "Generated",
    "Generation",
    "MultipleChoice",
    "Prepared",
    "RollingLogLikelihood",
    "TargetLogLikelihood",
    "Verdict",
]
